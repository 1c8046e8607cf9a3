// libFuzzer target: any bytes as a filter file. A file the loader accepts must answer lookups,
// statistics and a copy within its bounds; one it refuses must be refused with a ksieve::error.
// Anything else (a crash, a sanitizer report, an allocation driven by a crafted size) is a finding.
#include <ksieve/filters/error.hpp>
#include <ksieve/filters/filter_file.hpp>
#include <ksieve/filters/sharded_filter.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const * const data, std::size_t const size)
{
    try
    {
        auto const file = ksieve::mapped_filter_file::from_bytes(
            std::span<std::byte const>{reinterpret_cast<std::byte const *>(data), size}, "fuzz.ksf",
            true);
        auto const filter = ksieve::view_filter(file);
        std::uint64_t const mask = filter->kmer().key_bits() >= 64
                                       ? ~std::uint64_t{0}
                                       : (std::uint64_t{1} << filter->kmer().key_bits()) - 1;
        std::uint64_t key = 0x9e3779b97f4a7c15ULL;
        std::uint64_t found = 0;
        for (int i = 0; i < 64; ++i)
        {
            key = key * 6364136223846793005ULL + 1442695040888963407ULL;
            found += filter->count(key & mask);
        }
        (void)filter->stats();
        auto const copy = filter->clone();
        (void)copy->count(key & mask);
        (void)found;
    }
    catch (ksieve::error const &)
    {
    }
    return 0;
}
