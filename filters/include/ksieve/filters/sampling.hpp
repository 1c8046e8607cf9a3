#pragma once
/*! \file
 * \brief Sampled k-mers: minimizers of the valid k-mers of a sequence.
 *
 * Definition (`--sampling minimizer:W`): list the valid k-mer positions of a record in sequence order
 * (positions whose k bases are all A/C/G/T) and their canonical 2k-bit codes. In each window of W
 * consecutive entries of that list, the entry whose code has the smallest order value
 * `minimizer_order(code, seed)` is selected (ties: the leftmost); every selected entry counts once, however
 * many windows select it. A record with fewer than W valid positions (but at least one) keeps its smallest.
 * W = 1 selects every k-mer. The filter stores the selected k-mers' hashed keys (kmer_hasher).
 *
 * The order is one seeded multiply of the code (its top bits depend on every bit of the code), computed for
 * every k-mer; only the selected k-mers are hashed. It is independent of the key's top bits, which select
 * shards and quotients: minimizers of the keys themselves would crowd the low shards.
 *
 * Thread safety: stateless functions; safe from any number of threads.
 */
#include <cstddef>
#include <cstdint>

#include <ksieve/filters/kmer.hpp>

namespace ksieve
{

/*! \brief Salt of minimizer_order(); part of the file format (a sampled filter's keys depend on it). */
inline constexpr std::uint64_t minimizer_salt = 0x6b736d696e696d7aULL;

/*! \brief Order value of a canonical k-mer code for minimizer selection (a bijection of 64-bit values for a
 * given seed). */
[[nodiscard]] constexpr std::uint64_t minimizer_order(std::uint64_t const code, std::uint64_t const seed) noexcept
{
    return (code ^ seed ^ minimizer_salt) * 0x9e3779b97f4a7c15ULL;
}

/*! \brief fn(i) for the entries i (increasing) that the windows starting at [begin, end) select, each once.
 *
 * `order[0, n)` are the order values of a slice of a record's valid k-mer list. Windows start at i with
 * i + w <= n; if the slice is the whole record and n < w, the one window is the whole slice (pass
 * begin == 0). An entry also selected by the window starting at begin - 1 (when begin > 0) is not reported
 * again, so that consecutive slices of one record, each with one entry before its own windows and w - 1
 * entries after them, report exactly the record's selection.
 * \pre w >= 1; begin <= end; when begin > 0, begin - 1 + w <= n. No allocation, no exceptions. */
template <typename Fn>
void for_each_minimizer(std::uint64_t const * const order, std::size_t const n, std::size_t const w,
                        std::size_t const begin, std::size_t const end, Fn && fn) noexcept(noexcept(fn(std::size_t{0})))
{
    if (n == 0 || begin >= end)
        return;
    if (n < w)
    {
        if (begin == 0)
        {
            std::size_t best = 0;
            for (std::size_t i = 1; i < n; ++i)
                best = order[i] < order[best] ? i : best;
            fn(best);
        }
        return;
    }
    std::size_t const last = end < n - w + 1 ? end : n - w + 1; // windows start in [begin, last)
    if (begin >= last)
        return;
    std::size_t const s0 = begin > 0 ? begin - 1 : 0;
    auto rescan = [&](std::size_t const from) noexcept {
        std::size_t best = from;
        for (std::size_t j = from + 1; j < from + w; ++j)
            best = order[j] < order[best] ? j : best;
        return best;
    };
    std::size_t cur = rescan(s0);
    std::size_t prev = static_cast<std::size_t>(-1);
    if (begin > 0)
        prev = cur;
    else
    {
        fn(cur);
        prev = cur;
    }
    for (std::size_t i = s0 + 1; i < last; ++i)
    {
        std::size_t const j = i + w - 1;
        if (cur < i)
            cur = rescan(i);
        else if (order[j] < order[cur])
            cur = j;
        if (cur != prev)
        {
            fn(cur);
            prev = cur;
        }
    }
}

} // namespace ksieve
