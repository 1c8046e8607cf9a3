#pragma once
/*! \file
 * \brief Filter files (one format for every filter type): writers, read-only mapped access, header
 * reads. The on-disk layout is specified in docs/file_format.md; docs/design.md (Filter files) says
 * how files are written, checked and mapped.
 */
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <ksieve/filters/common/filter.hpp>
#include <ksieve/filters/common/labels.hpp>

namespace ksieve
{

/*! \brief Highest readable format version; written for filters of spaced k-mers. */
inline constexpr std::uint32_t filter_format_version = 6;
inline constexpr std::uint32_t labeled_format_version = 5;  //!< labeled (labels.hpp), unspaced
inline constexpr std::uint32_t masked_format_version = 4;   //!< unlabeled, low-complexity mask
inline constexpr std::uint32_t unmasked_format_version = 3; //!< the rest (ksieve 0.2 reads it)
/*! \brief Mask scheme ids stored in the file (never renumber). */
inline constexpr std::uint32_t mask_none = 0;
inline constexpr std::uint32_t mask_dust = 1;

/*! \brief Sampling scheme ids stored in the file (never renumber). */
inline constexpr std::uint32_t sampling_none = 0;
inline constexpr std::uint32_t sampling_minimizer = 1;
/*! \brief Largest minimizer window accepted. */
inline constexpr std::uint32_t max_sampling_window = 1024;

/*! \brief Everything in a filter file except the payloads. */
struct filter_file_header
{
    filter_type type{filter_type::quotient};
    kmer_params kmer{};
    double fpr{0};
    std::uint64_t expected{0};
    unsigned shard_bits{0};
    std::vector<std::uint64_t> params; //!< type-level parameters
    key_parts parts{};                 //!< parts of the key space held (version 1 files: whole)
    std::shared_ptr<label_table const> labels;    //!< label table (version 5 on), null if none
    std::uint32_t version{filter_format_version}; //!< format version read (ignored by the writer)
};

/*! \brief One shard as stored: its parameters and payload words. */
struct shard_blob
{
    std::vector<std::uint64_t> params;
    std::span<std::uint64_t const> words;
};

/*! \brief Write a filter file to `path` as it is ("-": standard output; a device or FIFO in place).
 * Not atomic: callers write to a temporary name and rename it. \pre shards.size() ==
 * 2^header.shard_bits. \throws io_error naming the file (as name_written_file() says). Thread
 * safety: no shared state. */
void write_filter_file(std::filesystem::path const & path, filter_file_header const & header,
                       std::span<shard_blob const> shards);

/*! \brief A filter file written shard by shard, in shard order (payloads first, the header last),
 * so that no shard is kept after it is written. `path` must be a regular file or a new one.
 * Complete after finish(); destroyed without finish(), the file is unfinished (the caller removes
 * it). \throws io_error naming the file. Thread safety: one thread at a time. */
class filter_file_stream
{
public:
    filter_file_stream(std::filesystem::path const & path, filter_file_header header,
                       std::size_t max_shard_params);
    ~filter_file_stream();
    filter_file_stream(filter_file_stream const &) = delete;
    filter_file_stream & operator=(filter_file_stream const &) = delete;
    /*! \brief The next shard, with the checksum64 of its words. \pre <= max_shard_params params. */
    void put(shard_blob const & shard, std::uint64_t checksum);
    /*! \brief End marker and header. \pre every shard put. */
    void finish();

private:
    struct state;
    std::unique_ptr<state> s_;
};

/*! \brief How a filter file is opened. */
struct load_options
{
    bool verify_payload{true}; //!< check every shard's payload checksum (else only the header's)
    unsigned threads{1};       //!< threads that check the payload (shards in parallel)
    /*! Give back each shard's pages once checked (mapped_filter_file::release): for a pass that
     * reads the shards again one at a time later, so that checking holds the shards in flight, not
     * the whole file. */
    bool release_verified{false};
};

/*! \brief A filter file mapped read-only into memory, validated on open. The shard word spans
 * point into the mapping, valid while this object lives. Thread safety: immutable after open. */
class mapped_filter_file
{
public:
    struct shard_entry
    {
        std::vector<std::uint64_t> params;
        std::span<std::uint64_t const> words;
        std::uint64_t checksum{0};
    };

    /*! \brief Map and validate `path` as `options` say. \throws format_error / io_error naming the
     * file (a payload checksum mismatch: the lowest such shard, for any thread count). */
    [[nodiscard]] static std::shared_ptr<mapped_filter_file const>
    open(std::filesystem::path const & path, load_options const & options = {});
    /*! \brief Parse an in-memory image (tests, stdin), copied into aligned storage. */
    [[nodiscard]] static std::shared_ptr<mapped_filter_file const>
    from_bytes(std::span<std::byte const> bytes, std::string name, bool verify_payload = true);

    ~mapped_filter_file();
    mapped_filter_file(mapped_filter_file const &) = delete;
    mapped_filter_file & operator=(mapped_filter_file const &) = delete;

    [[nodiscard]] filter_file_header const & header() const noexcept { return header_; }
    [[nodiscard]] std::vector<shard_entry> const & shards() const noexcept { return shards_; }
    [[nodiscard]] std::string const & name() const noexcept { return name_; }
    [[nodiscard]] std::uint64_t file_size() const noexcept { return size_; }
    /*! \brief Let the kernel drop the pages of `words` (a shard's payload) from this process: they
     * are read again from the file if touched later. Only for files mapped from disk (no effect
     * otherwise); for a pass over many inputs, so that memory holds the shards in use, not every
     * input. Thread-safe. */
    void release(std::span<std::uint64_t const> words) const noexcept;

private:
    mapped_filter_file() = default;
    void parse(bool verify_payload);
    void verify_payload(unsigned threads, bool release_verified) const;

    std::string name_;
    void * map_{nullptr};     // mmap'd region (nullptr when owned_ is used)
    bool file_backed_{false}; // map_ is a shared mapping of the file (not an anonymous copy)
    std::uint64_t size_{0};
    std::unique_ptr<std::uint64_t[]> owned_;
    unsigned char const * bytes_{nullptr};
    filter_file_header header_;
    std::vector<shard_entry> shards_;
    int mapping_slot_{-1}; // its entry for mapped_filter_name(), -1 if none
};

/*! \brief Name the file written at `path` (a temporary) `name` in the errors of write_filter_file
 * and filter_file_stream, until forget_written_file(path). Thread-safe. */
void name_written_file(std::filesystem::path const & path, std::string name);
/*! \brief Undo name_written_file(path). Thread-safe. */
void forget_written_file(std::filesystem::path const & path) noexcept;

/*! \brief The name of the filter file whose mapping holds `address`, nullptr if none: for a SIGBUS
 * handler, to name a file truncated while mapped. Async-signal-safe (lock-free, no allocation); the
 * name stays readable while that file is mapped. */
[[nodiscard]] char const * mapped_filter_name(void const * address) noexcept;

/*! \brief Read only the header of a file (cheap; used by `info` and compatibility checks). */
[[nodiscard]] filter_file_header read_filter_header(std::filesystem::path const & path);

} // namespace ksieve
