// Record batches (copies that rebase their views), format names and output formats by extension,
// and the helpers that turn parsed offsets into record views.
#include "codecs.hpp"
#include "detail.hpp"

#include <algorithm>
#include <array>

namespace ksieve::io
{

namespace
{

// Views of `records` re-expressed relative to `to` (they pointed into `from`).
void rebase(std::vector<record_view> & records, char const * const from,
            char const * const to) noexcept
{
    if (from == to)
        return;
    auto const move_view = [&](std::string_view & v)
    {
        if (v.data() != nullptr)
            v = std::string_view{to + (v.data() - from), v.size()};
    };
    for (record_view & r : records)
    {
        move_view(r.name);
        move_view(r.header);
        move_view(r.seq);
        move_view(r.qual);
        move_view(r.raw);
    }
}

} // namespace

void record_batch::clear() noexcept
{
    records_.clear();
    storage_.clear();
    first_ = 1;
    bases_ = 0;
}

record_batch::record_batch(record_batch const & other)
{
    *this = other;
}

record_batch::record_batch(record_batch && other) noexcept
{
    *this = std::move(other);
}

record_batch & record_batch::operator=(record_batch const & other)
{
    if (this != &other)
    {
        records_ = other.records_;
        storage_ = other.storage_;
        first_ = other.first_;
        format_ = other.format_;
        bases_ = other.bases_;
        rebase(records_, other.storage_.data(), storage_.data());
    }
    return *this;
}

record_batch & record_batch::operator=(record_batch && other) noexcept
{
    if (this != &other)
    {
        records_ = std::move(other.records_);
        first_ = other.first_;
        format_ = other.format_;
        bases_ = other.bases_;
        char const * const old = other.storage_.data();
        storage_ = std::move(other.storage_);
        rebase(records_, old, storage_.data());
        other.clear();
    }
    return *this;
}

bool mate_names_match(std::string_view a, std::string_view b) noexcept
{
    auto const trim = [](std::string_view s)
    {
        std::size_t const ws = s.find_first_of(" \t");
        if (ws != std::string_view::npos)
            s = s.substr(0, ws);
        if (s.size() >= 2 && s[s.size() - 2] == '/' && (s.back() == '1' || s.back() == '2'))
            s.remove_suffix(2);
        return s;
    };
    std::string_view const x = trim(a);
    std::string_view const y = trim(b);
    if (x == y)
        return true;
    // fastq-dump --readids and similar: "NAME.1"/"NAME.2", "NAME_1"/"NAME_2", "NAME:1"/"NAME:2"
    std::size_t const n = x.size();
    return n >= 2 && y.size() == n && x.back() == '1' && y.back() == '2' && x[n - 2] == y[n - 2] &&
           (x[n - 2] == '.' || x[n - 2] == '_' || x[n - 2] == ':') &&
           x.substr(0, n - 2) == y.substr(0, n - 2);
}

bool hts_format(seq_format const f) noexcept
{
    return f == seq_format::sam || f == seq_format::bam || f == seq_format::cram;
}

std::string format_name(seq_format const f)
{
    static constexpr std::array<char const *, 5> names{"FASTA", "FASTQ", "SAM", "BAM", "CRAM"};
    auto const i = static_cast<std::size_t>(f);
    return i < names.size() ? names[i] : "?";
}

seq_format format_from_extension(std::string const & path, seq_format const fallback) noexcept
{
    std::string const lower = detail::lower_case(path);
    std::string_view name{lower};
    if (detail::codec_from_extension(name) != detail::codec::none) // its suffix dropped
        name = name.substr(0, name.rfind('.'));
    struct entry
    {
        std::string_view ext;
        seq_format format;
    };
    static constexpr entry table[] = {
        {".fq", seq_format::fastq},    {".fastq", seq_format::fastq}, {".fa", seq_format::fasta},
        {".fasta", seq_format::fasta}, {".fna", seq_format::fasta},   {".fas", seq_format::fasta},
        {".ffn", seq_format::fasta},   {".sam", seq_format::sam},     {".bam", seq_format::bam},
        {".cram", seq_format::cram},
    };
    for (entry const & e : table)
        if (name.ends_with(e.ext))
            return e.format;
    return fallback;
}

} // namespace ksieve::io

namespace ksieve::io::detail
{

std::string display_name(std::string const & path)
{
    return path == "-" ? std::string{"<stdin>"} : path;
}

void make_views(record_batch & batch, std::vector<record_offsets> const & offsets,
                std::uint64_t const joined_base)
{
    char const * const base = batch.storage_.data();
    batch.records_.resize(offsets.size());
    std::size_t bases = 0;
    // a field's offset in storage_ (bit 63: relative to the joined block)
    auto const joined = [joined_base](std::uint64_t const off)
    { return (off & joined_flag) != 0 ? joined_base + (off & ~joined_flag) : off; };
    for (std::size_t i = 0; i < offsets.size(); ++i)
    {
        record_offsets const & o = offsets[i];
        record_view & r = batch.records_[i];
        r.raw = std::string_view{base + o.raw_off, o.raw_len};
        r.header = std::string_view{base + o.header_off, o.header_len};
        r.name = std::string_view{base + o.header_off, o.name_len};
        r.seq = std::string_view{base + joined(o.seq_off), o.seq_len};
        r.qual = std::string_view{base + joined(o.qual_off), o.qual_len};
        bases += o.seq_len;
    }
    batch.bases_ = bases;
}

void append_copy(std::string & storage, std::vector<record_offsets> & offsets,
                 record_view const & record)
{
    std::uint64_t const raw_off = storage.size();
    storage.append(record.raw);
    char const * const raw_begin = record.raw.data();
    char const * const raw_end = raw_begin + record.raw.size();
    // A field inside raw keeps its position relative to raw; any other field is copied after it.
    auto const place = [&](std::string_view const field) -> std::uint64_t
    {
        if (field.empty())
            return raw_off;
        if (field.data() >= raw_begin && field.data() + field.size() <= raw_end)
            return raw_off + static_cast<std::uint64_t>(field.data() - raw_begin);
        std::uint64_t const off = storage.size();
        storage.append(field);
        return off;
    };
    record_offsets o{};
    o.raw_off = raw_off;
    o.raw_len = record.raw.size();
    // name is a prefix of header in every reader; keep it so
    o.header_off = place(record.header);
    o.header_len = record.header.size();
    o.name_len = std::min(record.name.size(), record.header.size());
    o.seq_off = place(record.seq);
    o.seq_len = record.seq.size();
    o.qual_off = place(record.qual);
    o.qual_len = record.qual.size();
    offsets.push_back(o);
}

} // namespace ksieve::io::detail
