// The filter file format: the writers (whole or shard by shard) and the checks of a file's header,
// label table, shard table, end marker and payloads (the bytes reach the disk through file_sink;
// mapped_ranges.cpp maps files and calls parse()).
#include "file_sink.hpp"

#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/kmers/low_complexity.hpp>
#include <ksieve/filters/support/checksum.hpp>
#include <ksieve/filters/support/error.hpp>

#include <atomic>
#include <bit>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

static_assert(std::endian::native == std::endian::little,
              "ksieve filter payloads are little-endian words and are mmap'd directly");

namespace ksieve
{

namespace
{

using detail::file_magic;
using detail::file_sink;
using detail::load_little_endian;
using detail::put_little_endian;

constexpr char end_magic[8] = {'K', 'S', 'I', 'E', 'V', 'E', 'n', 'd'};
constexpr std::uint64_t end_size = 24;
constexpr std::uint64_t fixed_header = 64;
constexpr std::uint64_t max_shard_bits = 24;
constexpr std::uint64_t max_params = 1u << 16;
constexpr double max_fpr = 0.5;
constexpr std::uint64_t shard_entry_bytes = 32; // offset, words, checksum, parameter count, padding

constexpr std::uint64_t align8(std::uint64_t const x) noexcept
{
    return (x + 7) & ~std::uint64_t{7};
}
constexpr std::uint64_t align64(std::uint64_t const x) noexcept
{
    return (x + 63) & ~std::uint64_t{63};
}

class byte_writer
{
public:
    void u32(std::uint32_t const v) { put_little_endian(buf_, v, 4); }
    void u64(std::uint64_t const v) { put_little_endian(buf_, v, 8); }
    void raw(char const * p, std::size_t n)
    {
        std::size_t const old = buf_.size();
        buf_.resize(old + n);
        std::memcpy(buf_.data() + old, p, n);
    }
    void pad_to(std::size_t n) { buf_.resize(n, 0); }
    std::vector<unsigned char> & bytes() noexcept { return buf_; }

private:
    std::vector<unsigned char> buf_;
};

format_error corrupt(std::string const & name, std::string const & what)
{
    return format_error{"'" + name + "': corrupted filter file (" + what + ")"};
}

format_error truncated(std::string const & name, std::string const & what)
{
    return format_error{"'" + name + "': truncated or corrupted filter file (" + what + ")"};
}

class byte_reader
{
public:
    byte_reader(unsigned char const * p, std::uint64_t size, std::string const & name)
        : p_{p}, size_{size}, name_{name}
    {
    }
    std::uint32_t u32() { return static_cast<std::uint32_t>(uint(4)); }
    std::uint64_t u64() { return uint(8); }
    std::uint64_t pos() const noexcept { return pos_; }
    std::span<unsigned char const> bytes(std::uint64_t const n)
    {
        need(n);
        std::span<unsigned char const> const b{p_ + pos_, static_cast<std::size_t>(n)};
        pos_ += n;
        return b;
    }
    void need(std::uint64_t n) const
    {
        if (n > size_ || pos_ > size_ - n)
            throw truncated(name_, "header extends past the end");
    }

private:
    std::uint64_t uint(unsigned const width)
    {
        need(width);
        std::uint64_t const v = load_little_endian(p_ + pos_, width);
        pos_ += width;
        return v;
    }

    unsigned char const * p_;
    std::uint64_t size_;
    std::string const & name_;
    std::uint64_t pos_{0};
};

// Where a shard's payload lies in the file and what the shard table says of it.
struct shard_record
{
    std::uint64_t offset{0};
    std::uint64_t words{0};
    std::uint64_t checksum{0};
    std::vector<std::uint64_t> params;
};

// Bytes of a header with shard parameter counts `counts`.
std::uint64_t header_size_for(filter_file_header const & h,
                              std::span<std::size_t const> const counts)
{
    std::uint64_t size = fixed_header + 8 * h.params.size() + 8 + 8 * h.parts.held.size() + 8 +
                         (h.kmer.masked() || h.labels || h.kmer.is_spaced() ? 8 : 0) +
                         (h.kmer.is_spaced() ? 8 : 0) +
                         (h.labels ? 8 + align8(h.labels->encode().size()) : 0);
    for (auto const n : counts)
        size += 32 + 8 * n;
    return size + 8; // header checksum
}

void check_header(filter_file_header const & h, std::size_t const shards,
                  std::filesystem::path const & path)
{
    if (shards != (std::size_t{1} << h.shard_bits))
        throw error{"internal: shard count does not match shard bits while writing '" +
                    path.string() + "'"};
    if (h.parts.split < 1 || h.parts.split > key_parts::max_split ||
        h.parts.held.size() != (h.parts.split + 63) / 64)
        throw error{"internal: invalid key parts while writing '" + path.string() + "'"};
}

// The header's bytes (its size field = header_size), with the shard table of `records`.
byte_writer header_image(filter_file_header const & h, std::span<shard_record const> const records,
                         std::uint64_t const header_size, std::filesystem::path const & path)
{
    byte_writer w;
    w.raw(file_magic, 8);
    w.u32(h.kmer.is_spaced() ? filter_format_version
          : h.labels         ? labeled_format_version
          : h.kmer.masked()  ? masked_format_version
                             : unmasked_format_version);
    w.u32(static_cast<std::uint32_t>(header_size));
    w.u32(static_cast<std::uint32_t>(h.type));
    w.u32(h.kmer.k);
    w.u32(h.kmer.canonical ? 1u : 0u);
    w.u32(static_cast<std::uint32_t>(h.kmer.hash));
    w.u64(h.kmer.seed);
    w.u64(std::bit_cast<std::uint64_t>(h.fpr));
    w.u64(h.expected);
    w.u32(h.shard_bits);
    w.u32(static_cast<std::uint32_t>(h.params.size()));
    for (auto const p : h.params)
        w.u64(p);
    w.u64(h.parts.split);
    for (auto const word : h.parts.held)
        w.u64(word);
    w.u32(h.kmer.window > 1 ? sampling_minimizer : sampling_none);
    w.u32(h.kmer.window);
    if (h.kmer.masked() || h.labels || h.kmer.is_spaced())
    {
        w.u32(h.kmer.masked() ? mask_dust : mask_none);
        w.u32(h.kmer.dust_threshold);
    }
    if (h.kmer.is_spaced()) // version 6: the pattern, and whether a label table follows
    {
        w.u32(h.kmer.spaced);
        w.u32(h.labels ? 1u : 0u);
    }
    if (h.labels)
    {
        std::vector<unsigned char> const table = h.labels->encode();
        w.u64(table.size());
        w.raw(reinterpret_cast<char const *>(table.data()), table.size());
        w.pad_to(w.bytes().size() + align8(table.size()) - table.size()); // zeros
    }
    for (auto const & r : records)
    {
        w.u64(r.offset);
        w.u64(r.words);
        w.u64(r.checksum);
        w.u32(static_cast<std::uint32_t>(r.params.size()));
        w.u32(0);
        for (auto const p : r.params)
            w.u64(p);
    }
    w.u64(checksum64(w.bytes().data(), w.bytes().size()));
    if (w.bytes().size() != header_size)
        throw error{"internal: header size mismatch while writing '" + path.string() + "'"};
    return w;
}

unsigned char const zeros[64] = {};

// Zero padding to the next 64-byte boundary after pos, then `words`. \returns where they start.
std::uint64_t put_payload(file_sink & out, std::uint64_t const pos,
                          std::span<std::uint64_t const> const words)
{
    std::uint64_t const start = align64(pos);
    out.write(zeros, start - pos);
    out.write(words.data(), words.size_bytes());
    return start;
}

// The end marker after payloads that end at pos: its position, the file size and the checksum of
// the shards' checksums.
void put_end_marker(file_sink & out, std::uint64_t const pos,
                    std::span<shard_record const> const records)
{
    std::uint64_t const end_start = align64(pos);
    out.write(zeros, end_start - pos);
    std::uint64_t checksum_of_checksums = 0;
    for (auto const & r : records)
        checksum_of_checksums = mix64(checksum_of_checksums ^ r.checksum);
    byte_writer e;
    e.raw(end_magic, 8);
    e.u64(end_start + end_size);
    e.u64(checksum_of_checksums);
    out.write(e.bytes().data(), e.bytes().size());
}

/*! The fixed start of a file: magic, format version and header size, and the header's checksum.
 * Returns {version, header size}. */
std::pair<std::uint32_t, std::uint64_t>
read_preamble(unsigned char const * const bytes, std::uint64_t const size, std::string const & n)
{
    if (size < 8 || std::memcmp(bytes, file_magic, 8) != 0)
        throw format_error{"'" + n + "' is not a ksieve filter file (bad magic)"};
    byte_reader r{bytes, size, n};
    r.u64(); // magic
    std::uint32_t const version = r.u32();
    if (version > filter_format_version)
        throw format_error{"'" + n + "' was written by a newer ksieve (filter format version " +
                           std::to_string(version) + "; this ksieve reads up to version " +
                           std::to_string(filter_format_version) + "): upgrade ksieve"};
    if (version == 0)
        throw corrupt(n, "format version 0");
    std::uint64_t const header_size = r.u32();
    if (header_size < fixed_header + 8 || header_size + end_size > size)
        throw truncated(n, "header size " + std::to_string(header_size) +
                               " does not fit a file of " + std::to_string(size) + " bytes");
    if (checksum64(bytes, header_size - 8) != byte_reader{bytes + header_size - 8, 8, n}.u64())
        throw corrupt(n, "header checksum mismatch");
    return {version, header_size};
}

/*! The header's fixed fields and filter parameters (hr just after the preamble). */
void read_fixed_fields(byte_reader & hr, std::uint64_t const header_size, filter_file_header & h,
                       std::string const & n)
{
    std::uint32_t const type = hr.u32();
    if (type < 1 || type > 5)
        throw corrupt(n, "unknown filter type " + std::to_string(type));
    h.type = static_cast<filter_type>(type);
    h.kmer.k = hr.u32();
    if (h.kmer.k < 1 || h.kmer.k > max_k)
        throw corrupt(n, "k = " + std::to_string(h.kmer.k) + " out of range");
    std::uint32_t const flags = hr.u32();
    h.kmer.canonical = (flags & 1u) != 0;
    std::uint32_t const hid = hr.u32();
    if (hid != static_cast<std::uint32_t>(hash_id::mix2k_v1))
        throw format_error{"'" + n + "' uses hash function " + std::to_string(hid) +
                           ", unknown to this ksieve: upgrade ksieve"};
    h.kmer.hash = static_cast<hash_id>(hid);
    h.kmer.seed = hr.u64();
    h.fpr = std::bit_cast<double>(hr.u64());
    // (below 0.5, as make_filter builds them: a merge plans the sizes of such filters only)
    if (!(h.fpr >= 0.0 && h.fpr < max_fpr))
        throw corrupt(n, "false positive rate " + std::to_string(h.fpr) + " out of range");
    h.expected = hr.u64();
    h.shard_bits = hr.u32();
    // (every shard's local keys keep at least one bit)
    if (h.shard_bits > max_shard_bits || h.shard_bits >= 2 * h.kmer.k)
        throw corrupt(n, "shard bits " + std::to_string(h.shard_bits) + " out of range");
    std::uint64_t const nparams = hr.u32();
    if (nparams > max_params)
        throw corrupt(n, "too many parameters");
    // Declared counts are checked against the header's size before anything is allocated for them:
    // every shard entry takes at least shard_entry_bytes, every parameter 8 bytes.
    if (((std::uint64_t{1} << h.shard_bits) * shard_entry_bytes + nparams * 8) > header_size)
        throw truncated(n, "2^" + std::to_string(h.shard_bits) + " shards and " +
                               std::to_string(nparams) + " parameters do not fit a header of " +
                               std::to_string(header_size) + " bytes");
    h.params.resize(nparams);
    for (auto & p : h.params)
        p = hr.u64();
}

/*! The key parts held (format version 2 and later; whole before). */
key_parts read_key_parts(byte_reader & hr, std::uint32_t const version, std::string const & n)
{
    key_parts parts = key_parts::whole();
    if (version < 2)
        return parts;
    parts.split = hr.u64();
    if (parts.split < 1 || parts.split > key_parts::max_split)
        throw corrupt(n, "key split " + std::to_string(parts.split) + " out of range");
    parts.held.resize((parts.split + 63) / 64);
    bool any = false;
    for (auto & word : parts.held)
    {
        word = hr.u64();
        any = any || word != 0;
    }
    if (!any || (parts.split % 64 != 0 && (parts.held.back() >> (parts.split % 64)) != 0))
        throw corrupt(n, "invalid key part bitmap");
    return parts.complete() ? key_parts::whole() : parts;
}

/*! The sampling window (format version 3 and later; 1, no sampling, before). */
unsigned read_sampling_window(byte_reader & hr, std::uint32_t const version, std::string const & n)
{
    if (version < 3)
        return 1;
    std::uint32_t const scheme = hr.u32();
    std::uint32_t const window = hr.u32();
    if (scheme > sampling_minimizer || (scheme == sampling_none) != (window == 1) || window == 0 ||
        window > max_sampling_window)
        throw corrupt(n, "invalid sampling scheme " + std::to_string(scheme) + " with window " +
                             std::to_string(window));
    return window;
}

/*! The low-complexity mask's threshold (format version 4 and later; none, 0, before). */
std::uint32_t read_mask(byte_reader & hr, std::uint32_t const version, kmer_params const & kmer,
                        std::string const & n)
{
    if (version < 4)
        return 0;
    std::uint32_t const scheme = hr.u32();
    std::uint32_t const threshold = hr.u32();
    bool const valid = scheme == mask_none ? threshold == 0
                                           : scheme == mask_dust && threshold >= 1 &&
                                                 threshold <= max_dust_threshold &&
                                                 kmer.sampled() && kmer.k >= min_masked_k;
    if (!valid)
        throw corrupt(n, "invalid low-complexity mask " + std::to_string(scheme) +
                             " with threshold " + std::to_string(threshold) +
                             (kmer.sampled() ? "" : " (a mask needs minimizer sampling)"));
    return threshold;
}

/*! The class count of an encoded label table against the bytes after it, before the table is
 * decoded (and room reserved for its classes): each class takes at least 16 bytes (its size, one
 * label, its count). A table too short to hold the count is left to label_table::decode. */
void check_label_classes(std::span<unsigned char const> const t, std::string const & n)
{
    auto const at = [&](std::uint64_t const pos, unsigned const width)
    { return load_little_endian(t.data() + pos, width); };
    if (t.size() < 4)
        return;
    std::uint64_t const nlabels = at(0, 4);
    std::uint64_t pos = 4;
    for (std::uint64_t l = 0; l < nlabels; ++l)
    {
        if (t.size() - pos < 4 || at(pos, 4) > t.size() - pos - 4)
            return;
        pos += 4 + at(pos, 4);
    }
    if (t.size() - pos < 8)
        return;
    std::uint64_t const nclasses = at(pos, 8);
    if (nclasses > (t.size() - pos - 8) / 16)
        throw corrupt(n, "label table: " + std::to_string(nclasses) + " classes in " +
                             std::to_string(t.size() - pos - 8) + " bytes");
}

/*! The spaced pattern of the k-mers and whether a label table follows (format version 6 and
 * later; unspaced before, and a label table exactly in version 5). */
std::uint32_t read_spaced(byte_reader & hr, std::uint32_t const version, kmer_params const & kmer,
                          bool & has_labels, std::string const & n)
{
    has_labels = version == 5;
    if (version < 6)
        return 0;
    std::uint32_t const pattern = hr.u32();
    std::uint32_t const labels = hr.u32();
    if (pattern == 0 || !kmer.sampled() || !valid_spaced(kmer.k, kmer.canonical, pattern) ||
        labels > 1)
        throw corrupt(n, "invalid spaced k-mer pattern " + std::to_string(pattern) + " for k " +
                             std::to_string(kmer.k) + (kmer.sampled() ? "" : " without sampling"));
    has_labels = labels == 1;
    return pattern;
}

/*! The label table (where read_spaced says one follows); only quotient filters carry one (their
 * counts are the classes). */
std::shared_ptr<label_table const> read_labels(byte_reader & hr, bool const has_labels,
                                               filter_type const type, std::string const & n)
{
    if (!has_labels)
        return nullptr;
    std::uint64_t const size = hr.u64();
    std::span<unsigned char const> const bytes = hr.bytes(size);
    if (type != filter_type::quotient)
        throw corrupt(n, "a label table in a " + std::string{to_string(type)} + " filter");
    check_label_classes(bytes, n);
    auto table = std::make_shared<label_table const>(label_table::decode(bytes, n));
    (void)hr.bytes(align8(size) - size); // padding
    return table;
}

/*! Where the shard table leaves the payload: the end of the last payload, that end rounded up to 64
 * bytes, and the checksum over the shards' checksums. */
struct payload_extent
{
    std::uint64_t end{0};
    std::uint64_t aligned_end{0};
    std::uint64_t checksum_of_checksums{0};
};

/*! The shard table: each shard's parameters and payload words (inside the file, in order, 64-byte
 * aligned, zero padding between them). */
payload_extent read_shard_table(byte_reader & hr, unsigned char const * const bytes,
                                std::uint64_t const size, std::uint64_t const header_size,
                                std::vector<mapped_filter_file::shard_entry> & shards,
                                std::string const & n)
{
    payload_extent e{header_size, align64(header_size),
                     0}; // padding between e.end and a payload must be zero
    for (auto & s : shards)
    {
        std::uint64_t const offset = hr.u64();
        std::uint64_t const words = hr.u64();
        s.checksum = hr.u64();
        std::uint64_t const np = hr.u32();
        hr.u32();
        if (np > max_params || np * 8 > header_size - 8 - hr.pos())
            throw corrupt(n, "too many shard parameters");
        s.params.resize(np);
        for (auto & p : s.params)
            p = hr.u64();
        if (offset % 64 != 0 || offset < e.aligned_end || words > size / 8 ||
            offset > size - end_size || words * 8 > size - end_size - offset)
            throw truncated(n, "shard payload outside the file");
        for (std::uint64_t b = e.end; b < offset; ++b)
            if (bytes[b] != 0)
                throw corrupt(n, "non-zero padding before shard payload");
        s.words = {reinterpret_cast<std::uint64_t const *>(bytes + offset), words};
        e.end = offset + 8 * words;
        e.aligned_end = align64(e.end);
        e.checksum_of_checksums = mix64(e.checksum_of_checksums ^ s.checksum);
    }
    return e;
}

/*! The end marker: exact position and size catch truncation as well as appended bytes. */
void check_end_marker(unsigned char const * const bytes, std::uint64_t const size,
                      payload_extent const & e, std::string const & n)
{
    if (e.aligned_end + end_size != size || std::memcmp(bytes + size - end_size, end_magic, 8) != 0)
        throw truncated(n, "end marker missing or misplaced");
    for (std::uint64_t b = e.end; b < e.aligned_end; ++b)
        if (bytes[b] != 0)
            throw corrupt(n, "non-zero padding before end marker");
    byte_reader er{bytes + size - 16, 16, n};
    if (er.u64() != size)
        throw truncated(n, "size in end marker differs");
    if (er.u64() != e.checksum_of_checksums)
        throw corrupt(n, "end marker checksum mismatch");
}

} // namespace

void write_filter_file(std::filesystem::path const & path, filter_file_header const & h,
                       std::span<shard_blob const> const shards)
{
    check_header(h, shards.size(), path);
    // Header size first, so that payload offsets can be written in the shard table.
    std::vector<std::size_t> counts;
    for (auto const & s : shards)
        counts.push_back(s.params.size());
    std::uint64_t const header_size = header_size_for(h, counts);
    std::vector<shard_record> records;
    std::uint64_t offset = align64(header_size);
    for (auto const & s : shards)
    {
        records.push_back({offset, s.words.size(), checksum64(s.words), s.params});
        offset = align64(offset + s.words.size_bytes());
    }
    byte_writer w = header_image(h, records, header_size, path);

    file_sink out{path, true};
    out.write(w.bytes().data(), w.bytes().size());
    std::uint64_t pos = header_size;
    for (auto const & s : shards)
        pos = put_payload(out, pos, s.words) + s.words.size_bytes();
    put_end_marker(out, pos, records);
    out.close();
}

struct filter_file_stream::state
{
    std::filesystem::path path;
    filter_file_header header;
    file_sink out;
    std::vector<shard_record> records;
    std::uint64_t pos{0}; // bytes written
};

filter_file_stream::filter_file_stream(std::filesystem::path const & path,
                                       filter_file_header header,
                                       std::size_t const max_shard_params)
{
    std::size_t const shards = std::size_t{1} << header.shard_bits;
    check_header(header, shards, path);
    s_.reset(new state{path, std::move(header), file_sink{path}, {}, 0});
    // The payloads start after room for a header whose shards all have max_shard_params parameters
    // (zeros until finish() writes the header, whose size the shard table gives).
    std::vector<std::size_t> const counts(shards, max_shard_params);
    std::uint64_t const first = align64(header_size_for(s_->header, counts));
    std::vector<unsigned char> const room(first, 0);
    s_->out.write(room.data(), room.size());
    s_->pos = first;
}

filter_file_stream::~filter_file_stream() = default;

void filter_file_stream::put(shard_blob const & shard, std::uint64_t const checksum)
{
    state & s = *s_;
    if (s.records.size() >= (std::size_t{1} << s.header.shard_bits))
        throw error{"internal: too many shards while writing '" + s.path.string() + "'"};
    std::uint64_t const start = put_payload(s.out, s.pos, shard.words);
    s.records.push_back({start, shard.words.size(), checksum, shard.params});
    s.pos = start + shard.words.size_bytes();
}

void filter_file_stream::finish()
{
    state & s = *s_;
    if (s.records.size() != (std::size_t{1} << s.header.shard_bits))
        throw error{"internal: missing shards while writing '" + s.path.string() + "'"};
    std::vector<std::size_t> counts;
    for (auto const & r : s.records)
        counts.push_back(r.params.size());
    std::uint64_t const header_size = header_size_for(s.header, counts);
    if (align64(header_size) > s.records.front().offset)
        throw error{"internal: shard parameters outgrew the room for the header of '" +
                    s.path.string() + "'"};
    put_end_marker(s.out, s.pos, s.records);
    byte_writer w = header_image(s.header, s.records, header_size, s.path);
    s.out.write_at(0, w.bytes().data(), w.bytes().size());
    s.out.close();
}

void mapped_filter_file::parse(bool const verify_payload)
{
    std::string const & n = name_;
    auto const [version, header_size] = read_preamble(bytes_, size_, n);
    byte_reader hr{bytes_, header_size - 8, n};
    hr.u64(); // magic
    hr.u32(); // version
    hr.u32(); // header size
    read_fixed_fields(hr, header_size, header_, n);
    header_.version = version;
    header_.parts = read_key_parts(hr, version, n);
    header_.kmer.window = read_sampling_window(hr, version, n);
    header_.kmer.dust_threshold = read_mask(hr, version, header_.kmer, n);
    bool has_labels = false;
    header_.kmer.spaced = read_spaced(hr, version, header_.kmer, has_labels, n);
    header_.labels = read_labels(hr, has_labels, header_.type, n);
    shards_.resize(std::size_t{1} << header_.shard_bits);
    payload_extent const extent = read_shard_table(hr, bytes_, size_, header_size, shards_, n);
    if (hr.pos() != header_size - 8)
        throw corrupt(n, "header size field disagrees with its contents");
    check_end_marker(bytes_, size_, extent, n);
    if (verify_payload)
        this->verify_payload(1, false);
}

// Shards are checked in turn by `threads` threads (each takes the next unchecked one); a mismatch
// is reported for the lowest such shard whatever the thread count.
void mapped_filter_file::verify_payload(unsigned const threads, bool const release_verified) const
{
    std::size_t const n = shards_.size();
    std::atomic<std::size_t> next{0};
    std::atomic<std::size_t> first_bad{n};
    auto const work = [&]
    {
        for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;)
        {
            if (checksum64(shards_[i].words) != shards_[i].checksum)
            {
                std::size_t seen = first_bad.load(std::memory_order_relaxed);
                while (i < seen &&
                       !first_bad.compare_exchange_weak(seen, i, std::memory_order_relaxed))
                {
                }
            }
            if (release_verified)
                release(shards_[i].words);
        }
    };
    std::size_t const extra =
        std::min<std::size_t>(threads > 1 ? threads - 1 : 0, n > 0 ? n - 1 : 0);
    std::vector<std::thread> pool;
    try
    {
        for (std::size_t t = 0; t < extra; ++t)
            pool.emplace_back(work);
    }
    catch (...)
    {
        // (no thread to be had: the threads started and this one check the rest)
    }
    work();
    for (auto & t : pool)
        t.join();
    if (release_verified)
        for (auto const & s :
             shards_) // (pages of a neighbour mapped again by a thread checking its shard)
            release(s.words);
    if (std::size_t const bad = first_bad.load(); bad < n)
        throw corrupt(name_, "payload checksum mismatch in shard " + std::to_string(bad));
}

filter_file_header read_filter_header(std::filesystem::path const & path)
{
    return mapped_filter_file::open(path, load_options{.verify_payload = false})->header();
}

} // namespace ksieve
