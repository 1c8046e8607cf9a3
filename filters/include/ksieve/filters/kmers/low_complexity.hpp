#pragma once
/*! \file
 * \brief The low-complexity mask of sampled k-mers: a DUST score of a k-mer's trinucleotides.
 *
 * Definition (`build --mask dust:T`): the k - 2 trinucleotides of a k-mer (overlapping, read from
 * its 2-bit code) have counts c_t; its score is sum over t of c_t (c_t - 1) / 2, divided by k - 3
 * (the normalisation of DUST, Morgulis et al. 2006). A k-mer is masked iff its score exceeds T. The
 * score of a k-mer equals that of its reverse complement, so canonical codes mask both strands. A
 * homopolymer 31-mer scores 14.5, a perfect dinucleotide repeat 7, units of 3 to 6 bases 4.5 to 2;
 * a uniform random 31-mer exceeds 1.5 with probability about 1e-4.
 *
 * Thread safety: stateless; safe from any number of threads.
 */
#include <cstdint>
#include <string>

#include <ksieve/filters/common/filter.hpp>

namespace ksieve
{

/*! \brief The default threshold of `--mask dust`, in hundredths (1.5). */
inline constexpr std::uint32_t default_dust_threshold = 150;
/*! \brief The largest threshold accepted, in hundredths (15: no 32-mer scores above it). */
inline constexpr std::uint32_t max_dust_threshold = 1500;
/*! \brief Smallest k a mask applies to (a k-mer needs trinucleotides to count). */
inline constexpr unsigned min_masked_k = 8;

/*! \brief The DUST sum of a k-mer: pairs of equal trinucleotides, sum over t of c_t (c_t - 1) /
 * 2. \pre 3 <= k <= 32; `code` holds the k-mer's 2-bit bases in its low 2k bits. */
[[nodiscard]] inline std::uint32_t dust_pairs(std::uint64_t code, unsigned const k) noexcept
{
    std::uint8_t counts[64] = {};
    std::uint32_t pairs = 0;
    for (unsigned i = 0; i + 3 <= k; ++i, code >>= 2)
        pairs += counts[code & 63]++;
    return pairs;
}

/*! \brief True iff the k-mer's DUST score exceeds threshold / 100 (never for threshold 0): exact
 * integer arithmetic, pairs * 100 > threshold * (k - 3). \pre min_masked_k <= k <= 32. No
 * exceptions, no allocation. */
[[nodiscard]] inline bool low_complexity(std::uint64_t const code, unsigned const k,
                                         std::uint32_t const threshold) noexcept
{
    if (threshold == 0)
        return false;
    return std::uint64_t{dust_pairs(code, k)} * 100 > std::uint64_t{threshold} * (k - 3);
}

/*! \brief The mask as `--mask` writes it: "none" or "dust:T" (T with two decimals, "dust:1.50"). */
[[nodiscard]] inline std::string mask_name(kmer_params const & k)
{
    if (!k.masked())
        return "none";
    std::string frac = std::to_string(k.dust_threshold % 100);
    return "dust:" + std::to_string(k.dust_threshold / 100) + "." +
           (frac.size() < 2 ? "0" + frac : frac);
}

} // namespace ksieve
