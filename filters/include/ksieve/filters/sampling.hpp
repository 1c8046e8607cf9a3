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
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

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

/*! \brief Scratch of for_each_record_minimizer: the window ring and a buffer of selected codes. */
struct minimizer_scratch
{
    static constexpr std::size_t ring_size = 1024;   //!< >= every window (max_sampling_window)
    static constexpr std::size_t buffer_size = 4096; //!< selected codes handed to fn at a time
    std::uint64_t codes[ring_size];
    std::uint64_t orders[ring_size];
    std::uint64_t selected[buffer_size + 1];
};

/*! \brief The minimizers of a whole record in one pass: fn(code) for the canonical code of every selected
 * k-mer, in sequence order, each once (the same selection as for_each_minimizer over the record's whole valid
 * k-mer list). The scanner's k-mers are ordered as they are produced and the window's minimum is kept with a
 * rescan only when it leaves the window; the choices are made with conditional moves and the selected codes
 * collected without a branch, then handed to fn in blocks.
 * \pre 1 <= w <= minimizer_scratch::ring_size. No allocation, no exceptions. */
template <typename Fn>
void for_each_record_minimizer(kmer_scanner const & scanner, std::string_view const seq, std::size_t const w,
                               std::uint64_t const seed, minimizer_scratch & s,
                               Fn && fn) noexcept(noexcept(fn(std::uint64_t{0})))
{
    std::size_t const mask = std::bit_ceil(w) - 1;
    std::uint64_t * const codes = s.codes;
    std::uint64_t * const orders = s.orders;
    std::size_t n = 0;   // valid k-mers seen
    std::size_t cur = 0; // index of the current window's (leftmost) minimum
    std::uint64_t cur_order = ~std::uint64_t{0};
    std::size_t reported = static_cast<std::size_t>(-1);
    std::size_t m = 0; // selected codes buffered
    auto flush = [&] {
        for (std::size_t i = 0; i < m; ++i)
            fn(s.selected[i]);
        m = 0;
    };
    scanner.for_each(seq, [&](std::size_t, std::uint64_t const code) noexcept(noexcept(fn(std::uint64_t{0}))) {
        std::size_t const j = n++;
        std::uint64_t const o = minimizer_order(code, seed);
        codes[j & mask] = code;
        orders[j & mask] = o;
        bool const smaller = o < cur_order;
        cur = smaller ? j : cur;
        cur_order = smaller ? o : cur_order;
        if (j + 1 < w)
            return; // the first window is not complete yet: the minimum of the prefix
        std::size_t const first = j + 1 - w; // the window [first, j]
        if (cur < first) [[unlikely]]
        {
            cur = first;
            cur_order = orders[first & mask];
            for (std::size_t i = first + 1; i <= j; ++i)
            {
                std::uint64_t const oi = orders[i & mask];
                bool const less = oi < cur_order;
                cur = less ? i : cur;
                cur_order = less ? oi : cur_order;
            }
        }
        s.selected[m] = codes[cur & mask];
        m += cur != reported ? 1 : 0;
        reported = cur;
        if (m == minimizer_scratch::buffer_size) [[unlikely]]
            flush();
    });
    if (n > 0 && n < w) // fewer than w valid k-mers: the smallest
        s.selected[m++] = codes[cur & mask];
    flush();
}

} // namespace ksieve
