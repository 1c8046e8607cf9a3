// The FASTA and FASTQ parser: records cut out of the decompressed bytes of a source in batches,
// multi-line FASTA and wrapped FASTQ records joined, malformed records reported by number.
#include "file_reader.hpp"

#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

namespace ksieve::io::detail
{

namespace
{

// The position of the first '\n' at or after `from`, npos if there is none.
std::size_t line_end(std::string const & s, std::size_t const from) noexcept
{
    if (from >= s.size())
        return std::string::npos;
    void const * const q = std::memchr(s.data() + from, '\n', s.size() - from);
    return q == nullptr ? std::string::npos
                        : static_cast<std::size_t>(static_cast<char const *>(q) - s.data());
}

// The end of the line [beg, end) without a '\r' before its '\n'.
std::size_t trim_cr(char const * const b, std::size_t const beg, std::size_t const end) noexcept
{
    return end > beg && b[end - 1] == '\r' ? end - 1 : end;
}

// Calls f(begin, end) for each line of [from, to) (end without '\r'). \pre b[to - 1] == '\n'.
template <typename F>
void for_each_line(char const * const b, std::size_t from, std::size_t const to, F && f)
{
    while (from < to)
    {
        std::size_t const e = static_cast<std::size_t>(
            static_cast<char const *>(std::memchr(b + from, '\n', to - from)) - b);
        f(from, trim_cr(b, from, e));
        from = e + 1;
    }
}

std::size_t name_length(char const * const header, std::size_t const len) noexcept
{
    for (std::size_t i = 0; i < len; ++i)
        if (header[i] == ' ' || header[i] == '\t')
            return i;
    return len;
}

std::size_t skip_blank(std::string const & s, std::size_t p) noexcept
{
    while (p < s.size() && (s[p] == '\n' || s[p] == '\r'))
        ++p;
    return p;
}

// A byte that can start a wrapped sequence line (IUPAC letters, gaps, '*'); never '@' or '+'.
bool is_sequence_byte(char const c) noexcept
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-' || c == '.' || c == '*';
}

// The header fields of a record whose marker is at p and whose header line's '\n' is at h_end.
void set_header(record_offsets & rec, char const * const b, std::size_t const p,
                std::size_t const h_end) noexcept
{
    rec.raw_off = p;
    rec.header_off = p + 1;
    rec.header_len = trim_cr(b, p + 1, h_end) - (p + 1);
    rec.name_len = name_length(b + p + 1, rec.header_len);
}

class fastx_reader final : public file_reader
{
public:
    fastx_reader(std::string path, std::unique_ptr<byte_source> source,
                 reader_options const & options)
        : file_reader{std::move(path), options, seq_format::fastq}, source_{std::move(source)}
    {
        // A UTF-8 byte order mark at the start (some editors write one) is dropped.
        while (carry_.size() < 3 && !eof_)
            refill(carry_, read_chunk, 1);
        if (std::string_view{carry_}.starts_with("\xEF\xBB\xBF"))
            carry_.erase(0, 3);
        std::size_t p = 0;
        for (;;)
        {
            p = skip_blank(carry_, p);
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
            // a long record grows by a quarter at a time: what refill reads ahead (and zero-fills
            // first) stays small beside it (doubling would touch up to twice a chromosome's bytes)
            if (options_.max_record_bytes != 0 && s.size() - pos > options_.max_record_bytes)
                throw input_error{record_message(
                    path_, records_ + n + 1,
                    "a record longer than the " + std::to_string(options_.max_record_bytes) +
                        " bytes that the memory limit lets this command hold at once (" +
                        memory_limit_origin() + "): raise --max-memory")};
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
            throw input_error{
                record_message(path_, record,
                               "truncated FASTQ record (input ends before the '+' line after its "
                               "sequence)")};
        throw input_error{record_message(
            path_, record,
            lines < 4 ? "truncated FASTQ record (input ends after " + std::to_string(lines) +
                            " of its 4 lines)"
                      : std::string{"truncated FASTQ record (input ends inside its quality)"})};
    }

    // The start of the next FASTA or FASTQ record: blank lines skipped (pos moves to the record),
    // its first byte checked against `marker`, the end of its header line found (h_end, at its
    // '\n'). \returns record when the header line is complete, empty at the end of the text,
    // partial otherwise.
    parse_status record_head(std::string const & s, std::size_t & pos, char const marker,
                             char const * const format, std::uint64_t const record,
                             std::size_t & h_end) const
    {
        pos = skip_blank(s, pos);
        if (pos == s.size())
            return parse_status::empty;
        if (s[pos] != marker)
            throw input_error{record_message(path_, record,
                                             std::string{"expected '"} + marker +
                                                 "' at the start of a " + format +
                                                 " record, found " + describe_byte(s[pos]))};
        h_end = line_end(s, pos);
        return h_end == std::string::npos ? parse_status::partial : parse_status::record;
    }

    parse_status parse_fastq(std::string const & s, std::size_t & pos, record_offsets & rec,
                             std::uint64_t const record)
    {
        std::size_t h_end = 0;
        if (parse_status const st = record_head(s, pos, '@', "FASTQ", record, h_end);
            st != parse_status::record)
            return st;
        char const * const b = s.data();
        std::size_t const s_beg = h_end + 1;
        std::size_t const s_end = line_end(s, s_beg);
        if (s_end == std::string::npos)
            return parse_status::partial;
        std::size_t const p_beg = s_end + 1;
        if (p_beg >= s.size())
            return parse_status::partial;
        if (b[p_beg] != '+')
        {
            if (!is_sequence_byte(b[p_beg]))
                throw input_error{record_message(path_, record,
                                                 "expected a '+' line after the sequence, found " +
                                                     describe_byte(b[p_beg]))};
            return parse_fastq_multiline(s, pos, rec, record, h_end);
        }
        std::size_t const p_end = line_end(s, p_beg);
        if (p_end == std::string::npos)
            return parse_status::partial;
        std::size_t const q_beg = p_end + 1;
        std::size_t const q_end = line_end(s, q_beg);
        if (q_end == std::string::npos)
            return parse_status::partial;
        set_header(rec, b, pos, h_end);
        std::size_t const seq_end = trim_cr(b, s_beg, s_end);
        std::size_t const qual_end = trim_cr(b, q_beg, q_end);
        if (std::size_t const plus_end = trim_cr(b, p_beg, p_end); plus_end - p_beg > 1)
            [[unlikely]]
            check_plus_line({b + rec.header_off, rec.header_len},
                            {b + p_beg + 1, plus_end - (p_beg + 1)}, record);
        if (qual_end - q_beg != seq_end - s_beg)
            throw input_error{record_message(path_, record,
                                             "quality length " + std::to_string(qual_end - q_beg) +
                                                 " differs from sequence length " +
                                                 std::to_string(seq_end - s_beg))};
        rec.raw_len = q_end + 1 - pos;
        rec.seq_off = s_beg;
        rec.seq_len = seq_end - s_beg;
        rec.qual_off = q_beg;
        rec.qual_len = qual_end - q_beg;
        pos = q_end + 1;
        return parse_status::record;
    }

    // A '+' line that repeats a title must repeat this record's (its whole header, or its name).
    void check_plus_line(std::string_view header, std::string_view plus,
                         std::uint64_t const record) const
    {
        auto const rtrim = [](std::string_view & v)
        {
            while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
                v.remove_suffix(1);
        };
        rtrim(header);
        rtrim(plus);
        if (plus.empty() || plus == header ||
            plus == header.substr(0, name_length(header.data(), header.size())))
            return;
        throw input_error{record_message(path_, record,
                                         "the '+' line names '" + std::string{plus.substr(0, 80)} +
                                             "', not this record's '" +
                                             std::string{header.substr(0, 80)} + "'")};
    }

    // A FASTQ record whose sequence is wrapped over several lines (old Sanger-style files):
    // sequence lines up to the '+' line, then quality lines until they hold as many characters as
    // the sequence. Both are joined (without line ends) into joined_; raw keeps the record's bytes
    // as they are. A one-line sequence never takes this path, so its quality must be one line too
    // (a short quality is an error, not a wrap). Unless a record is returned or an error thrown,
    // joined_ is as it was.
    parse_status parse_fastq_multiline(std::string const & s, std::size_t & pos,
                                       record_offsets & rec, std::uint64_t const record,
                                       std::size_t const h_end)
    {
        std::size_t const joined_seq = joined_.size();
        parse_status const st = parse_wrapped(s, pos, rec, record, h_end);
        if (st != parse_status::record)
            joined_.resize(joined_seq);
        return st;
    }

    // parse_fastq_multiline's steps, without the undo of joined_.
    parse_status parse_wrapped(std::string const & s, std::size_t & pos, record_offsets & rec,
                               std::uint64_t const record, std::size_t const h_end)
    {
        char const * const b = s.data();
        std::size_t const joined_seq = joined_.size();
        std::size_t q = h_end + 1;
        if (!append_sequence_lines(s, q, record))
            return parse_status::partial;
        std::size_t const seq_len = joined_.size() - joined_seq;
        std::size_t const plus_end = line_end(s, q);
        if (plus_end == std::string::npos)
            return parse_status::partial;
        set_header(rec, b, pos, h_end);
        if (std::size_t const plus_content = trim_cr(b, q, plus_end); plus_content - q > 1)
            check_plus_line({b + rec.header_off, rec.header_len},
                            {b + q + 1, plus_content - (q + 1)}, record);
        // quality lines until they hold seq_len characters
        std::size_t const joined_qual = joined_.size();
        q = plus_end + 1;
        while (joined_.size() - joined_qual < seq_len)
            if (!append_line(s, q))
                return parse_status::partial;
        std::size_t const qual_len = joined_.size() - joined_qual;
        if (qual_len != seq_len)
            throw input_error{record_message(path_, record,
                                             "quality length " + std::to_string(qual_len) +
                                                 " differs from sequence length " +
                                                 std::to_string(seq_len) + " (wrapped record)")};
        rec.raw_len = q - pos;
        rec.seq_off = joined_seq | joined_flag;
        rec.seq_len = seq_len;
        rec.qual_off = joined_qual | joined_flag;
        rec.qual_len = qual_len;
        pos = q;
        return parse_status::record;
    }

    // The sequence lines of a wrapped record from q on, appended to joined_; q moves to its '+'
    // line. \returns false if the text ends first.
    bool append_sequence_lines(std::string const & s, std::size_t & q, std::uint64_t const record)
    {
        for (;;)
        {
            if (q >= s.size())
                return false;
            if (s[q] == '+')
                return true;
            if (!is_sequence_byte(s[q]) && s[q] != '\n' && s[q] != '\r')
                throw input_error{record_message(path_, record,
                                                 "expected a '+' line after the sequence, found " +
                                                     describe_byte(s[q]))};
            if (!append_line(s, q))
                return false;
        }
    }

    // Appends the line at q (without its line end) to joined_, q past it; false if incomplete.
    bool append_line(std::string const & s, std::size_t & q)
    {
        std::size_t const e = line_end(s, q);
        if (e == std::string::npos)
            return false;
        joined_.append(s.data() + q, trim_cr(s.data(), q, e) - q);
        q = e + 1;
        return true;
    }

    parse_status parse_fasta(std::string & s, std::size_t & pos, record_offsets & rec,
                             std::uint64_t const record)
    {
        std::size_t h_end = 0;
        if (parse_status const st = record_head(s, pos, '>', "FASTA", record, h_end);
            st != parse_status::record)
            return st;
        std::size_t const end = fasta_record_end(s, h_end);
        if (end == s.size() && !eof_)
            return parse_status::partial;
        set_header(rec, s.data(), pos, h_end);
        rec.raw_len = end - pos;
        rec.qual_off = pos;
        rec.qual_len = 0;
        fasta_sequence(s, h_end + 1, end, rec);
        pos = end;
        return parse_status::record;
    }

    // Where the FASTA record whose header line ends at h_end ends: before the next line that starts
    // with '>', or at the end of the text.
    static std::size_t fasta_record_end(std::string const & s, std::size_t const h_end) noexcept
    {
        char const * const b = s.data();
        std::size_t const size = s.size();
        for (std::size_t q = h_end + 1; q < size;)
        {
            void const * const r = std::memchr(b + q, '>', size - q);
            if (r == nullptr)
                break;
            std::size_t const ri = static_cast<std::size_t>(static_cast<char const *>(r) - b);
            if (b[ri - 1] == '\n')
                return ri;
            q = ri + 1;
        }
        return size;
    }

    // The sequence of a FASTA record, lines [s_beg, end): one line stays in place; several are
    // joined, in place over the record's text without keep_raw (its raw view then empty), else into
    // joined_.
    void fasta_sequence(std::string & s, std::size_t const s_beg, std::size_t const end,
                        record_offsets & rec)
    {
        char const * const b = s.data();
        rec.seq_off = s_beg;
        rec.seq_len = 0;
        if (s_beg >= end)
            return;
        std::size_t const first_end = line_end(s, s_beg);
        if (first_end + 1 == end)
        {
            rec.seq_len = trim_cr(b, s_beg, first_end) - s_beg;
            return;
        }
        if (!options_.keep_raw)
        {
            // in place: each line moves left over the line breaks before it
            std::size_t w = s_beg;
            for_each_line(b, s_beg, end,
                          [&](std::size_t const q, std::size_t const le)
                          {
                              std::memmove(s.data() + w, b + q, le - q);
                              w += le - q;
                          });
            rec.raw_len = 0;
            rec.seq_len = w - s_beg;
            return;
        }
        std::size_t const joined_off = joined_.size();
        for_each_line(b, s_beg, end,
                      [&](std::size_t const q, std::size_t const le)
                      { joined_.append(b + q, le - q); });
        rec.seq_off = joined_off | joined_flag;
        rec.seq_len = joined_.size() - joined_off;
    }

    std::unique_ptr<byte_source> source_;
    std::string carry_;
    std::string joined_;
    std::vector<record_offsets> offsets_;
    bool eof_{false};
    std::string pending_error_;
    std::string no_header_;
};

} // namespace

std::unique_ptr<reader> make_fastx_reader(std::string path, std::unique_ptr<byte_source> source,
                                          reader_options const & options)
{
    return std::make_unique<fastx_reader>(std::move(path), std::move(source), options);
}

} // namespace ksieve::io::detail
