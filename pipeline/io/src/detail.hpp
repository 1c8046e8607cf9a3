#pragma once
// Internal pieces of the I/O layer shared by its sources (batch.cpp, hts_pool.cpp, paired.cpp,
// source.cpp, writer.cpp; not installed, not public API): byte sources and their decompressors,
// record offsets inside a batch.
#include <ksieve/io/io.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct hFILE;
struct BGZF;
struct htsThreadPool;

namespace ksieve::io::detail
{

// Failure of a byte source (truncated or corrupted compressed data, read error). The message names
// neither file nor record; the parser that sees it adds both.
class source_error : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// A stream of decompressed bytes. read() returns 0 only at the end; throws source_error.
class byte_source
{
public:
    virtual ~byte_source() = default;
    virtual std::size_t read(char * dst, std::size_t n) = 0;
    // read() onto the end of s: up to n bytes appended, their number returned (0 only at the end);
    // on source_error s is as it was. Here through read() into s grown by n (zero-filled first);
    // sources that hold decoded bytes in a buffer of their own append from it (one copy, no fill).
    virtual std::size_t append_to(std::string & s, std::size_t const n)
    {
        std::size_t const old = s.size();
        s.resize(old + n);
        std::size_t got = 0;
        try
        {
            got = read(s.data() + old, n);
        }
        catch (...)
        {
            s.resize(old);
            throw;
        }
        s.resize(old + got);
        return got;
    }
};

// Plain bytes from an hFILE (takes ownership, closes it).
std::unique_ptr<byte_source> make_hfile_source(hFILE * hf);
// BGZF through htslib, decompressed by the shared pool hts_thread_pool(threads) (takes hf).
std::unique_ptr<byte_source> make_bgzf_source(hFILE * hf, unsigned threads, bool allow_missing_eof);

/*! \brief The one pool of htslib worker threads that every BGZF, SAM, BAM and CRAM file of the
 * process shares (instead of a pool per file): created at the first call with `threads` (>= 1)
 * threads, later calls return it as it is. nullptr if it cannot be created. Thread-safe. */
[[nodiscard]] htsThreadPool * hts_thread_pool(unsigned threads);

/*! \brief The first (up to three) errors htslib logged since the last call, "context: message;
 * ...", or empty; cleared. Thread-safe. */
[[nodiscard]] std::string take_htslib_error();

/*! \brief The error of a BGZF or BAM input without its end-of-file marker. */
inline constexpr char const * missing_eof_message =
    "truncated: the BGZF end-of-file marker is missing (the file was cut short; "
    "--allow-missing-eof accepts files from tools that never write the marker)";
// Decompress the start of a gzip stream held in memory (as far as it goes, errors ignored).
std::string inflate_prefix(std::string_view compressed, std::size_t max_out);
[[nodiscard]] bool is_gzip(std::string_view bytes) noexcept;
[[nodiscard]] bool is_bgzf(std::string_view bytes) noexcept;

// Name used in messages: the path, or "<stdin>" for "-".
[[nodiscard]] std::string display_name(std::string const & path);

// The text of errno value `e` (0: EIO's).
inline std::string errno_text(int const e)
{
    return std::strerror(e != 0 ? e : EIO);
}

// Offsets of one record's fields, relative to the batch storage (bit 63 of seq_off: relative to the
// block of joined sequences appended after the records).
struct record_offsets
{
    std::uint64_t raw_off, raw_len;
    std::uint64_t header_off, header_len, name_len;
    std::uint64_t seq_off, seq_len;
    std::uint64_t qual_off, qual_len;
};
inline constexpr std::uint64_t joined_flag = std::uint64_t{1} << 63;

// Turn offsets into views of `batch.storage_`; `joined_base` is where the joined block starts.
void make_views(record_batch & batch, std::vector<record_offsets> const & offsets,
                std::uint64_t joined_base);

// Append a copy of `record` to a batch under construction (storage + offsets; views made later).
void append_copy(std::string & storage, std::vector<record_offsets> & offsets,
                 record_view const & record);

} // namespace ksieve::io::detail
