#pragma once
/*! \file
 * \brief The ksieve filter file format (one format for every filter type) and read-only mmap access.
 *
 * Layout, all integers little-endian, written field by field (format version 3; version 2 has no
 * sampling fields and holds every k-mer; version 1 has no key split fields either and holds the whole key
 * space):
 *
 * | offset | size | field |
 * |---|---|---|
 * | 0  | 8 | magic "KSIEVEfl" |
 * | 8  | 4 | format version (3) |
 * | 12 | 4 | header size in bytes H (everything up to and including the header checksum) |
 * | 16 | 4 | filter type (filter_type) |
 * | 20 | 4 | k |
 * | 24 | 4 | flags: bit 0 canonical |
 * | 28 | 4 | hash id (hash_id) |
 * | 32 | 8 | hash seed |
 * | 40 | 8 | target fpr (IEEE-754 double bits) |
 * | 48 | 8 | expected keys as configured |
 * | 56 | 4 | shard bits s (2^s shards) |
 * | 60 | 4 | number of type-level parameters P |
 * | 64 | 8P | type-level parameters (u64) |
 * | 64+8P | 8 | key split S (version >= 2; 1 = the whole key space, at most key_parts::max_split) |
 * | 72+8P | 8W | bitmap of the parts of S held, W = ceil(S / 64) words, bits >= S zero, not all zero |
 * | 72+8P+8W | 4 | sampling scheme (version >= 3): 0 every k-mer, 1 minimizers (sampling.hpp) |
 * | 76+8P+8W | 4 | sampling window W (1 for scheme 0, 2 .. max_sampling_window for scheme 1) |
 * | .. | .. | shard table, 2^s entries: offset u64, words u64, payload checksum u64, parameter count
 *              u32, reserved u32 (0), parameters u64[count] |
 * | H-8 | 8 | header checksum (checksum64 of bytes [0, H-8)) |
 * | .. | .. | zero padding to a multiple of 64, then each shard payload (words), each starting at a multiple
 *              of 64 bytes, zero padding between |
 * | end-24 | 8 | end magic "KSIEVEnd" |
 * | end-16 | 8 | total file size in bytes (catches truncation and appended garbage) |
 * | end-8  | 8 | checksum of the shard checksums |
 *
 * Readers refuse: a wrong magic ("not a ksieve filter file"), a version above format_version ("written
 * by a newer ksieve"), header/table bounds outside the file, a header checksum mismatch, a missing end
 * marker or wrong size (truncated), and (unless verification is switched off) any payload checksum
 * mismatch. Every message names the file.
 *
 * Thread safety: filter_file_writer is single-threaded; a mapped_filter_file is immutable after open
 * and may be read from any number of threads.
 */
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <ksieve/filters/filter.hpp>

namespace ksieve
{

/*! \brief Current (and highest readable) format version. */
inline constexpr std::uint32_t filter_format_version = 3;

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
    std::vector<std::uint64_t> params;            //!< type-level parameters
    key_parts parts{};                            //!< parts of the key space held (version 1 files: whole)
    std::uint32_t version{filter_format_version}; //!< format version read (ignored by the writer)
};

/*! \brief One shard as stored: its parameters and payload words. */
struct shard_blob
{
    std::vector<std::uint64_t> params;
    std::span<std::uint64_t const> words;
};

/*! \brief Write a filter file to `path` as it is ("-": standard output; a device or FIFO is written in
 * place). Not atomic by itself: the ksieve commands write to the temporary name of an io::output_file and
 * rename it into place, so that a failed run leaves nothing behind. \pre shards.size() ==
 * 2^header.shard_bits. \throws io_error naming the file. Thread safety: none needed (no shared state). */
void write_filter_file(std::filesystem::path const & path, filter_file_header const & header,
                       std::span<shard_blob const> shards);

/*! \brief A filter file written shard by shard, in shard order, as the shards are made (a set operation's
 * result, so that no shard is kept after it is written): the payloads first, after room for a header whose
 * shards all have `max_shard_params` parameters, then the end marker, then the header (the zeros left
 * between the header and the first payload are padding readers accept). `path` must be a regular file or a
 * new one (it is overwritten at its start at the end). The file is complete after finish(); destroy the
 * object without finish() to give up (the caller removes the file). \throws io_error naming the file.
 * Thread safety: one thread at a time. */
class filter_file_stream
{
public:
    filter_file_stream(std::filesystem::path const & path, filter_file_header header,
                       std::size_t max_shard_params);
    ~filter_file_stream();
    filter_file_stream(filter_file_stream const &) = delete;
    filter_file_stream & operator=(filter_file_stream const &) = delete;
    /*! \brief The next shard, with the checksum64 of its words. \pre at most max_shard_params parameters. */
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
    /*! Give back each shard's pages once checked (mapped_filter_file::release): for a pass that reads the
     * shards again one at a time later, so that checking holds the shards in flight, not the whole file. */
    bool release_verified{false};
};

/*! \brief A filter file mapped read-only into memory, validated on open.
 * The shard word spans point into the mapping and stay valid while this object (or a copy of the
 * shared_ptr returned by open) lives. */
class mapped_filter_file
{
public:
    struct shard_entry
    {
        std::vector<std::uint64_t> params;
        std::span<std::uint64_t const> words;
        std::uint64_t checksum{0};
    };

    /*! \brief Map and validate `path`. \param verify_payload also check every payload checksum.
     * \throws format_error / io_error naming the file. */
    [[nodiscard]] static std::shared_ptr<mapped_filter_file const> open(std::filesystem::path const & path,
                                                                        bool verify_payload = true);
    /*! \brief Map and validate `path` as `options` say. \throws format_error / io_error naming the file (a
     * payload checksum mismatch: the lowest such shard, for any thread count). */
    [[nodiscard]] static std::shared_ptr<mapped_filter_file const> open(std::filesystem::path const & path,
                                                                        load_options const & options);
    /*! \brief Parse an in-memory image (tests, stdin). The bytes are copied into aligned storage. */
    [[nodiscard]] static std::shared_ptr<mapped_filter_file const>
    from_bytes(std::span<std::byte const> bytes, std::string name, bool verify_payload = true);

    ~mapped_filter_file();
    mapped_filter_file(mapped_filter_file const &) = delete;
    mapped_filter_file & operator=(mapped_filter_file const &) = delete;

    [[nodiscard]] filter_file_header const & header() const noexcept { return header_; }
    [[nodiscard]] std::vector<shard_entry> const & shards() const noexcept { return shards_; }
    [[nodiscard]] std::string const & name() const noexcept { return name_; }
    [[nodiscard]] std::uint64_t file_size() const noexcept { return size_; }
    /*! \brief Let the kernel drop the pages of `words` (a shard's payload) from this process: they are read
     * again from the file if touched later. Only for files mapped from disk (no effect otherwise); for a
     * pass over many inputs, so that memory holds the shards in use, not every input. Thread-safe. */
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
};

/*! \brief Read only the header of a file (cheap; used by `info` and compatibility checks). */
[[nodiscard]] filter_file_header read_filter_header(std::filesystem::path const & path);

} // namespace ksieve
