// libFuzzer target: any bytes as a filter file. A file the loader accepts must answer lookups,
// statistics and a copy within its bounds, and a labeled one its label table (names, classes, the
// k-mers of each label, the class of each key found); one it refuses must be refused with a
// ksieve::error. The bytes are loaded as given, then with the header checksum made to match, so
// that mutated header fields and label tables reach their checks instead of the checksum's.
// Anything else (a crash, a sanitizer report, an allocation driven by a crafted size) is a finding.
#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/common/labels.hpp>
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/support/checksum.hpp>
#include <ksieve/filters/support/error.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace
{

constexpr std::size_t max_shared_labels = 256; // (as `info` lists pairs of labels)

// The label table of a labeled filter used as classify and info use it: every name, the k-mers of
// each label (and of each pair), the labels of the class of each key found. Returns a sum of what
// was read, so that nothing is optimised away.
std::uint64_t use_labels(ksieve::any_filter const & filter, std::span<std::uint64_t const> keys)
{
    ksieve::label_table const & t = *filter.labels();
    std::uint64_t sum = t.names.size() + t.classes.size();
    for (auto const & name : t.names)
        sum += name.size();
    for (auto const n : t.label_kmers())
        sum += n;
    if (t.names.size() <= max_shared_labels)
        for (auto const n : t.shared_kmers())
            sum += n;
    for (auto const key : keys)
    {
        std::uint64_t const count = filter.count(key);
        if (count == 0 || count - 1 >= t.classes.size()) // (a count that is no class: no label)
            continue;
        for (auto const l : t.classes[count - 1])
            sum += t.names[l].size();
    }
    if (!(ksieve::label_table::decode(t.encode(), "fuzz.ksf") == t))
        __builtin_trap(); // a table read must encode to the same table
    return sum;
}

// Load `bytes` as a filter file and use it; refusals with a ksieve::error are fine.
void load_and_use(std::span<std::byte const> const bytes)
{
    try
    {
        auto const file = ksieve::mapped_filter_file::from_bytes(bytes, "fuzz.ksf", true);
        auto const filter = ksieve::view_filter(file);
        std::uint64_t const mask = filter->kmer().key_bits() >= 64
                                       ? ~std::uint64_t{0}
                                       : (std::uint64_t{1} << filter->kmer().key_bits()) - 1;
        std::vector<std::uint64_t> keys;
        std::uint64_t key = 0x9e3779b97f4a7c15ULL;
        std::uint64_t found = 0;
        for (int i = 0; i < 64; ++i)
        {
            key = key * 6364136223846793005ULL + 1442695040888963407ULL;
            keys.push_back(key & mask);
            found += filter->count(key & mask);
        }
        (void)filter->stats();
        if (filter->labeled())
            found += use_labels(*filter, keys);
        auto const copy = filter->clone();
        (void)copy->count(key & mask);
        (void)found;
    }
    catch (ksieve::error const &)
    {
    }
}

// The bytes with the checksum at the end of the header (its size at offset 12) made to match;
// empty where that size does not fit the bytes.
std::vector<std::byte> resealed(std::span<std::byte const> const bytes)
{
    if (bytes.size() < 16)
        return {};
    std::uint64_t header_size = 0;
    for (int i = 0; i < 4; ++i)
        header_size |= std::uint64_t{std::to_integer<unsigned char>(bytes[12 + i])} << (8 * i);
    if (header_size < 72 || header_size + 24 > bytes.size())
        return {};
    std::vector<std::byte> b{bytes.begin(), bytes.end()};
    std::uint64_t const sum =
        ksieve::checksum64(reinterpret_cast<unsigned char const *>(b.data()), header_size - 8);
    for (int i = 0; i < 8; ++i)
        b[header_size - 8 + i] = static_cast<std::byte>(sum >> (8 * i));
    return b;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const * const data, std::size_t const size)
{
    std::span<std::byte const> const bytes{reinterpret_cast<std::byte const *>(data), size};
    load_and_use(bytes);
    if (std::vector<std::byte> const b = resealed(bytes);
        !b.empty() && !std::ranges::equal(b, bytes))
        load_and_use(b);
    return 0;
}
