#pragma once
/*! \file
 * \brief The decision rule of classify and dedup: when a k-mer is a hit, and when a unit (a read,
 * or a pair) is known.
 */
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ksieve
{

/*! \brief When a unit is known: a k-mer of the unit is a *hit* iff its count in the filters is >=
 * min_count, and a unit of `kmers` k-mers with `hits` hits is *known* iff kmers > 0, hits >=
 * min_hits and hits / kmers >= min_hit_fraction.
 *
 * A plain value (three numbers, copied freely). Every member function is noexcept, allocates
 * nothing and may run concurrently with any other const use. */
struct decision_rule
{
    std::uint64_t min_count{1};   //!< a k-mer is a hit iff its count is >= this (--min-count)
    double min_hit_fraction{0.5}; //!< known needs hits / kmers >= this (--min-hit-fraction)
    std::uint64_t min_hits{
        0}; //!< known also needs at least this many hits (--min-hits; 0 = no bound)
    //! dedup on a sample of the k-mers (dedup_budget): the fraction needed rises by this many
    //! standard errors of a fraction measured on `kmers` of them, so that a sample errs towards
    //! keeping a read (0: the plain rule)
    double sample_margin{0};

    /*! \brief Whether a k-mer whose count in the filters is `count` is a hit. */
    [[nodiscard]] bool hit(std::uint64_t const count) const noexcept { return count >= min_count; }

    /*! \brief Whether a unit of `kmers` k-mers, `hits` of them hits, is known (false for kmers ==
     * 0). */
    [[nodiscard]] bool known(std::uint64_t const hits, std::uint64_t const kmers) const noexcept
    {
        // hits / kmers is correctly rounded, so a ratio equal to the user's decimal F compares
        // equal to it.
        if (kmers == 0 || hits < min_hits)
            return false;
        double const ratio = static_cast<double>(hits) / static_cast<double>(kmers);
        if (sample_margin == 0)
            return ratio >= min_hit_fraction;
        double const f = min_hit_fraction;
        return ratio >= std::min(1.0, f + sample_margin *
                                              std::sqrt(f * (1 - f) / static_cast<double>(kmers)));
    }

    /*! \brief The fewest hits that make a unit of `kmers` k-mers known: the smallest h with
     * known(h, kmers), or kmers + 1 if no h does (always for kmers == 0). A unit with fewer hits is
     * novel, one with at least this many is known (known() is monotone in hits). */
    [[nodiscard]] std::uint64_t hits_needed(std::uint64_t kmers) const noexcept;
};

} // namespace ksieve
