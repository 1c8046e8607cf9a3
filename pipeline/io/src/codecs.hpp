#pragma once
// Internal: compression besides gzip input: zstd, xz and bzip2 decoders (byte sources), and the
// parallel block compressor of the compressed outputs (gzip as BGZF, zstd, xz, bzip2).
#include "detail.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ksieve::io::detail
{

/*! \brief Compression of a stream. */
enum class codec : std::uint8_t
{
    none,
    gzip, //!< written as BGZF (gzip-compatible, blocks of at most 64 KiB)
    zstd,
    xz,
    bzip2
};

/*! \brief `s` in lower case (ASCII). */
[[nodiscard]] std::string lower_case(std::string_view s);

/*! \brief The codec of an output name by its extension (.gz/.bgz, .zst/.zstd, .xz, .bz2); none
 * otherwise. */
[[nodiscard]] codec codec_from_extension(std::string_view path) noexcept;

/*! \brief A compression extension that no codec writes (.lz4, .lzma, .Z, .zip, .br, .lz, .sz, .7z),
 * or empty. */
[[nodiscard]] std::string_view unwritable_extension(std::string_view path) noexcept;

/*! \brief The codec whose magic bytes start `head` among zstd, xz and bzip2; none otherwise. */
[[nodiscard]] codec codec_from_magic(std::string_view head) noexcept;

/*! \brief "zstd", "xz", "bzip2", "gzip". */
[[nodiscard]] char const * codec_name(codec c) noexcept;

/*! \brief Up to `max_out` decompressed bytes of the start of `compressed` (for format detection;
 * empty if the data is corrupt). \pre c is zstd, xz or bzip2. */
[[nodiscard]] std::string decompress_prefix(codec c, std::string_view compressed,
                                            std::size_t max_out);

/*! \brief A zstd, xz or bzip2 decoder over `inner`: every frame / stream of a concatenation;
 * corrupt or truncated data ends with a source_error after the bytes before it. \pre c is zstd, xz
 * or bzip2. */
[[nodiscard]] std::unique_ptr<byte_source> make_codec_source(codec c,
                                                             std::unique_ptr<byte_source> inner);

/*! \brief Compresses a stream as independent members (BGZF blocks, zstd frames, xz streams, bzip2
 * streams) in parallel on `threads` threads. The members depend only on the bytes given to each
 * compress() call, so the output is the same for any thread count; a concatenation of members is a
 * valid stream of the format. Thread safety: one thread calls compress() at a time (it runs an
 * OpenMP region inside). */
class block_compressor
{
public:
    /*! \param level the codec's level (codec_level). \throws io_error if a codec cannot start. */
    block_compressor(codec c, int level, unsigned threads);
    ~block_compressor();
    block_compressor(block_compressor const &) = delete;
    block_compressor & operator=(block_compressor const &) = delete;

    /*! \brief Append the members of `data` (cut into members of member_bytes()) to `out`.
     * \throws io_error if compression fails. */
    void compress(std::string_view data, std::string & out);
    /*! \brief Append a stream that holds no bytes, for an output given none (zstd, xz, bzip2: one
     * member of no bytes; gzip: nothing, trailer() is such a member). \throws io_error if
     * compression fails. */
    void compress_empty(std::string & out);
    /*! \brief Bytes that end the stream (BGZF: its end-of-file block; the others: none). */
    [[nodiscard]] std::string_view trailer() const noexcept;
    /*! \brief Give back the memory that compression keeps between calls (the compressed members and
     * the zstd contexts' tables), for an output that is one of many: the next compress() allocates
     * them again. */
    void release_memory() noexcept;
    /*! \brief Uncompressed bytes per member. */
    [[nodiscard]] std::size_t member_bytes() const noexcept;

private:
    [[nodiscard]] bool use_isal() const noexcept;
    // gzip through igzip: Huffman codes fitted to the start of `piece` for its members
    void fit_codes(std::string_view piece) noexcept;
    [[nodiscard]] std::uint32_t crc32_of(std::string_view in) const noexcept;
    // One member of `in` into o by thread t's contexts; false if compression failed.
    bool compress_member(std::size_t t, std::string_view in, std::string & o);
    // One member of `in` on this thread appended to out. \throws io_error if compression fails.
    void append_member(std::string_view in, std::string & out);
    // raw deflate of `in` into out[0, cap) by thread t's context; 0 if it does not fit
    std::size_t deflate_block(std::size_t t, std::string_view in, char * out, std::size_t cap);
    struct contexts;
    codec codec_;
    int level_;
    unsigned threads_;
    std::unique_ptr<contexts> ctx_;
    std::vector<std::string> parts_; // per member: its compressed bytes
};

/*! \brief The codec level for a --compression-level value: `level` as given (1 = fastest), or the
 * codec's default for -1: gzip 1, zstd 3, xz 3, bzip2 9. */
[[nodiscard]] int codec_level(codec c, int level) noexcept;

} // namespace ksieve::io::detail
