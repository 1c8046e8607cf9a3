// Private parts of the quotient filter shared by its sources: constants, bit helpers, the table
// geometry functions and the storage / concurrency / lookup-state types.
#pragma once

#include <ksieve/filters/quotient/quotient_filter.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/zeroed_memory.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <string>
#include <thread>
#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ksieve
{

namespace
{

constexpr std::uint64_t none = ~std::uint64_t{0};
constexpr std::uint64_t offset_saturated = 255;
constexpr std::uint64_t header_bytes = 17; // offset (1), occupieds (8), runends (8)
// Layout 2 adds the number of home slots (layout 1, 11 parameters: 2^q; still written for such
// tables).
constexpr std::uint64_t params_version = 2;
constexpr std::size_t params_count = 12;
constexpr unsigned min_quotient_bits = 6;
constexpr unsigned max_quotient_bits = 48;
constexpr unsigned max_group_slots = 80; // 3 + 65 digits (r = 2, count 2^64) fits
// Keys between the stages of a batched lookup (header, then the run's remainders): 16 keeps enough
// of a table of gigabytes in flight (classify of every k-mer of a 1 Gbp host: about 8% faster than
// 8).
constexpr std::size_t batch_stage_gap = 16;
// Home slots at or past this index of their block also prefetch the next block's header in batch
// lookups (at 0.9 load about 5% of the runs of slot 48 and half of those of slot 60 end in the next
// block).
constexpr std::uint64_t next_header_from = 48;
// A growing filter that cannot grow any more (its fingerprints have no remainder bit left to give)
// is full at this load.
constexpr double stuck_load = 0.95;
// ... in tables larger than this (a typical last-level cache); a pipeline shard is far smaller.
constexpr std::uint64_t next_header_min_bytes = std::uint64_t{32} << 20;

// Result codes of the internal editing functions.
constexpr int rc_ok = 0;
constexpr int rc_beyond = 1;   // needs a slot at or past the limit (physical end or locked regions)
constexpr int rc_overload = 2; // would exceed the load limit
constexpr int rc_saturated =
    3; // a saturated block offset needs a backward scan (not allowed when limited)

inline std::uint64_t load64(void const * p) noexcept
{
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
inline void store64(void * p, std::uint64_t const v) noexcept
{
    std::memcpy(p, &v, 8);
}

// Branch-free SWAR popcount (the libgcc fallback of std::popcount is a call).
[[gnu::always_inline, maybe_unused]] inline unsigned popcount_swar(std::uint64_t x) noexcept
{
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return static_cast<unsigned>((x * 0x0101010101010101ULL) >> 56);
}

[[gnu::always_inline]] inline std::uint64_t low_bits_mask(unsigned const n) noexcept
{
    return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
}

// select_in_byte[8 * b + j]: position of the j-th (0-based) set bit of byte b, 8 if b has at most
// j.
constexpr auto select_in_byte = []
{
    std::array<std::uint8_t, 256 * 8> t{};
    for (unsigned b = 0; b < 256; ++b)
    {
        unsigned j = 0;
        for (unsigned i = 0; i < 8; ++i)
            if (((b >> i) & 1) != 0)
                t[8 * b + j++] = static_cast<std::uint8_t>(i);
        for (; j < 8; ++j)
            t[8 * b + j] = 8;
    }
    return t;
}();

// cond ? a : b without a branch (the compiler turns plain ternaries on random data into branches).
[[gnu::always_inline]] inline std::uint64_t pick(bool const cond, std::uint64_t const a,
                                                 std::uint64_t const b) noexcept
{
    return b ^ ((a ^ b) & (std::uint64_t{0} - static_cast<std::uint64_t>(cond)));
}

/* Position of the k-th (0-based) set bit of w, or 64 if w has at most k set bits, without branches
 * (broadword select, Vigna 2008): byte popcounts by SWAR, their prefix sums by one multiplication,
 * the byte holding the bit by a byte-wise compare of the prefix sums with k, the bit in that byte
 * by a table. \pre k < 128. */
[[gnu::always_inline]] inline unsigned select64_portable(std::uint64_t const w,
                                                         unsigned const k) noexcept
{
    constexpr std::uint64_t ones = 0x0101010101010101ULL;
    constexpr std::uint64_t highs = 0x8080808080808080ULL;
    std::uint64_t s = w - ((w >> 1) & 0x5555555555555555ULL);
    s = (s & 0x3333333333333333ULL) + ((s >> 2) & 0x3333333333333333ULL);
    s = (s + (s >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    std::uint64_t const prefix = s * ones; // byte i: set bits in bytes 0..i (at most 64, no carry)
    // Byte i gets its top bit iff prefix_i <= k (128 + k - prefix_i stays in [1, 255]: no borrow).
    std::uint64_t const le = ((std::uint64_t{k} * ones) | highs) - prefix;
    // The bytes whose prefix is <= k are the lowest ones: count them (0..8).
    auto const byte = static_cast<unsigned>((((le & highs) >> 7) * ones) >> 56);
    unsigned const sh = (8 * byte) & 63;
    auto const before = static_cast<unsigned>(((prefix << 8) >> sh) & 0xFF);
    auto const b = static_cast<unsigned>((w >> sh) & 0xFF);
    unsigned const bit = select_in_byte[8 * b + ((k - before) & 7)];
    return static_cast<unsigned>(pick(byte < 8, 8 * byte + bit, 64));
}

inline std::uint64_t sat_add(std::uint64_t const a, std::uint64_t const b) noexcept
{
    std::uint64_t const s = a + b;
    return s < a ? none : s;
}

inline std::uint64_t mul_add_sat(std::uint64_t const v, std::uint64_t const base,
                                 std::uint64_t const t) noexcept
{
    std::uint64_t m, r;
    if (__builtin_mul_overflow(v, base, &m) || __builtin_add_overflow(m, t, &r)) [[unlikely]]
        return none;
    return r;
}

// memmove for the few bytes a shift usually moves (a library call costs more than the copy). Loads
// happen before stores, so any overlap is fine; no byte outside [src, src + n) or [dst, dst + n) is
// touched.
[[gnu::always_inline]] inline void small_memmove(std::uint8_t * const dst,
                                                 std::uint8_t const * const src,
                                                 std::size_t const n) noexcept
{
    if (n >= 8)
    {
        if (n > 16)
        {
            std::memmove(dst, src, n);
            return;
        }
        std::uint64_t const a = load64(src);
        std::uint64_t const b = load64(src + n - 8);
        store64(dst, a);
        store64(dst + n - 8, b);
    }
    else if (n >= 4)
    {
        std::uint32_t a, b;
        std::memcpy(&a, src, 4);
        std::memcpy(&b, src + n - 4, 4);
        std::memcpy(dst, &a, 4);
        std::memcpy(dst + n - 4, &b, 4);
    }
    else if (n >= 2)
    {
        std::uint16_t a, b;
        std::memcpy(&a, src, 2);
        std::memcpy(&b, src + n - 2, 2);
        std::memcpy(dst, &a, 2);
        std::memcpy(dst + n - 2, &b, 2);
    }
    else if (n == 1)
        *dst = *src;
}

inline void cpu_relax() noexcept
{
#if defined(__SSE2__)
    _mm_pause();
#endif
}

inline std::uint64_t overflow_blocks(std::uint64_t const nslots) noexcept
{
    auto const extra = static_cast<std::uint64_t>(10.0 * std::sqrt(static_cast<double>(nslots)));
    return (extra + 63) / 64 + 1;
}

inline std::uint64_t blocks_for(std::uint64_t const nslots) noexcept
{
    return (nslots + 63) / 64 + overflow_blocks(nslots);
}

// ceil(log2 n): the fingerprint bits that choose a home slot among n. \pre n >= 2.
inline unsigned top_bits_for(std::uint64_t const n) noexcept
{
    return static_cast<unsigned>(std::bit_width(n - 1));
}

// Remainder width of p-bit fingerprints in n home slots (one more bit when n is not a power of
// two).
inline unsigned remainder_bits_for(unsigned const p, std::uint64_t const n) noexcept
{
    unsigned const q = top_bits_for(n);
    return q > p ? 0 : p - q + (std::has_single_bit(n) ? 0 : 1);
}

// Whether p-bit fingerprints fit a table of n home slots.
inline bool geometry_ok(unsigned const p, std::uint64_t const n) noexcept
{
    if (n < (std::uint64_t{1} << min_quotient_bits) || n % 64 != 0 ||
        n > (std::uint64_t{1} << max_quotient_bits) || p > 64 ||
        (p == 64 && !std::has_single_bit(n)))
        return false;
    unsigned const q = top_bits_for(n);
    if (q + quotient_filter::min_remainder_bits > p)
        return false;
    unsigned const r = remainder_bits_for(p, n);
    return r >= quotient_filter::min_remainder_bits && r <= quotient_filter::max_remainder_bits;
}

// The home slots growth makes of a table of n: twice n, or, where p-bit fingerprints are too narrow
// for that (a table that is not a power of two needs one more bit), the power of two below it; 0 if
// neither is larger than n.
inline std::uint64_t grown_slots_for(unsigned const p, std::uint64_t const n) noexcept
{
    std::uint64_t const twice = 2 * n;
    std::uint64_t const pow2 = std::bit_floor(twice);
    return geometry_ok(p, twice) ? twice : pow2 > n && geometry_ok(p, pow2) ? pow2 : 0;
}

inline std::uint64_t words_for(std::uint64_t const nblocks, unsigned const r) noexcept
{
    return (nblocks * (header_bytes + 8 * std::uint64_t{r}) + 7) / 8;
}

} // namespace

// ---------------------------------------------------------------------------------------------------------
// Storage and concurrency state.

struct quotient_filter::memory
{
    zeroed_memory block;
    std::uint64_t * ptr;

    explicit memory(std::size_t const words)
        : block{std::max<std::size_t>(words, 1) * 8}, ptr{block.as<std::uint64_t>()}
    {
    }
    // The first `words` words of `spare` (at least that large), zeroed.
    memory(zeroed_memory && spare, std::size_t const words)
        : block{std::move(spare)}, ptr{block.as<std::uint64_t>()}
    {
        std::memset(ptr, 0, std::max<std::size_t>(words, 1) * 8);
    }
};

struct quotient_filter::concurrency
{
    struct alignas(64) region
    {
        std::atomic<std::uint32_t> lock{0};
        std::int64_t used{0};
        std::int64_t distinct{0};
        std::uint64_t total{0};
    };
    std::unique_ptr<region[]> regions;
    std::size_t n{0};
    std::atomic<bool> dirty{false};

    explicit concurrency(std::size_t const count) : regions{new region[count]}, n{count} {}

    // v plus every region's `field` combined by add: a statistic with the changes of concurrent
    // inserts that are not folded into the filter's own counters yet.
    template <typename value_t, typename field_t, typename add_t>
    value_t plus_pending(value_t v, field_t region::*const field, add_t const add) const noexcept
    {
        if (dirty.load(std::memory_order_relaxed))
            for (std::size_t i = 0; i < n; ++i)
                v = add(v, regions[i].*field);
        return v;
    }

    void lock(std::size_t const i) noexcept
    {
        std::atomic<std::uint32_t> & l = regions[i].lock;
        for (unsigned spins = 0;; ++spins)
        {
            if (l.load(std::memory_order_relaxed) == 0 &&
                l.exchange(1, std::memory_order_acquire) == 0)
                return;
            if (spins < 64)
                cpu_relax();
            else
                std::this_thread::yield();
        }
    }
    void unlock(std::size_t const i) noexcept
    {
        regions[i].lock.store(0, std::memory_order_release);
    }
};

struct quotient_filter::locate_info
{
    bool occupied{false};
    std::uint64_t start{0}; // run start (occupied) or insertion position of a new run
    std::uint64_t end{0};   // run end (occupied)
};

struct quotient_filter::group_info
{
    bool found{false};
    bool last{false};     // the group ends the run
    std::uint64_t pos{0}; // group start, or insertion position when not found
    std::uint64_t len{0};
    std::uint64_t count{0};
};

} // namespace ksieve
