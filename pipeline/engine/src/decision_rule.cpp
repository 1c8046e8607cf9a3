// decision_rule::hits_needed: the fewest hits that make a unit known.
#include <ksieve/engine/decision_rule.hpp>

#include <algorithm>
#include <cmath>

namespace ksieve
{

std::uint64_t decision_rule::hits_needed(std::uint64_t const kmers) const noexcept
{
    if (kmers == 0)
        return 1; // never known
    // The smallest h that meets the fraction, from a guess corrected both ways (the guess may be
    // off by one where fraction * kmers rounds); then min_hits, capped at kmers + 1 (never known).
    decision_rule const by_fraction{min_count, min_hit_fraction, 0, sample_margin};
    double const guess = std::ceil(min_hit_fraction * static_cast<double>(kmers));
    std::uint64_t h =
        guess <= 0
            ? 0
            : (guess > static_cast<double>(kmers) ? kmers + 1 : static_cast<std::uint64_t>(guess));
    while (h > 0 && by_fraction.known(h - 1, kmers))
        --h;
    while (h <= kmers && !by_fraction.known(h, kmers))
        ++h;
    return std::min(std::max(h, min_hits), kmers + 1);
}

} // namespace ksieve
