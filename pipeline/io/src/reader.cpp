// Opening an input: the path, stdin or URL opened, its format and compression found from its first
// bytes, and the reader for them (FASTA/FASTQ, SAM/BAM/CRAM, GenBank/EMBL) made over its layers.
#include "codecs.hpp"
#include "file_reader.hpp"
#include "gzip.hpp"

#include <ksieve/filters/support/error.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace ksieve::io
{

namespace detail
{

std::string record_message(std::string const & path, std::uint64_t const record,
                           std::string const & what)
{
    std::string m{"'"};
    m += display_name(path);
    m += "': record ";
    m += std::to_string(record);
    m += ": ";
    m += what;
    return m;
}

std::string describe_byte(char const c)
{
    auto const u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f)
        return std::string{"'"} + c + "'";
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02X", u);
    return buf;
}

std::string unsupported_message(std::string_view const head)
{
    static constexpr std::pair<std::string_view, std::string_view> tools[] = {
        {"\xFD\x37zXZ", "xz"}, {"BZh", "bzip2"}, {"\x28\xB5\x2F\xFD", "zstd"}};
    for (auto const & [magic, tool] : tools)
        if (head.starts_with(magic))
            return std::string{tool} +
                   "-compressed input is not supported (decompress it first, e.g. " +
                   std::string{tool} + " -dc)";
    return "not FASTA, FASTQ, SAM, BAM or CRAM (plain, gzip, BGZF, zstd, xz or bzip2): input "
           "starts with " +
           (head.empty() ? std::string{"nothing"} : describe_byte(head.front()));
}

} // namespace detail

namespace
{

using namespace detail;

enum class content_kind
{
    fastx,
    sam_text,
    bam,
    cram,
    genbank,
    embl
};

content_kind classify_content(std::string_view const s)
{
    if (s.starts_with("BAM\1"))
        return content_kind::bam;
    if (s.starts_with("CRAM"))
        return content_kind::cram;
    if (s.starts_with("LOCUS "))
        return content_kind::genbank;
    if (s.starts_with("ID   "))
        return content_kind::embl;
    std::string_view const line = s.substr(0, s.find('\n'));
    if (line.size() >= 4 && line[0] == '@' && line[3] == '\t')
    {
        std::string_view const tag = line.substr(1, 2);
        if (tag == "HD" || tag == "SQ" || tag == "RG" || tag == "PG" || tag == "CO")
            return content_kind::sam_text;
    }
    if (!line.empty() && line[0] != '@' && line[0] != '>' &&
        std::count(line.begin(), line.end(), '\t') >= 10)
        return content_kind::sam_text; // headerless SAM: 11 mandatory columns
    return content_kind::fastx;
}

// `layers` gzip layers peeled off `hf` (the outermost by htslib's threaded reader if BGZF).
std::unique_ptr<byte_source> peel(hts_ptr<hFILE> hf, int const layers, bool const top_bgzf,
                                  reader_options const & options)
{
    if (layers == 0)
        return make_hfile_source(hf.release());
    std::unique_ptr<byte_source> src =
        top_bgzf ? make_bgzf_source(hf.release(), options.threads, options.allow_missing_eof)
                 : make_gzip_source(make_hfile_source(hf.release()));
    for (int i = 1; i < layers; ++i)
        src = make_gzip_source(std::move(src));
    return src;
}

// The input as an hFILE: stdin (a duplicate of its descriptor), a file (its descriptor in `fd`,
// else -1), or a URL through htslib's plugins. \throws io_error naming the input.
hts_ptr<hFILE> open_input(std::string const & path, int & file_fd)
{
    hFILE * hf = nullptr;
    errno = 0;
    file_fd = -1;
    if (path.find("://") != std::string::npos)
        hf = hopen(path.c_str(), "r"); // URLs through htslib's plugins
    else if (int const fd =
                 path == "-" ? ::dup(STDIN_FILENO) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
             fd >= 0)
    {
        hf = hdopen(fd, "r");
        if (hf == nullptr)
            ::close(fd);
        else if (path != "-")
            file_fd = fd;
    }
    if (hf == nullptr)
        throw io_error{"'" + display_name(path) + "': cannot open: " + errno_text(errno)};
    return hts_ptr<hFILE>{hf};
}

// Up to 64 KiB of the first bytes of `hf`, left in it for the reader. \throws io_error
std::string peek_head(hFILE * const hf, std::string const & path)
{
    std::string head(std::size_t{64} << 10, '\0');
    errno = 0;
    ssize_t const n = hpeek(hf, head.data(), head.size());
    if (n < 0)
        throw io_error{"'" + display_name(path) + "': cannot read: " + errno_text(errno)};
    head.resize(static_cast<std::size_t>(n));
    return head;
}

// What an input holds under the gzip layers (BGZF included) that wrap it.
struct layered_content
{
    content_kind kind;
    int depth;     // gzip layers around it
    bool top_bgzf; // the outermost layer is BGZF
};

layered_content look_inside(std::string const & head)
{
    layered_content c{content_kind::fastx, 0, is_bgzf(head)};
    std::string inner = head;
    while (is_gzip(inner) && c.depth < 8)
    {
        inner = inflate_prefix(inner, std::size_t{64} << 10);
        ++c.depth;
    }
    c.kind = classify_content(inner);
    return c;
}

// The reader of an input that starts with `head`. \throws source_error (unsupported), io_error
std::unique_ptr<reader> reader_for(std::string const & path, hts_ptr<hFILE> hf,
                                   std::string const & head, reader_options const & options)
{
    if (codec const c = codec_from_magic(head); c != codec::none)
    {
        // zstd, xz or bzip2: FASTA / FASTQ inside
        if (classify_content(decompress_prefix(c, head, std::size_t{64} << 10)) !=
            content_kind::fastx)
            throw source_error{std::string{codec_name(c)} +
                               "-compressed SAM/BAM/CRAM is not supported (FASTA and FASTQ are)"};
        return make_fastx_reader(path, make_codec_source(c, make_hfile_source(hf.release())),
                                 options);
    }
    layered_content const in = look_inside(head);
    if (in.kind == content_kind::genbank || in.kind == content_kind::embl)
    {
        bool const genbank = in.kind == content_kind::genbank;
        if (!have_annotated_input())
            throw source_error{std::string{genbank ? "GenBank" : "EMBL"} +
                               " input needs ksieve built with seqan3 (convert it to FASTA first)"};
        return make_annotated_reader(path, peel(std::move(hf), in.depth, in.top_bgzf, options),
                                     genbank ? annotated_format::genbank : annotated_format::embl,
                                     options);
    }
    if (in.kind == content_kind::fastx)
        return make_fastx_reader(path, peel(std::move(hf), in.depth, in.top_bgzf, options),
                                 options);
    // htslib itself handles one gzip/BGZF layer of SAM and BAM, none of CRAM
    int const strip = in.kind == content_kind::cram ? in.depth : std::max(in.depth - 1, 0);
    if (strip == 0)
        return make_hts_reader(path, std::move(hf), options);
    return make_fed_hts_reader(path, peel(std::move(hf), strip, in.top_bgzf, options), options);
}

} // namespace

std::uint64_t reader::input_position() const noexcept
{
    if (position_fd_ < 0)
        return 0;
    off_t const at = ::lseek(position_fd_, 0, SEEK_CUR);
    return at < 0 ? 0 : static_cast<std::uint64_t>(at);
}

#if !KSIEVE_HAVE_SEQAN3
bool detail::have_annotated_input() noexcept
{
    return false;
}

std::unique_ptr<reader> detail::make_annotated_reader(std::string path,
                                                      std::unique_ptr<byte_source>,
                                                      annotated_format, reader_options const &)
{
    throw input_error{"'" + display_name(path) +
                      "': GenBank and EMBL input need ksieve built with seqan3"};
}
#endif

std::unique_ptr<reader> reader::open(std::string const & path, reader_options const & options)
{
    quiet_htslib();
    int fd = -1;
    hts_ptr<hFILE> hf = open_input(path, fd);
    std::string const head = peek_head(hf.get(), path);
    std::unique_ptr<reader> r;
    try
    {
        r = reader_for(path, std::move(hf), head, options);
    }
    catch (source_error const & e)
    {
        throw input_error{record_message(path, 1, e.what())};
    }
    // A regular file opened here: its descriptor's offset tells how far the reading got.
    struct stat st
    {
    };
    if (fd >= 0 && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
        r->position_fd_ = fd;
    return r;
}

} // namespace ksieve::io
