#include "codecs.hpp"
#include "annotated.hpp"
#include "detail.hpp"

#include <ksieve/filters/error.hpp>
#include <ksieve/filters/memory_budget.hpp>

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts.h>
#include <htslib/hts_log.h>
#include <htslib/sam.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

namespace ksieve::io::detail
{
namespace
{
std::mutex htslib_error_mutex;
std::string htslib_error; // the first errors htslib logged since the last take, for the next error line
} // namespace

std::string take_htslib_error()
{
    std::lock_guard const lock{htslib_error_mutex};
    return std::exchange(htslib_error, std::string{});
}
} // namespace ksieve::io::detail

// htslib's log, replaced: its errors are kept for the error line of the input or output that failed
// (a CRAM reference that cannot be found, a malformed header) instead of being printed as lines of their own
// before it; its warnings and notes are dropped (ksieve reports what it detects itself, for example a
// missing end-of-file marker).
extern "C" void hts_log(enum htsLogLevel const severity, char const * const context, char const * const format, ...)
{
    if (severity > HTS_LOG_ERROR || format == nullptr)
        return;
    char text[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(text, sizeof text, format, args);
    va_end(args);
    std::string message{text};
    while (!message.empty() && (message.back() == '\n' || message.back() == '.'))
        message.pop_back();
    std::lock_guard const lock{ksieve::io::detail::htslib_error_mutex};
    // the first errors of a failure say why (a reference not found), the later ones what failed with it
    std::string & all = ksieve::io::detail::htslib_error;
    if (std::count(all.begin(), all.end(), ';') < 2)
        all += (all.empty() ? "" : "; ") + (context != nullptr ? std::string{context} + ": " + message : message);
}

namespace ksieve::io
{

namespace detail
{

void quiet_htslib()
{
    static std::once_flag once;
    // errors reach hts_log above (and from there ksieve's error line); warnings are not even formatted
    std::call_once(once, [] { hts_set_log_level(HTS_LOG_ERROR); });
}

} // namespace detail

namespace
{

using namespace detail;

constexpr std::size_t read_chunk = std::size_t{1} << 20;

std::string record_message(std::string const & path, std::uint64_t const record, std::string const & what)
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
    auto const starts = [&](std::string_view const magic) { return head.starts_with(magic); };
    if (starts("\xFD"
               "7zXZ"))
        return "xz-compressed input is not supported (decompress it first, e.g. xz -dc)";
    if (starts("BZh"))
        return "bzip2-compressed input is not supported (decompress it first, e.g. bzip2 -dc)";
    if (starts("\x28\xB5\x2F\xFD"))
        return "zstd-compressed input is not supported (decompress it first, e.g. zstd -dc)";
    return "not FASTA, FASTQ, SAM, BAM or CRAM (plain, gzip, BGZF, zstd, xz or bzip2): input starts with " +
           (head.empty() ? std::string{"nothing"} : describe_byte(head.front()));
}

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
    if (!line.empty() && line[0] != '@' && line[0] != '>' && std::count(line.begin(), line.end(), '\t') >= 10)
        return content_kind::sam_text; // headerless SAM: 11 mandatory columns
    return content_kind::fastx;
}

// What the two file readers share: path, options, format and record count; next() as fill() with the
// options' limits; the start of a batch.
class file_reader : public reader
{
public:
    bool next(record_batch & batch) final
    {
        return fill(batch, options_.batch_records, options_.batch_bases, 1);
    }
    [[nodiscard]] seq_format format() const noexcept final { return format_; }
    [[nodiscard]] std::string const & name() const noexcept final { return path_; }
    [[nodiscard]] std::uint64_t records_read() const noexcept final { return records_; }

protected:
    file_reader(std::string path, reader_options const & options, seq_format const format)
        : path_{std::move(path)}, options_{options}, format_{format}
    {
    }

    // Clear `batch` for the records that follow this reader's last one.
    void begin_batch(record_batch & batch) const noexcept
    {
        batch.clear();
        batch.format_ = format_;
        batch.first_ = records_ + 1;
    }

    std::string path_;
    reader_options options_;
    seq_format format_;
    std::uint64_t records_{0};
};

// ---------------------------------------------------------------------------------------------------
// FASTA / FASTQ

class fastx_reader final : public file_reader
{
public:
    fastx_reader(std::string path, std::unique_ptr<byte_source> source, reader_options const & options)
        : file_reader{std::move(path), options, seq_format::fastq}, source_{std::move(source)},
          keep_raw_{options.keep_raw}
    {
        // A UTF-8 byte order mark at the start (files saved by some editors) belongs to no record: dropped.
        while (carry_.size() < 3 && !eof_)
            refill(carry_, read_chunk, 1);
        if (std::string_view{carry_}.starts_with("\xEF\xBB\xBF"))
            carry_.erase(0, 3);
        std::size_t p = 0;
        for (;;)
        {
            while (p < carry_.size() && (carry_[p] == '\n' || carry_[p] == '\r'))
                ++p;
            if (p < carry_.size() || eof_)
                break;
            refill(carry_, read_chunk, 1);
        }
        if (p == carry_.size())
            format_ = seq_format::fastq; // empty input: zero records
        else if (carry_[p] == '>')
            format_ = seq_format::fasta;
        else if (carry_[p] == '@')
            format_ = seq_format::fastq;
        else
            throw input_error{
                record_message(path_, 1, unsupported_message(std::string_view{carry_}.substr(p)))};
    }

    bool fill(record_batch & batch, std::size_t max_records, std::size_t const max_bases,
              std::size_t const multiple) override
    {
        max_records = std::max<std::size_t>(max_records, 1);
        begin_batch(batch);
        std::string & s = batch.storage_;
        s.reserve(std::max<std::size_t>(carry_.size() + read_chunk + read_chunk / 2, 64));
        s.assign(carry_);
        carry_.clear();
        offsets_.clear();
        joined_.clear();
        std::size_t pos = 0;
        std::size_t n = 0;
        std::size_t bases = 0;
        bool const fastq = format_ == seq_format::fastq;
        while (n < max_records)
        {
            record_offsets rec;
            parse_status const st = fastq ? parse_fastq(s, pos, rec, records_ + n + 1)
                                          : parse_fasta(s, pos, rec, records_ + n + 1);
            if (st == parse_status::record)
            {
                offsets_.push_back(rec);
                ++n;
                bases += rec.seq_len;
                if (bases >= max_bases && n % std::max<std::size_t>(multiple, 1) == 0)
                    break;
                continue;
            }
            if (eof_)
            {
                if (st == parse_status::empty)
                    break;
                truncated(s, pos, records_ + n + 1);
            }
            // a long record grows by a quarter at a time: what refill reads ahead (and zero-fills first) stays
            // small beside it (doubling would touch up to twice a chromosome's bytes)
            refill(s, std::max(read_chunk, (s.size() - pos) / 4), records_ + n + 1);
        }
        carry_.assign(s, pos, std::string::npos);
        s.resize(pos);
        std::uint64_t const joined_base = s.size();
        s.append(joined_);
        make_views(batch, offsets_, joined_base);
        records_ += n;
        return n > 0;
    }

    [[nodiscard]] std::string const & sam_header() const noexcept override { return no_header_; }

private:
    enum class parse_status
    {
        record,  // one record parsed, pos after it
        empty,   // nothing but blank lines left (pos at the end)
        partial, // an incomplete record starts at pos
    };

    // Append up to `want` bytes of input to s; at the end of input append a missing final newline.
    void refill(std::string & s, std::size_t const want, std::uint64_t const record)
    {
        if (eof_)
            return;
        if (!pending_error_.empty())
            throw input_error{record_message(path_, record, pending_error_)};
        std::size_t total = 0;
        try
        {
            while (total < want)
            {
                std::size_t const got = source_->append_to(s, want - total);
                if (got == 0)
                {
                    eof_ = true;
                    break;
                }
                total += got;
                if (total >= want / 2)
                    break;
            }
        }
        catch (source_error const & e)
        {
            // report it once the data before it is parsed, with the number of the record it cuts
            pending_error_ = e.what();
            if (total == 0)
                throw input_error{record_message(path_, record, pending_error_)};
        }
        if (eof_ && !s.empty() && s.back() != '\n')
            s.push_back('\n');
    }

    [[noreturn]] void truncated(std::string const & s, std::size_t const pos,
                                std::uint64_t const record) const
    {
        auto const lines = std::count(s.begin() + static_cast<std::ptrdiff_t>(pos), s.end(), '\n');
        if (lines >= 3 && s.find("\n+", pos) == std::string::npos)
            throw input_error{record_message(path_, record,
                                             "truncated FASTQ record (input ends before the '+' line after its "
                                             "sequence)")};
        throw input_error{record_message(path_, record,
                                         lines < 4 ? "truncated FASTQ record (input ends after " + std::to_string(lines) +
                                                         " of its 4 lines)"
                                                   : std::string{"truncated FASTQ record (input ends inside its quality)"})};
    }

    static std::size_t name_length(char const * const header, std::size_t const len) noexcept
    {
        for (std::size_t i = 0; i < len; ++i)
            if (header[i] == ' ' || header[i] == '\t')
                return i;
        return len;
    }

    static std::size_t skip_blank(std::string const & s, std::size_t p) noexcept
    {
        while (p < s.size() && (s[p] == '\n' || s[p] == '\r'))
            ++p;
        return p;
    }

    // Skip blank lines to the next record (pos moves there) and check its first character. \returns its
    // position, s.size() at the end of the text.
    std::size_t record_start(std::string const & s, std::size_t & pos, char const marker, char const * const format,
                             std::uint64_t const record) const
    {
        std::size_t const p = skip_blank(s, pos);
        pos = p;
        if (p < s.size() && s[p] != marker)
            throw input_error{record_message(path_, record, std::string{"expected '"} + marker +
                                                                "' at the start of a " + format + " record, found " +
                                                                describe_byte(s[p]))};
        return p;
    }

    parse_status parse_fastq(std::string const & s, std::size_t & pos, record_offsets & rec,
                             std::uint64_t const record)
    {
        char const * const b = s.data();
        std::size_t const size = s.size();
        std::size_t const p = record_start(s, pos, '@', "FASTQ", record);
        if (p == size)
            return parse_status::empty;
        auto const eol = [&](std::size_t const from) -> std::size_t
        {
            if (from >= size)
                return std::string::npos;
            void const * const q = std::memchr(b + from, '\n', size - from);
            return q == nullptr ? std::string::npos
                                : static_cast<std::size_t>(static_cast<char const *>(q) - b);
        };
        std::size_t const h_end = eol(p);
        if (h_end == std::string::npos)
            return parse_status::partial;
        std::size_t const s_beg = h_end + 1;
        std::size_t const s_end = eol(s_beg);
        if (s_end == std::string::npos)
            return parse_status::partial;
        std::size_t const p_beg = s_end + 1;
        if (p_beg >= size)
            return parse_status::partial;
        if (b[p_beg] != '+')
        {
            if (!is_sequence_byte(b[p_beg]))
                throw input_error{record_message(
                    path_, record, "expected a '+' line after the sequence, found " + describe_byte(b[p_beg]))};
            return parse_fastq_multiline(s, pos, rec, record, h_end);
        }
        std::size_t const p_end = eol(p_beg);
        if (p_end == std::string::npos)
            return parse_status::partial;
        std::size_t const q_beg = p_end + 1;
        std::size_t const q_end = eol(q_beg);
        if (q_end == std::string::npos)
            return parse_status::partial;
        auto const trim_cr = [&](std::size_t const beg, std::size_t const end)
        { return end > beg && b[end - 1] == '\r' ? end - 1 : end; };
        std::size_t const hdr_end = trim_cr(p + 1, h_end);
        std::size_t const seq_end = trim_cr(s_beg, s_end);
        std::size_t const qual_end = trim_cr(q_beg, q_end);
        if (std::size_t const plus_end = trim_cr(p_beg, p_end); plus_end - p_beg > 1) [[unlikely]]
            check_plus_line({b + p + 1, hdr_end - (p + 1)}, {b + p_beg + 1, plus_end - (p_beg + 1)}, record);
        if (qual_end - q_beg != seq_end - s_beg)
            throw input_error{record_message(path_, record,
                                             "quality length " + std::to_string(qual_end - q_beg) +
                                                 " differs from sequence length " +
                                                 std::to_string(seq_end - s_beg))};
        rec.raw_off = p;
        rec.raw_len = q_end + 1 - p;
        rec.header_off = p + 1;
        rec.header_len = hdr_end - (p + 1);
        rec.name_len = name_length(b + p + 1, rec.header_len);
        rec.seq_off = s_beg;
        rec.seq_len = seq_end - s_beg;
        rec.qual_off = q_beg;
        rec.qual_len = qual_end - q_beg;
        pos = q_end + 1;
        return parse_status::record;
    }

    // A '+' line that repeats a title must repeat this record's (its whole header, or its name).
    void check_plus_line(std::string_view header, std::string_view plus, std::uint64_t const record) const
    {
        auto const rtrim = [](std::string_view & v) {
            while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
                v.remove_suffix(1);
        };
        rtrim(header);
        rtrim(plus);
        if (plus.empty() || plus == header || plus == header.substr(0, name_length(header.data(), header.size())))
            return;
        throw input_error{record_message(path_, record,
                                         "the '+' line names '" + std::string{plus.substr(0, 80)} +
                                             "', not this record's '" + std::string{header.substr(0, 80)} + "'")};
    }

    // A byte that can start a wrapped sequence line (IUPAC letters, gaps, '*'); never '@' or '+'.
    static bool is_sequence_byte(char const c) noexcept
    {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-' || c == '.' || c == '*';
    }

    // A FASTQ record whose sequence is wrapped over several lines (old Sanger-style files): sequence lines up
    // to the '+' line, then quality lines until they hold as many characters as the sequence. Both are
    // joined (without line ends) into joined_; raw keeps the record's bytes as they are. A one-line sequence
    // never takes this path, so its quality must be one line too (a short quality is an error, not a wrap).
    parse_status parse_fastq_multiline(std::string const & s, std::size_t & pos, record_offsets & rec,
                                       std::uint64_t const record, std::size_t const h_end)
    {
        char const * const b = s.data();
        std::size_t const size = s.size();
        std::size_t const p = pos;
        auto const line_end = [&](std::size_t const from) -> std::size_t
        {
            void const * const q = from < size ? std::memchr(b + from, '\n', size - from) : nullptr;
            return q == nullptr ? std::string::npos : static_cast<std::size_t>(static_cast<char const *>(q) - b);
        };
        auto const content_end = [&](std::size_t const beg, std::size_t const end)
        { return end > beg && b[end - 1] == '\r' ? end - 1 : end; };
        std::size_t const joined_seq = joined_.size();
        auto const undo = [&] { joined_.resize(joined_seq); };
        auto const partial = [&] {
            undo();
            return parse_status::partial;
        };
        // Appends the line at q (without its line end) to joined_ and moves q past it; false if incomplete.
        auto const append_line = [&](std::size_t & q) {
            std::size_t const e = line_end(q);
            if (e == std::string::npos)
                return false;
            joined_.append(b + q, content_end(q, e) - q);
            q = e + 1;
            return true;
        };
        // sequence lines
        std::size_t q = h_end + 1;
        for (;;)
        {
            if (q >= size)
                return partial();
            if (b[q] == '+')
                break;
            if (!is_sequence_byte(b[q]) && b[q] != '\n' && b[q] != '\r')
            {
                undo();
                throw input_error{record_message(
                    path_, record, "expected a '+' line after the sequence, found " + describe_byte(b[q]))};
            }
            if (!append_line(q))
                return partial();
        }
        std::size_t const seq_len = joined_.size() - joined_seq;
        std::size_t const plus_end = line_end(q);
        if (plus_end == std::string::npos)
            return partial();
        if (std::size_t const plus_content = content_end(q, plus_end); plus_content - q > 1)
        {
            std::size_t const hdr = content_end(p + 1, h_end);
            try
            {
                check_plus_line({b + p + 1, hdr - (p + 1)}, {b + q + 1, plus_content - (q + 1)}, record);
            }
            catch (...)
            {
                undo();
                throw;
            }
        }
        // quality lines until they hold seq_len characters
        std::size_t const joined_qual = joined_.size();
        q = plus_end + 1;
        while (joined_.size() - joined_qual < seq_len)
            if (!append_line(q))
                return partial();
        std::size_t const qual_len = joined_.size() - joined_qual;
        if (qual_len != seq_len)
        {
            undo();
            throw input_error{record_message(path_, record,
                                             "quality length " + std::to_string(qual_len) +
                                                 " differs from sequence length " + std::to_string(seq_len) +
                                                 " (wrapped record)")};
        }
        std::size_t const hdr_end = content_end(p + 1, h_end);
        rec.raw_off = p;
        rec.raw_len = q - p;
        rec.header_off = p + 1;
        rec.header_len = hdr_end - (p + 1);
        rec.name_len = name_length(b + p + 1, rec.header_len);
        rec.seq_off = joined_seq | joined_flag;
        rec.seq_len = seq_len;
        rec.qual_off = joined_qual | joined_flag;
        rec.qual_len = qual_len;
        pos = q;
        return parse_status::record;
    }

    parse_status parse_fasta(std::string & s, std::size_t & pos, record_offsets & rec,
                             std::uint64_t const record)
    {
        char const * const b = s.data();
        std::size_t const size = s.size();
        std::size_t const p = record_start(s, pos, '>', "FASTA", record);
        if (p == size)
            return parse_status::empty;
        void const * const h = std::memchr(b + p, '\n', size - p);
        if (h == nullptr)
            return parse_status::partial;
        std::size_t const h_end = static_cast<std::size_t>(static_cast<char const *>(h) - b);
        // the record ends before the next line that starts with '>' (or at the end of input)
        std::size_t end = size;
        for (std::size_t q = h_end + 1; q < size;)
        {
            void const * const r = std::memchr(b + q, '>', size - q);
            if (r == nullptr)
                break;
            std::size_t const ri = static_cast<std::size_t>(static_cast<char const *>(r) - b);
            if (b[ri - 1] == '\n')
            {
                end = ri;
                break;
            }
            q = ri + 1;
        }
        if (end == size && !eof_)
            return parse_status::partial;
        std::size_t const hdr_end = h_end > p + 1 && b[h_end - 1] == '\r' ? h_end - 1 : h_end;
        rec.raw_off = p;
        rec.raw_len = end - p;
        rec.header_off = p + 1;
        rec.header_len = hdr_end - (p + 1);
        rec.name_len = name_length(b + p + 1, rec.header_len);
        rec.qual_off = p;
        rec.qual_len = 0;
        std::size_t const s_beg = h_end + 1;
        if (s_beg >= end)
        {
            rec.seq_off = s_beg;
            rec.seq_len = 0;
        }
        else
        {
            void const * const nl = std::memchr(b + s_beg, '\n', end - s_beg);
            std::size_t const first_end = static_cast<std::size_t>(static_cast<char const *>(nl) - b);
            if (first_end + 1 == end) // one line: the sequence stays in place
            {
                rec.seq_off = s_beg;
                rec.seq_len =
                    (first_end > s_beg && b[first_end - 1] == '\r' ? first_end - 1 : first_end) - s_beg;
            }
            else
            {
                if (!keep_raw_)
                {
                    // in place: each line moves left over the line breaks before it
                    std::size_t w = s_beg;
                    for (std::size_t q = s_beg; q < end;)
                    {
                        std::size_t const e = static_cast<std::size_t>(
                            static_cast<char const *>(std::memchr(b + q, '\n', end - q)) - b);
                        std::size_t const le = e > q && b[e - 1] == '\r' ? e - 1 : e;
                        std::memmove(s.data() + w, b + q, le - q);
                        w += le - q;
                        q = e + 1;
                    }
                    rec.raw_len = 0;
                    rec.seq_off = s_beg;
                    rec.seq_len = w - s_beg;
                    pos = end;
                    return parse_status::record;
                }
                std::size_t const joined_off = joined_.size();
                for (std::size_t q = s_beg; q < end;)
                {
                    std::size_t const e = static_cast<std::size_t>(
                        static_cast<char const *>(std::memchr(b + q, '\n', end - q)) - b);
                    std::size_t const le = e > q && b[e - 1] == '\r' ? e - 1 : e;
                    joined_.append(b + q, le - q);
                    q = e + 1;
                }
                rec.seq_off = joined_off | joined_flag;
                rec.seq_len = joined_.size() - joined_off;
            }
        }
        pos = end;
        (void)record;
        return parse_status::record;
    }

    std::unique_ptr<byte_source> source_;
    bool keep_raw_{true};
    std::string carry_;
    std::string joined_;
    std::vector<record_offsets> offsets_;
    bool eof_{false};
    std::string pending_error_;
    std::string no_header_;
};

// ---------------------------------------------------------------------------------------------------
// SAM / BAM / CRAM through htslib

// Pushes the bytes of a source into a socket that htslib reads (for inputs wrapped in extra gzip layers).
class socket_feeder
{
public:
    explicit socket_feeder(std::unique_ptr<byte_source> source) : source_{std::move(source)}
    {
        int fds[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
            throw io_error{std::string{"cannot create socket pair: "} + std::strerror(errno)};
        read_fd_ = fds[0];
        write_fd_ = fds[1];
        thread_ = std::thread{[this] { run(); }};
    }
    ~socket_feeder() { join(); }
    socket_feeder(socket_feeder const &) = delete;
    socket_feeder & operator=(socket_feeder const &) = delete;

    // The read end (ownership passes to the caller, who must close it before join()).
    [[nodiscard]] int read_fd() const noexcept { return read_fd_; }
    void join()
    {
        if (thread_.joinable())
            thread_.join();
    }
    // Error of the source, valid after join().
    [[nodiscard]] std::string const & error() const noexcept { return error_; }

private:
    void run()
    {
        std::vector<char> buf(std::size_t{256} << 10);
        try
        {
            for (;;)
            {
                std::size_t const n = source_->read(buf.data(), buf.size());
                if (n == 0)
                    break;
                std::size_t sent = 0;
                while (sent < n)
                {
                    ssize_t const k = ::send(write_fd_, buf.data() + sent, n - sent, MSG_NOSIGNAL);
                    if (k < 0 && errno == EINTR)
                        continue;
                    if (k <= 0)
                    {
                        sent = n + 1; // reader went away
                        break;
                    }
                    sent += static_cast<std::size_t>(k);
                }
                if (sent > n)
                    break;
            }
        }
        catch (source_error const & e)
        {
            error_ = e.what();
        }
        ::close(write_fd_);
    }

    std::unique_ptr<byte_source> source_;
    int read_fd_{-1};
    int write_fd_{-1};
    std::string error_;
    std::thread thread_;
};

constexpr char const * cram_failure =
    "cannot decode CRAM record: the reference it was compressed against is not available (htslib looks it up "
    "through the UR: field of the @SQ lines, REF_PATH and REF_CACHE), or the file is corrupted or truncated";

// " (htslib: ...)" with the last error htslib logged, or nothing.
std::string htslib_said()
{
    std::string const said = take_htslib_error();
    return said.empty() ? std::string{} : " (htslib: " + said + ")";
}

// The most bytes a BGZF file of `compressed` bytes can decompress to (a 64 KiB block compresses to at least
// about 90 bytes: deflate expands at most 1032-fold, plus the block's header and footer).
std::uint64_t bgzf_decompressed_bound(std::uint64_t const compressed) noexcept
{
    return compressed * 1100 + 65536;
}

// htslib 1.16 allocates a BAM header's text and reference arrays by the sizes the header declares before
// reading them: refuse sizes that the input cannot hold (regular files) or that exceed the memory limit.
// Only the first decompressed block is looked at (it is loaded, not consumed).
void check_bam_header_sizes(BGZF * const bg, std::string const & path)
{
    std::uint64_t bound = memory_limit();
    struct stat st{};
    if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
        bound = std::min(bound, bgzf_decompressed_bound(static_cast<std::uint64_t>(st.st_size)));
    if (bg == nullptr || (bg->block_offset == bg->block_length && bgzf_read_block(bg) != 0))
        return; // sam_hdr_read reports the error
    auto const * const block = static_cast<unsigned char const *>(bg->uncompressed_block) + bg->block_offset;
    std::uint64_t const avail = static_cast<std::uint64_t>(bg->block_length - bg->block_offset);
    auto u32 = [&](std::uint64_t const at) {
        return std::uint64_t{block[at]} | std::uint64_t{block[at + 1]} << 8 | std::uint64_t{block[at + 2]} << 16 |
               std::uint64_t{block[at + 3]} << 24;
    };
    if (avail < 8 || std::memcmp(block, "BAM\1", 4) != 0)
        return;
    std::uint64_t const l_text = u32(4);
    auto refuse = [&](char const * const what, std::uint64_t const n) {
        throw input_error{"'" + display_name(path) + "': the BAM header declares " + std::to_string(n) + " " + what +
                          ", more than the input can hold or the memory limit allows: the file is corrupted"};
    };
    if (l_text > bound)
        refuse("bytes of header text", l_text);
    if (avail >= 12 + l_text && u32(8 + l_text) > bound / 9) // each reference takes at least 9 bytes
        refuse("reference sequences", u32(8 + l_text));
}

class sam_reader final : public file_reader
{
public:
    sam_reader(std::string path, hFILE * const hf, reader_options const & options,
               std::unique_ptr<socket_feeder> feeder = nullptr)
        : file_reader{std::move(path), options, seq_format::bam}, feeder_{std::move(feeder)}
    {
        (void)take_htslib_error(); // a message of an earlier input is not this one's
        fp_ = hts_hopen(hf, path_.c_str(), "r");
        if (fp_ == nullptr)
        {
            hclose_abruptly(hf);
            cleanup();
            throw input_error{"'" + display_name(path_) + "': cannot open as SAM/BAM/CRAM" + htslib_said()};
        }
        switch (hts_get_format(fp_)->format)
        {
        case bam:
            format_ = seq_format::bam;
            break;
        case cram:
            format_ = seq_format::cram;
            break;
        case sam:
            format_ = seq_format::sam;
            break;
        default:
            cleanup();
            throw input_error{"'" + display_name(path_) + "': record 1: " + unsupported_message({})};
        }
        if (format_ == seq_format::bam)
        {
            try
            {
                check_bam_header_sizes(fp_->fp.bgzf, path_);
            }
            catch (...)
            {
                cleanup();
                throw;
            }
        }
        hdr_ = sam_hdr_read(fp_);
        if (hdr_ == nullptr)
        {
            cleanup();
            throw input_error{"'" + display_name(path_) + "': cannot read the SAM/BAM/CRAM header" + htslib_said()};
        }
        // A BGZF (BAM, bgzipped SAM) or CRAM file cut short at a block boundary reads as complete: only its
        // missing end-of-file marker shows the truncation. Checked here for files that can seek, at the end
        // of the data for pipes.
        int const eof = hts_check_EOF(fp_); // 0: marker missing, 1: present, 2: cannot seek, 3: no marker in the format
        if (eof == 0 && !options_.allow_missing_eof)
        {
            cleanup();
            throw input_error{"'" + display_name(path_) + "': " + missing_eof_message};
        }
        check_eof_at_end_ = eof == 2 && !options_.allow_missing_eof && hts_get_format(fp_)->compression == bgzf;
        // Decompression threads only after the header, and only for a file that ends with its EOF marker:
        // with threads, htslib 1.16 waits forever in sam_hdr_read() on a truncated BAM, or reports the
        // truncated end as a clean end of file. Single-threaded reading reports truncation as an error (and is
        // used for pipes, whose end cannot be checked beforehand).
        if (options_.threads > 1 && (eof == 1 || eof == 3))
            if (htsThreadPool * const pool = detail::hts_thread_pool(options_.threads); pool != nullptr)
                (void)hts_set_thread_pool(fp_, pool);
        header_.assign(sam_hdr_str(hdr_), sam_hdr_length(hdr_));
        rec_ = bam_init1();
        if (rec_ == nullptr)
        {
            cleanup();
            throw std::bad_alloc{};
        }
    }

    ~sam_reader() override { cleanup(); }
    sam_reader(sam_reader const &) = delete;
    sam_reader & operator=(sam_reader const &) = delete;

    bool fill(record_batch & batch, std::size_t max_records, std::size_t const max_bases,
              std::size_t const multiple) override
    {
        max_records = std::max<std::size_t>(max_records, 1);
        begin_batch(batch);
        std::string & s = batch.storage_;
        s.reserve(64);
        offsets_.clear();
        std::size_t n = 0;
        std::size_t bases = 0;
        std::size_t const core = bam_core_bytes();
        while (!eof_ && n < max_records)
        {
            int const r = sam_read1(fp_, hdr_, rec_);
            if (r < -1)
                fail(records_ + n + 1, format_ == seq_format::cram ? cram_failure : "malformed or truncated SAM/BAM/CRAM record");
            if (r == -1)
            {
                eof_ = true;
                if (check_eof_at_end_)
                {
                    BGZF const * const bg = fp_->is_bgzf ? fp_->fp.bgzf : nullptr;
                    if (bg != nullptr && bg->no_eof_block != 0)
                        fail(records_ + n + 1, missing_eof_message);
                }
                if (feeder_ != nullptr)
                {
                    feeder_->join();
                    if (!feeder_->error().empty())
                        fail(records_ + n + 1, feeder_->error());
                }
                break;
            }
            bam1_t const & b = *rec_;
            record_offsets o{};
            o.raw_off = s.size();
            o.raw_len = core + static_cast<std::size_t>(b.l_data);
            s.append(reinterpret_cast<char const *>(&b.core), core);
            s.append(reinterpret_cast<char const *>(b.data), static_cast<std::size_t>(b.l_data));
            o.header_off = o.raw_off + core;
            o.header_len = std::strlen(bam_get_qname(&b));
            o.name_len = o.header_len;
            auto const len = static_cast<std::size_t>(std::max(b.core.l_qseq, 0));
            o.seq_off = s.size();
            o.seq_len = len;
            std::size_t const at = s.size();
            s.resize(at + len);
            std::uint8_t const * const seq = bam_get_seq(&b);
            for (std::size_t i = 0; i < len; ++i)
                s[at + i] = seq_nt16_str[bam_seqi(seq, i)];
            std::uint8_t const * const qual = bam_get_qual(&b);
            o.qual_off = s.size();
            if (len > 0 && qual[0] != 0xff)
            {
                o.qual_len = len;
                std::size_t const qa = s.size();
                s.resize(qa + len);
                for (std::size_t i = 0; i < len; ++i)
                    s[qa + i] = static_cast<char>(qual[i] + 33);
            }
            offsets_.push_back(o);
            ++n;
            bases += len;
            if (bases >= max_bases && n % std::max<std::size_t>(multiple, 1) == 0)
                break;
        }
        make_views(batch, offsets_, s.size());
        records_ += n;
        return n > 0;
    }

    [[nodiscard]] std::string const & sam_header() const noexcept override { return header_; }

private:
    // The error of a record, with what htslib said about it.
    [[noreturn]] void fail(std::uint64_t const record, std::string const & what)
    {
        std::string const said = take_htslib_error();
        throw input_error{record_message(path_, record, said.empty() ? what : what + " (htslib: " + said + ")")};
    }

    void cleanup() noexcept
    {
        if (rec_ != nullptr)
            bam_destroy1(rec_);
        rec_ = nullptr;
        if (hdr_ != nullptr)
            sam_hdr_destroy(hdr_);
        hdr_ = nullptr;
        if (fp_ != nullptr)
            (void)hts_close(fp_);
        fp_ = nullptr;
        if (feeder_ != nullptr)
            feeder_->join();
    }

    std::unique_ptr<socket_feeder> feeder_;
    htsFile * fp_{nullptr};
    sam_hdr_t * hdr_{nullptr};
    bam1_t * rec_{nullptr};
    std::string header_;
    std::vector<record_offsets> offsets_;
    bool eof_{false};
    bool check_eof_at_end_{false}; // a BGZF pipe: the last block must be the end-of-file marker
};

// `layers` gzip layers peeled off `hf` (the outermost through htslib's threaded BGZF reader if it is BGZF).
std::unique_ptr<byte_source> peel(hFILE * const hf, int const layers, bool const top_bgzf,
                                  reader_options const & options)
{
    if (layers == 0)
        return make_hfile_source(hf);
    std::unique_ptr<byte_source> src =
        top_bgzf ? make_bgzf_source(hf, options.threads, options.allow_missing_eof)
                 : make_gzip_source(make_hfile_source(hf));
    for (int i = 1; i < layers; ++i)
        src = make_gzip_source(std::move(src));
    return src;
}

// The descriptor of the regular file the last open_reader() call on this thread opened, -1 if none.
thread_local int last_opened_fd = -1;

std::unique_ptr<reader> open_reader(std::string const & path, reader_options const & options);

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

std::unique_ptr<reader> detail::make_annotated_reader(std::string path, std::unique_ptr<byte_source>,
                                                      annotated_format, reader_options const &)
{
    throw input_error{"'" + display_name(path) + "': GenBank and EMBL input need ksieve built with seqan3"};
}
#endif

std::unique_ptr<reader> reader::open(std::string const & path, reader_options const & options)
{
    auto r = open_reader(path, options);
    // A regular file opened here: its descriptor's offset tells how far the reading got.
    struct stat st
    {
    };
    if (path != "-" && path.find("://") == std::string::npos && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
        r->position_fd_ = last_opened_fd;
    return r;
}

namespace
{

std::unique_ptr<reader> open_reader(std::string const & path, reader_options const & options)
{
    quiet_htslib();
    hFILE * hf = nullptr;
    errno = 0;
    last_opened_fd = -1;
    if (path == "-")
    {
        int const fd = ::dup(STDIN_FILENO);
        if (fd >= 0)
        {
            hf = hdopen(fd, "r");
            if (hf == nullptr)
                ::close(fd);
        }
    }
    else if (path.find("://") == std::string::npos)
    {
        int const fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
        {
            hf = hdopen(fd, "r");
            if (hf == nullptr)
                ::close(fd);
            else
                last_opened_fd = fd;
        }
    }
    else
        hf = hopen(path.c_str(), "r"); // URLs through htslib's plugins
    if (hf == nullptr)
        throw io_error{"'" + display_name(path) +
                       "': cannot open: " + std::strerror(errno != 0 ? errno : EIO)};

    std::string head(std::size_t{64} << 10, '\0');
    errno = 0;
    ssize_t const n = hpeek(hf, head.data(), head.size());
    if (n < 0)
    {
        int const e = errno != 0 ? errno : EIO;
        hclose_abruptly(hf);
        throw io_error{"'" + display_name(path) + "': cannot read: " + std::strerror(e)};
    }
    head.resize(static_cast<std::size_t>(n));

    try
    {
        if (codec const c = codec_from_magic(head); c != codec::none)
        {
            // zstd, xz or bzip2: FASTA / FASTQ inside
            if (classify_content(decompress_prefix(c, head, std::size_t{64} << 10)) != content_kind::fastx)
                throw source_error{std::string{codec_name(c)} +
                                   "-compressed SAM/BAM/CRAM is not supported (FASTA and FASTQ are)"};
            hFILE * const owned = hf;
            hf = nullptr;
            return std::make_unique<fastx_reader>(path, make_codec_source(c, make_hfile_source(owned)), options);
        }
        bool const top_bgzf = is_bgzf(head);
        std::string inner = head;
        int depth = 0;
        while (is_gzip(inner) && depth < 8)
        {
            inner = inflate_prefix(inner, std::size_t{64} << 10);
            ++depth;
        }
        content_kind const kind = classify_content(inner);
        if (kind == content_kind::genbank || kind == content_kind::embl)
        {
            if (!have_annotated_input())
                throw source_error{std::string{kind == content_kind::genbank ? "GenBank" : "EMBL"} +
                                   " input needs ksieve built with seqan3 (convert it to FASTA first)"};
            hFILE * const owned = hf;
            hf = nullptr;
            return make_annotated_reader(path, peel(owned, depth, top_bgzf, options),
                                         kind == content_kind::genbank ? annotated_format::genbank
                                                                       : annotated_format::embl,
                                         options);
        }
        if (kind != content_kind::fastx)
        {
            // htslib itself handles one gzip/BGZF layer of SAM and BAM, none of CRAM
            int const strip = kind == content_kind::cram ? depth : std::max(depth - 1, 0);
            if (strip == 0)
            {
                hFILE * const owned = hf;
                hf = nullptr;
                return std::make_unique<sam_reader>(path, owned, options);
            }
            hFILE * const owned = hf;
            hf = nullptr;
            auto feeder = std::make_unique<socket_feeder>(peel(owned, strip, top_bgzf, options));
            hFILE * const fed = hdopen(feeder->read_fd(), "r");
            if (fed == nullptr)
            {
                ::close(feeder->read_fd());
                throw io_error{"'" + display_name(path) + "': cannot open: " + std::strerror(errno)};
            }
            return std::make_unique<sam_reader>(path, fed, options, std::move(feeder));
        }
        hFILE * const owned = hf;
        hf = nullptr;
        return std::make_unique<fastx_reader>(path, peel(owned, depth, top_bgzf, options), options);
    }
    catch (source_error const & e)
    {
        if (hf != nullptr)
            hclose_abruptly(hf);
        throw input_error{record_message(path, 1, e.what())};
    }
}

} // namespace

} // namespace ksieve::io
