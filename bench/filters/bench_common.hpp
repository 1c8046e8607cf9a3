#pragma once
/*! \file
 * \brief Shared helpers of ksieve_bench_filters: deterministic key sets and FPR measurement.
 *
 * Keys are 62-bit values (k = 31 hashed keys) from a splitmix64 stream: "present" keys from one
 * seed, "absent" keys from another, filtered against the present set only when an exact FPR is
 * needed. Counters reported by every filter benchmark (FastFilter-style): ns per operation (from
 * items processed), bits_per_key and measured fpr.
 */
#include <cstdint>
#include <vector>

namespace ksieve::bench
{

inline std::uint64_t splitmix64(std::uint64_t & state) noexcept
{
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/*! \brief n distinct-with-high-probability keys of `bits` bits from seed. */
inline std::vector<std::uint64_t> random_keys(std::size_t const n, std::uint64_t seed,
                                              unsigned const bits = 62)
{
    std::vector<std::uint64_t> keys(n);
    std::uint64_t const mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    for (auto & k : keys)
        k = splitmix64(seed) & mask;
    return keys;
}

/*! \brief Disjoint seeds for present and absent keys. With 62-bit keys a collision between the two
 * sets has probability about n^2 / 2^62: negligible for the measured FPR. */
inline constexpr std::uint64_t present_seed = 0x1234;
inline constexpr std::uint64_t absent_seed = 0xABCDEF;

} // namespace ksieve::bench
