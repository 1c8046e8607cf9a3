#pragma once
/*! \file
 * \brief Sampled k-mers (`--sampling minimizer:W`): of a record's valid k-mers in sequence order,
 * the one of smallest minimizer_order() in each window of W entries (ties: the leftmost; each
 * selected once; a list shorter than W keeps its smallest; W = 1: every k-mer). The filter stores
 * the selected k-mers' hashed keys. Definition, the order's rationale and the block algorithm:
 * docs/design.md, "Sampled k-mers"; docs/file_format.md, 4.3.
 *
 * Thread safety: stateless functions; safe from any number of threads.
 */
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <ksieve/filters/kmers/kmer.hpp>
#include <ksieve/filters/support/cpu_dispatch.hpp>

namespace ksieve
{

/*! \brief Salt of minimizer_order(); part of the file format (a sampled filter's keys depend on
 * it). */
inline constexpr std::uint64_t minimizer_salt = 0x6b736d696e696d7aULL;

/*! \brief Order value of a canonical k-mer code for minimizer selection (a bijection of 64-bit
 * values for a given seed). */
[[nodiscard]] constexpr std::uint64_t minimizer_order(std::uint64_t const code,
                                                      std::uint64_t const seed) noexcept
{
    return (code ^ seed ^ minimizer_salt) * 0x9e3779b97f4a7c15ULL;
}

/*! \brief fn(i) for the entries i (increasing) that the windows starting at [begin, end) select,
 * each once.
 *
 * `order[0, n)` are the order values of a slice of a record's valid k-mer list. Windows start at i
 * with i + w <= n; if the slice is the whole record and n < w, the one window is the whole slice
 * (pass begin == 0). An entry also selected by the window starting at begin - 1 (when begin > 0) is
 * not reported again, so that consecutive slices of one record, each with one entry before its own
 * windows and w - 1 entries after them, report exactly the record's selection. \pre w >= 1; begin
 * <= end; when begin > 0, begin - 1 + w <= n. No allocation, no exceptions. */
template <typename Fn>
void for_each_minimizer(std::uint64_t const * const order, std::size_t const n, std::size_t const w,
                        std::size_t const begin, std::size_t const end,
                        Fn && fn) noexcept(noexcept(fn(std::size_t{0})))
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
    auto rescan = [&](std::size_t const from) noexcept
    {
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

/*! \brief Scratch of for_each_record_minimizer: a record's valid k-mers (codes and order values)
 * taken `buffer_size` at a time with the last window's worth carried over, the window minima of
 * blocks of W entries, and the selected codes. */
struct minimizer_scratch
{
    static constexpr std::size_t ring_size = 1024;   //!< >= every window (max_sampling_window)
    static constexpr std::size_t buffer_size = 4096; //!< k-mers taken at a time (besides the carry)
    static constexpr std::size_t capacity = buffer_size + ring_size; //!< entries of each array
    std::uint64_t codes[capacity];
    std::uint64_t orders[capacity];
    std::uint64_t suffix_order[capacity]; //!< the smallest order from i to the end of i's block
    std::uint32_t suffix[capacity];       //!< index of that (leftmost) minimum
    std::uint64_t selected[capacity];
    alignas(64) std::uint8_t bases[capacity + 128]; //!< a short record's 2-bit codes (vector scans)
    std::uint64_t level_order[2][capacity]; //!< vector selection: minima of 2, 4, 8, ... entries
    std::uint32_t level_index[2][capacity]; //!< and their (leftmost) positions
    std::uint32_t positions[capacity + 8];  //!< vector selection: the selected positions
};

namespace detail
{

/*! \brief (best_order, best) = (o, j) if o < best_order (or_equal: o <= best_order), by conditional
 * moves: compilers turn the plain form into a branch, mispredicted on random data. */
template <bool or_equal>
[[gnu::always_inline]] inline void take_smaller(std::uint64_t const o, std::uint32_t const j,
                                                std::uint64_t & best_order,
                                                std::uint32_t & best) noexcept
{
#if defined(__x86_64__) && defined(__GNUC__)
    if constexpr (or_equal)
        asm("cmpq %[bo], %[o]\n\tcmovbeq %[o], %[bo]\n\tcmovbel %[j], %[bi]"
            : [bo] "+r"(best_order), [bi] "+r"(best)
            : [o] "r"(o), [j] "r"(j)
            : "cc");
    else
        asm("cmpq %[bo], %[o]\n\tcmovbq %[o], %[bo]\n\tcmovbl %[j], %[bi]"
            : [bo] "+r"(best_order), [bi] "+r"(best)
            : [o] "r"(o), [j] "r"(j)
            : "cc");
#else
    bool const take = or_equal ? o <= best_order : o < best_order;
    best = take ? j : best;
    best_order = take ? o : best_order;
#endif
}

/*! \brief The windows of w entries that start at [0, n - w] over s.orders[0, n): the codes of their
 * (leftmost) minima, each run of windows with the same minimum reported once (`prev`, the absolute
 * index of the last one reported, carries across calls; `base` is the absolute index of entry 0),
 * into s.selected, by blocks of w entries (Van Herk / Gil-Werman; docs/design.md). \returns the
 * number of codes in s.selected. \pre w <= n <= minimizer_scratch::capacity. */
template <std::size_t W = 0>
[[gnu::always_inline]] inline std::size_t
select_window_minima(minimizer_scratch & s, std::size_t const n, std::size_t const w_arg,
                     std::size_t const base, std::size_t & prev) noexcept
{
    std::size_t const w = W != 0 ? W : w_arg;
    std::uint64_t const * const orders = s.orders;
    // Suffix minima of the block [b0, b0 + len), backwards. The running minimum stays in registers
    // (order and index) and is updated by conditional moves: a branch would be mispredicted on
    // about every fourth entry, and a load on the dependency chain would stall it.
    auto suffix_block = [&](std::size_t const b0, std::size_t const len) noexcept
    {
        std::size_t const b1 = b0 + len;
        std::uint64_t best_order = orders[b1 - 1];
        auto best = static_cast<std::uint32_t>(b1 - 1);
        s.suffix_order[b1 - 1] = best_order;
        s.suffix[b1 - 1] = best;
        for (std::size_t i = 1; i < len; ++i)
        {
            std::size_t const j = b1 - 1 - i;
            take_smaller<true>(orders[j], static_cast<std::uint32_t>(j), best_order,
                               best); // ties: leftmost
            s.suffix_order[j] = best_order;
            s.suffix[j] = best;
        }
    };
    // Full blocks: a constant trip count when W is known (unrolled, no mispredicted exit).
    std::size_t b0 = 0;
    for (; b0 + w <= n; b0 += w)
        suffix_block(b0, W != 0 ? W : w);
    if (b0 < n)
        suffix_block(b0, n - b0);
    std::size_t m = 0;
    auto emit = [&](std::uint32_t const sel) noexcept
    {
        s.selected[m] = s.codes[sel];
        m += base + sel != prev ? 1 : 0;
        prev = base + sel;
    };
    // The windows that start in each block: the block itself, then (t = 1 .. len - 1) a suffix of
    // the block and a prefix of the next, whose minimum is kept while walking forwards.
    auto prefix_block = [&](std::size_t const b0, std::size_t const len) noexcept
    {
        emit(s.suffix[b0]);
        std::size_t const next = b0 + w;
        std::uint64_t pre_order = next < n ? orders[next] : 0;
        auto pre = static_cast<std::uint32_t>(next);
        for (std::size_t t = 1; t < len; ++t)
        {
            std::size_t const j = next + t - 1;
            take_smaller<false>(orders[j], static_cast<std::uint32_t>(j), pre_order, pre);
            // ties: the suffix, the leftmost; a mask, not a branch (the outcome is a coin toss)
            std::uint32_t const right =
                0u - static_cast<std::uint32_t>(pre_order < s.suffix_order[b0 + t]);
            emit(s.suffix[b0 + t] ^ ((s.suffix[b0 + t] ^ pre) & right));
        }
    };
    // (window b0 + t needs entries up to next + t - 1 < n)
    for (b0 = 0; b0 + 2 * w - 1 <= n; b0 += w)
        prefix_block(b0, W != 0 ? W : w);
    for (; b0 + w <= n; b0 += w)
        prefix_block(b0, n - (b0 + w) + 1 < w ? n - (b0 + w) + 1 : w);
    return m;
}

/*! \brief The record scan of for_each_record_minimizer: codes and order values of the valid k-mers
 * of [p, e) into s.codes / s.orders from entry n on, a buffer at a time (`full(n)` hands a full
 * buffer over and returns the entries it keeps). A run of valid bases takes k - 1 bases, then
 * completes a k-mer with each: the hot loop neither counts valid bases nor tests for a full buffer
 * (it stops where the buffer would be full). \returns the entries in the buffer at the end. */
template <bool canonical, typename Full>
[[gnu::always_inline]] inline std::size_t
scan_record(char const * p, char const * const e, unsigned const k, std::uint64_t const mask,
            std::uint64_t const salt, minimizer_scratch & s, std::size_t n, Full && full) noexcept
{
    unsigned const rc_shift = 2 * (k - 1);
    std::uint64_t * const codes = s.codes;
    std::uint64_t * const orders = s.orders;
    std::uint8_t const * const table = dna_code_table.data();
    std::uint64_t fw = 0, rc = 0;
    while (p < e)
    {
        // k - 1 valid bases (an invalid one starts again)
        for (unsigned valid = 0; valid + 1 < k && p < e; ++p)
        {
            std::uint64_t const b = table[static_cast<unsigned char>(*p)];
            if (b > 3)
            {
                valid = 0;
                continue;
            }
            fw = (fw << 2) | b;
            rc = (rc >> 2) | ((3 - b) << rc_shift);
            ++valid;
        }
        // then a k-mer a base, up to an invalid base
        for (;;)
        {
            auto const room = static_cast<std::size_t>(minimizer_scratch::capacity - n);
            char const * const stop = e - p > static_cast<std::ptrdiff_t>(room) ? p + room : e;
            char const * q = p;
            for (; q < stop; ++q)
            {
                std::uint64_t const b = table[static_cast<unsigned char>(*q)];
                if (b > 3) [[unlikely]]
                    break;
                fw = (fw << 2) | b;
                rc = (rc >> 2) | ((3 - b) << rc_shift);
                std::uint64_t const f = fw & mask;
                std::uint64_t const r = rc & mask;
                std::uint64_t const code = canonical && r < f ? r : f;
                codes[n] = code;
                orders[n] = (code ^ salt) * 0x9e3779b97f4a7c15ULL;
                ++n;
            }
            p = q;
            if (n == minimizer_scratch::capacity)
            {
                n = full(n);
                continue;
            }
            if (p < e) // an invalid base
                ++p;
            break;
        }
    }
    return n;
}

/*! \brief The vector scan of a short record of A/C/G/T only (either case) at the active CPU level
 * (x86-64-v4, aarch64 NEON): s.codes / s.orders [0, seq.size() - k + 1) as scan_record() fills
 * them, through s.bases. \returns false, with the arrays unspecified, if seq holds another byte or
 * the level has no such scan (the caller then runs scan_record). \pre 8 <= k <= 32; k <= seq.size()
 * <= minimizer_scratch::capacity + k - 1. */
[[nodiscard]] bool scan_short_record(std::string_view seq, unsigned k, bool canonical,
                                     std::uint64_t code_mask, std::uint64_t salt,
                                     minimizer_scratch & s) noexcept;

/*! \brief select_short_record_minima's result where the active level has no vector selection. */
inline constexpr std::size_t no_short_record_minima = static_cast<std::size_t>(-1);

/*! \brief select_window_minima() for a whole record (base 0) that scan_short_record scanned, at the
 * active CPU level (x86-64-v4: the minimum of each window of w entries from two overlapping windows
 * of the largest power of two p <= w, minima of 2, 4, ..., p entries built by doubling, ties to the
 * left; the runs of windows with one position reported once). \returns the number of codes in
 * s.selected, or no_short_record_minima (nothing done) where the level has no such selection. \pre
 * 2 <= w <= n <= minimizer_scratch::capacity; prev is -1 or a position. */
[[nodiscard]] std::size_t select_short_record_minima(minimizer_scratch & s, std::size_t n,
                                                     std::size_t w, std::size_t & prev) noexcept;

/*! \brief Whether the active CPU level has a vector scan of short records (x86-64-v4, aarch64
 * NEON): where it has none, scan_short_record is not worth a call. */
[[nodiscard, gnu::always_inline]] inline bool short_record_kernels_active() noexcept
{
    simd_level const level = active_simd_level();
    return level == simd_level::x86_64_v4 || level == simd_level::aarch64_neon;
}

// for_each_record_minimizer() for a window of W entries known at compile time (0: w_arg).
template <std::size_t W, typename Fn>
void record_minimizers(kmer_scanner const & scanner, std::string_view const seq,
                       std::size_t const w_arg, std::uint64_t const seed, minimizer_scratch & s,
                       Fn && fn) noexcept(noexcept(fn(std::uint64_t{0})))
{
    std::size_t const w = W != 0 ? W : w_arg;
    static_assert(minimizer_order(1, 2) == ((1 ^ 2 ^ minimizer_salt) * 0x9e3779b97f4a7c15ULL),
                  "scan_record computes minimizer_order inline");
    std::size_t base = 0; // absolute index of entry 0
    std::size_t prev = static_cast<std::size_t>(-1);
    auto emit = [&](std::size_t const m)
    {
        for (std::size_t i = 0; i < m; ++i)
            fn(s.selected[i]);
    };
    // A full buffer: its windows' minima, then the entries of windows to come moved to the front.
    auto full = [&](std::size_t const n) noexcept
    {
        emit(select_window_minima<W>(s, n, w, base, prev));
        std::size_t const keep = w - 1;
        for (std::size_t i = 0; i < keep; ++i)
        {
            s.codes[i] = s.codes[n - keep + i];
            s.orders[i] = s.orders[n - keep + i];
        }
        base += n - keep;
        return keep;
    };
    std::uint64_t const salt = seed ^ minimizer_salt;
    char const * const p = seq.data();
    char const * const e = p + seq.size();
    unsigned const k = scanner.k();
    // A short read of A/C/G/T only: the vector scan, where the CPU has one (the same entries).
    bool const vector =
        k >= 8 && seq.size() >= k && seq.size() - k + 1 <= minimizer_scratch::capacity &&
        short_record_kernels_active() &&
        scan_short_record(seq, k, scanner.canonical(), scanner.code_mask(), salt, s);
    std::uint64_t const mask = scanner.code_mask();
    std::size_t const n = vector ? seq.size() - k + 1
                          : scanner.canonical()
                              ? scan_record<true>(p, e, k, mask, salt, s, 0, full)
                              : scan_record<false>(p, e, k, mask, salt, s, 0, full);
    if (base + n == 0)
        return;
    if (vector && w >= 2 && n >= w)
    {
        if (std::size_t const m = select_short_record_minima(s, n, w, prev);
            m != no_short_record_minima)
        {
            emit(m);
            return;
        }
    }
    if (base + n < w) // fewer than w valid k-mers: the smallest
    {
        std::size_t best = 0;
        for (std::size_t i = 1; i < n; ++i)
            best = s.orders[i] < s.orders[best] ? i : best;
        fn(s.codes[best]);
        return;
    }
    if (n >= w)
        emit(select_window_minima<W>(s, n, w, base, prev));
}

} // namespace detail

/*! \brief The minimizers of a whole record: fn(code) for the canonical code of every selected
 * k-mer, in sequence order, each once (the same selection as for_each_minimizer over the record's
 * whole valid k-mer list), found block by block without a data-dependent branch
 * (detail::select_window_minima). \pre 1 <= w <= minimizer_scratch::ring_size. No allocation, no
 * exceptions. */
template <typename Fn>
void for_each_record_minimizer(kmer_scanner const & scanner, std::string_view const seq,
                               std::size_t const w, std::uint64_t const seed, minimizer_scratch & s,
                               Fn && fn) noexcept(noexcept(fn(std::uint64_t{0})))
{
    // (the default window and two common ones, the others through the general code)
    if (w == 8)
        detail::record_minimizers<8>(scanner, seq, w, seed, s, fn);
    else if (w == 11)
        detail::record_minimizers<11>(scanner, seq, w, seed, s, fn);
    else if (w == 15)
        detail::record_minimizers<15>(scanner, seq, w, seed, s, fn);
    else
        detail::record_minimizers<0>(scanner, seq, w, seed, s, fn);
}

} // namespace ksieve
