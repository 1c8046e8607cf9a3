#include <ksieve/filters/error.hpp>
#include <ksieve/filters/quotient_filter.hpp>
#include <ksieve/filters/zeroed_memory.hpp>

#include "quotient_filter_isa.hpp"
#include <ksieve/filters/cpu_dispatch.hpp>

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
#if defined(__x86_64__) && !defined(__BMI2__) && defined(__GNUC__) && __has_include(<cpuid.h>)
// A second copy of the hot paths is compiled for BMI1/BMI2/LZCNT/POPCNT and picked at run time
// (cpu_dispatch.hpp).
#define KSIEVE_QF_BMI2_KERNEL 1
#else
#define KSIEVE_QF_BMI2_KERNEL 0
#endif

namespace ksieve
{

namespace
{

constexpr std::uint64_t none = ~std::uint64_t{0};
constexpr std::uint64_t offset_saturated = 255;
constexpr std::uint64_t header_bytes = 17; // offset (1), occupieds (8), runends (8)
// Layout 2 adds the number of home slots (layout 1, 11 parameters: 2^q; still written for such tables).
constexpr std::uint64_t params_version = 2;
constexpr std::size_t params_count = 12;
constexpr unsigned min_quotient_bits = 6;
constexpr unsigned max_quotient_bits = 48;
constexpr unsigned max_group_slots = 80; // 3 + 65 digits (r = 2, count 2^64) fits
// Keys between the stages of a batched lookup (header, then the run's remainders): 16 keeps enough of a
// table of gigabytes in flight (classify of every k-mer of a 1 Gbp host: about 8% faster than 8).
constexpr std::size_t batch_stage_gap = 16;
// Home slots at or past this index of their block also prefetch the next block's header in batch lookups
// (at 0.9 load about 5% of the runs of slot 48 and half of those of slot 60 end in the next block).
constexpr std::uint64_t next_header_from = 48;
// A growing filter that cannot grow any more (its fingerprints have no remainder bit left to give) is full at
// this load.
constexpr double stuck_load = 0.95;
// ... in tables larger than this (a typical last-level cache); a pipeline shard is far smaller.
constexpr std::uint64_t next_header_min_bytes = std::uint64_t{32} << 20;

// Result codes of the internal editing functions.
constexpr int rc_ok = 0;
constexpr int rc_beyond = 1;    // needs a slot at or past the limit (physical end or locked regions)
constexpr int rc_overload = 2;  // would exceed the load limit
constexpr int rc_saturated = 3; // a saturated block offset needs a backward scan (not allowed when limited)

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

// select_in_byte[8 * b + j]: position of the j-th (0-based) set bit of byte b, 8 if b has at most j.
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
 * (broadword select, Vigna 2008): byte popcounts by SWAR, their prefix sums by one multiplication, the byte
 * holding the bit by a byte-wise compare of the prefix sums with k, the bit in that byte by a table.
 * \pre k < 128. */
[[gnu::always_inline]] inline unsigned select64_portable(std::uint64_t const w, unsigned const k) noexcept
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

// memmove for the few bytes a shift usually moves (a library call costs more than the copy). Loads happen
// before stores, so any overlap is fine; no byte outside [src, src + n) or [dst, dst + n) is touched.
[[gnu::always_inline]] inline void small_memmove(std::uint8_t * const dst, std::uint8_t const * const src,
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

std::uint64_t overflow_blocks(std::uint64_t const nslots) noexcept
{
    auto const extra = static_cast<std::uint64_t>(10.0 * std::sqrt(static_cast<double>(nslots)));
    return (extra + 63) / 64 + 1;
}

std::uint64_t blocks_for(std::uint64_t const nslots) noexcept
{
    return (nslots + 63) / 64 + overflow_blocks(nslots);
}

// ceil(log2 n): the fingerprint bits that choose a home slot among n. \pre n >= 2.
unsigned top_bits_for(std::uint64_t const n) noexcept
{
    return static_cast<unsigned>(std::bit_width(n - 1));
}

// Remainder width of p-bit fingerprints in n home slots (one more bit when n is not a power of two).
unsigned remainder_bits_for(unsigned const p, std::uint64_t const n) noexcept
{
    unsigned const q = top_bits_for(n);
    return q > p ? 0 : p - q + (std::has_single_bit(n) ? 0 : 1);
}

// Whether p-bit fingerprints fit a table of n home slots.
bool geometry_ok(unsigned const p, std::uint64_t const n) noexcept
{
    if (n < (std::uint64_t{1} << min_quotient_bits) || n % 64 != 0 ||
        n > (std::uint64_t{1} << max_quotient_bits) || p > 64 || (p == 64 && !std::has_single_bit(n)))
        return false;
    unsigned const q = top_bits_for(n);
    if (q + quotient_filter::min_remainder_bits > p)
        return false;
    unsigned const r = remainder_bits_for(p, n);
    return r >= quotient_filter::min_remainder_bits && r <= quotient_filter::max_remainder_bits;
}

std::uint64_t words_for(std::uint64_t const nblocks, unsigned const r) noexcept
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

    // v plus every region's `field` combined by add: a statistic with the changes of concurrent inserts that
    // are not folded into the filter's own counters yet.
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
            if (l.load(std::memory_order_relaxed) == 0 && l.exchange(1, std::memory_order_acquire) == 0)
                return;
            if (spins < 64)
                cpu_relax();
            else
                std::this_thread::yield();
        }
    }
    void unlock(std::size_t const i) noexcept { regions[i].lock.store(0, std::memory_order_release); }
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

// ---------------------------------------------------------------------------------------------------------
// Construction.

quotient_filter::quotient_filter() noexcept = default;
quotient_filter::quotient_filter(quotient_filter &&) noexcept = default;
quotient_filter & quotient_filter::operator=(quotient_filter &&) noexcept = default;
quotient_filter::~quotient_filter() = default;

zeroed_memory quotient_filter::release_table() noexcept
{
    zeroed_memory block = mem_ != nullptr ? std::move(mem_->block) : zeroed_memory{};
    *this = quotient_filter{};
    return block;
}

void quotient_filter::set_key(unsigned const key_bits, unsigned const p, double const max_load,
                              bool const auto_grow) noexcept
{
    key_bits_ = key_bits;
    p_ = p;
    shl_ = p >= key_bits ? p - key_bits : 0;
    shr_ = p < key_bits ? key_bits - p : 0;
    key_mask_ = low_bits_mask(key_bits);
    max_load_ = max_load;
    auto_grow_ = auto_grow;
}

void quotient_filter::set_geometry(std::uint64_t const nslots)
{
    unsigned const q = top_bits_for(nslots);
    unsigned const r = remainder_bits_for(p_, nslots);
    q_ = q;
    r_ = r;
    split_ = !std::has_single_bit(nslots);
    low_bits_ = p_ - q;
    low_mask_ = low_bits_mask(low_bits_);
    scaled_slots_ = split_ ? nslots << (64 - q) : 0;
    // (2^128 - 1) / scaled_slots_ lies in (2^64, 2^65): its low 64 bits
    top_recip_ = split_ ? static_cast<std::uint64_t>(~static_cast<wide>(0) / scaled_slots_) : 0;
    rmask_ = low_bits_mask(r);
    nslots_ = nslots;
    nblocks_ = blocks_for(nslots);
    phys_slots_ = nblocks_ * 64;
    block_bytes_ = header_bytes + 8 * std::uint64_t{r};
    nwords_ = words_for(nblocks_, r);
    grow_at_ = static_cast<std::uint64_t>(max_load_ * static_cast<double>(nslots_));
    stuck_at_ = std::max(grow_at_, static_cast<std::uint64_t>(stuck_load * static_cast<double>(nslots_)));
    swar_fields_ = 57 / r;
    swar_ones_ = 0;
    for (unsigned f = 0; f < swar_fields_; ++f)
        swar_ones_ |= std::uint64_t{1} << (f * r);
    swar_high_ = swar_ones_ << (r - 1);
    // Growth: twice the home slots, or, where the fingerprints are too narrow for that (a table that is not a
    // power of two needs one more bit), the power of two below it; 0 if neither is larger than the table.
    std::uint64_t const twice = 2 * nslots;
    std::uint64_t const pow2 = std::bit_floor(twice);
    grown_slots_ = geometry_ok(p_, twice) ? twice : pow2 > nslots && geometry_ok(p_, pow2) ? pow2 : 0;
}

void quotient_filter::allocate_table(zeroed_memory * const spare)
{
    if (spare != nullptr && spare->size() >= std::max<std::uint64_t>(nwords_, 1) * 8)
        mem_ = std::make_unique<memory>(std::move(*spare), nwords_);
    else
        mem_ = std::make_unique<memory>(nwords_);
    table_ = mem_->ptr;
    ctable_ = table_;
    conc_ = std::make_unique<concurrency>(static_cast<std::size_t>((phys_slots_ >> region_slot_bits) + 1));
}

quotient_filter quotient_filter::with_geometry(unsigned const key_bits, unsigned const q, unsigned const r,
                                               double const max_load, bool const auto_grow)
{
    if (key_bits < 1 || key_bits > 64)
        throw usage_error{"quotient filter: key bits " + std::to_string(key_bits) + " outside [1, 64]"};
    if (r < min_remainder_bits || r > max_remainder_bits || q < min_quotient_bits || q > max_quotient_bits ||
        q + r > 64)
        throw usage_error{"quotient filter: invalid geometry q = " + std::to_string(q) +
                          ", r = " + std::to_string(r) + " for " + std::to_string(key_bits) + "-bit keys"};
    if (!(max_load > 0.0 && max_load <= 1.0))
        throw usage_error{"quotient filter: maximal load must be in (0, 1]"};
    quotient_filter f;
    f.set_key(key_bits, q + r, max_load, auto_grow);
    f.set_geometry(std::uint64_t{1} << q);
    f.allocate_table();
    return f;
}

quotient_filter quotient_filter::with_slots(unsigned const key_bits, unsigned const p,
                                            std::uint64_t const nslots, double const max_load,
                                            bool const auto_grow)
{
    if (key_bits < 1 || key_bits > 64)
        throw usage_error{"quotient filter: key bits " + std::to_string(key_bits) + " outside [1, 64]"};
    if (!geometry_ok(p, nslots))
        throw usage_error{"quotient filter: invalid geometry of " + std::to_string(nslots) +
                          " home slots for " + std::to_string(p) + "-bit fingerprints"};
    if (!(max_load > 0.0 && max_load <= 1.0))
        throw usage_error{"quotient filter: maximal load must be in (0, 1]"};
    quotient_filter f;
    f.set_key(key_bits, p, max_load, auto_grow);
    f.set_geometry(nslots);
    f.allocate_table();
    return f;
}

std::uint64_t quotient_filter::slots_for(std::uint64_t const used, double const max_load) noexcept
{
    double const need = std::ceil(static_cast<double>(used) / max_load);
    auto const n =
        static_cast<std::uint64_t>(std::min(need, std::ldexp(1.0, static_cast<int>(max_quotient_bits))));
    return std::max<std::uint64_t>(64, (n + 63) / 64 * 64);
}

std::uint64_t quotient_filter::first_top(std::uint64_t const h) const noexcept
{
    // ceil(h 2^64 / S), S = scaled_slots_: top_estimate() is at most two below it, then made exact with the
    // range reduction itself; the loops only as a guard.
    std::uint64_t a = top_estimate(h);
    while (home_of_top(a) < h)
        ++a;
    while (a > 0 && home_of_top(a - 1) >= h)
        --a;
    return a;
}

namespace
{
// The geometry create() picks: p-bit fingerprints in nslots home slots.
struct qf_plan
{
    unsigned p;
    std::uint64_t nslots;
};

qf_plan plan_geometry(filter_config const & cfg, unsigned const key_bits, std::uint64_t const expected)
{
    if (key_bits < 1 || key_bits > 64)
        throw usage_error{"quotient filter: key bits " + std::to_string(key_bits) + " outside [1, 64]"};
    if (!(cfg.fpr >= 0.0 && cfg.fpr < 0.5))
        throw usage_error{"quotient filter: false-positive rate must be in [0, 0.5), got " +
                          std::to_string(cfg.fpr)};
    if (!(cfg.max_load > 0.0 && cfg.max_load <= 1.0))
        throw usage_error{"quotient filter: maximal load must be in (0, 1], got " +
                          std::to_string(cfg.max_load)};
    // Exact width: the key, padded when the key space could be filled (counters need several slots per key).
    unsigned p_exact = key_bits;
    if (key_bits + cfg.shard_bits < quotient_filter::small_key_space_bits)
        p_exact += quotient_filter::exact_padding_bits;
    p_exact = std::min(64u, std::max(p_exact, quotient_filter::min_fingerprint_bits));
    // Initial table: the fewest home slots (a multiple of 64, at least 2^default_min_quotient_bits) that hold
    // the expected keys within max_load, with room for three standard deviations of their spread among
    // shards (a shard that overflows doubles).
    std::uint64_t nslots = std::uint64_t{1} << quotient_filter::default_min_quotient_bits;
    if (expected > 0)
    {
        double const e = static_cast<double>(expected);
        nslots = std::max(
            nslots, quotient_filter::slots_for(static_cast<std::uint64_t>(std::ceil(e + 3.0 * std::sqrt(e))),
                                               cfg.max_load));
    }
    unsigned q = top_bits_for(nslots);
    unsigned p = p_exact;
    if (cfg.fpr > 0.0)
    {
        std::uint64_t n_design = expected;
        if (n_design == 0)
            n_design = std::max<std::uint64_t>(1, quotient_filter::default_design_keys >>
                                                      std::min(cfg.shard_bits, 63u));
        // Smallest p with n_design / 2^p <= eps.
        unsigned bits = 1;
        while (bits < 64 && std::ldexp(cfg.fpr, static_cast<int>(bits)) < static_cast<double>(n_design))
            ++bits;
        p = std::max(bits, q + quotient_filter::min_remainder_bits);
        if (p >= key_bits)
            p = p_exact; // the fingerprint holds the whole key: exact, with the same p as exact mode
    }
    if (geometry_ok(p, nslots))
        return {p, nslots};
    // Fingerprints too narrow or too wide for that table: the nearest power-of-two geometry.
    q = std::min(q, p - quotient_filter::min_remainder_bits);
    if (p - q > quotient_filter::max_remainder_bits)
        q = p - quotient_filter::max_remainder_bits;
    return {p, std::uint64_t{1} << q};
}
} // namespace

quotient_filter quotient_filter::create(filter_config const & cfg, unsigned const key_bits,
                                        std::uint64_t const expected)
{
    qf_plan const g = plan_geometry(cfg, key_bits, expected);
    if (std::has_single_bit(g.nslots))
    {
        unsigned const q = top_bits_for(g.nslots);
        return with_geometry(key_bits, q, g.p - q, cfg.max_load, cfg.auto_grow);
    }
    return with_slots(key_bits, g.p, g.nslots, cfg.max_load, cfg.auto_grow);
}

std::uint64_t quotient_filter::planned_bytes(filter_config const & cfg, unsigned const key_bits,
                                             std::uint64_t const expected)
{
    qf_plan const g = plan_geometry(cfg, key_bits, expected);
    return 8 * words_for(blocks_for(g.nslots), remainder_bits_for(g.p, g.nslots));
}

quotient_filter quotient_filter::view(std::span<std::uint64_t const> const params,
                                      std::span<std::uint64_t const> const words, unsigned const key_bits)
{
    auto bad = [](std::string const & what) { return format_error{"quotient filter: " + what}; };
    if (params.empty() || (params[0] != 1 && params[0] != params_version))
        throw bad("unknown layout version " + std::to_string(params.empty() ? 0 : params[0]));
    std::size_t const expected_count = params[0] == 1 ? params_count - 1 : params_count;
    if (params.size() != expected_count)
        throw bad("expected " + std::to_string(expected_count) + " parameters, found " +
                  std::to_string(params.size()));
    if (key_bits < 1 || key_bits > 64 || params[4] != key_bits)
        throw bad("key bits " + std::to_string(params[4]) + " do not match the file (" +
                  std::to_string(key_bits) + ")");
    std::uint64_t const q = params[1];
    std::uint64_t const r = params[2];
    std::uint64_t const p = params[3];
    if (q < min_quotient_bits || q > max_quotient_bits || p > 64)
        throw bad("invalid geometry q = " + std::to_string(q) + ", p = " + std::to_string(p));
    // Layout 1: 2^q home slots; layout 2 records their number (any multiple of 64, see with_slots).
    std::uint64_t const nslots = params[0] == 1 ? std::uint64_t{1} << q : params[params_count - 1];
    if (!geometry_ok(static_cast<unsigned>(p), nslots) || top_bits_for(nslots) != q ||
        remainder_bits_for(static_cast<unsigned>(p), nslots) != r)
        throw bad("invalid geometry q = " + std::to_string(q) + ", r = " + std::to_string(r) +
                  ", p = " + std::to_string(p) + ", " + std::to_string(nslots) + " home slots");
    std::uint64_t const flags = params[9];
    if (flags > 3 || (((flags >> 1) & 1) != 0) != (p >= key_bits))
        throw bad("invalid flags");
    double const max_load = std::bit_cast<double>(params[8]);
    if (!(max_load > 0.0 && max_load <= 1.0))
        throw bad("invalid maximal load");
    quotient_filter f;
    f.set_key(key_bits, static_cast<unsigned>(p), max_load, (flags & 1) != 0);
    f.set_geometry(nslots);
    if (params[10] != f.nblocks_)
        throw bad("block count " + std::to_string(params[10]) + " does not match q = " + std::to_string(q));
    if (words.size() != f.nwords_)
        throw bad("payload of " + std::to_string(words.size()) + " words, expected " +
                  std::to_string(f.nwords_));
    if (params[5] > f.phys_slots_ || params[6] > params[5])
        throw bad("inconsistent counts");
    f.used_ = params[5];
    f.distinct_ = params[6];
    f.total_ = params[7];
    f.ctable_ = words.data();
    return f;
}

quotient_filter quotient_filter::clone() const
{
    quotient_filter f;
    f.set_key(key_bits_, p_, max_load_, auto_grow_);
    f.set_geometry(nslots_);
    f.allocate_table();
    std::memcpy(f.table_, ctable_, nwords_ * 8);
    f.used_ = used_slots();
    f.distinct_ = distinct();
    f.total_ = total_count();
    return f;
}

// ---------------------------------------------------------------------------------------------------------
// Slot-level primitives and hot paths: quotient_filter::kernel<0> (the build's target) and, on x86-64 builds
// without BMI2, kernel<1> (BMI1/BMI2/LZCNT/POPCNT: pdep select, bzhi masks). detail::use_pdep_kernels()
// (cpu_dispatch.hpp) picks one at run time.

#define KSIEVE_QF_PASTE2(a, b) a##b
#define KSIEVE_QF_PASTE(a, b) KSIEVE_QF_PASTE2(a, b)

#define KSIEVE_QF_ISA 0
#include "quotient_filter_hot.inc"
#undef KSIEVE_QF_ISA

#if KSIEVE_QF_BMI2_KERNEL
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("bmi,bmi2,lzcnt,popcnt"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("bmi,bmi2,lzcnt,popcnt")
#endif
#define KSIEVE_QF_ISA 1
#include "quotient_filter_hot.inc"
#undef KSIEVE_QF_ISA
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

namespace detail
{

unsigned qf_select64_portable(std::uint64_t const w, unsigned const k) noexcept
{
    return select64_portable(w, k);
}

unsigned qf_select64(simd_level const level, std::uint64_t const w, unsigned const k) noexcept
{
#if KSIEVE_QF_BMI2_KERNEL
    if (level == simd_level::x86_64_v3 && simd_level_supported(level))
        return select64_call_isa1(w, k);
#else
    (void)level;
#endif
    return select64_call_isa0(w, k);
}

} // namespace detail

// Runs `call` on the kernel the dispatcher chooses (the filter as `self`).
#if KSIEVE_QF_BMI2_KERNEL
#define KSIEVE_QF_DISPATCH(self, call)                                                                       \
    (detail::use_pdep_kernels() ? kernel<1>{const_cast<quotient_filter &>(self)}.call                        \
                                : kernel<0>{const_cast<quotient_filter &>(self)}.call)
#else
#define KSIEVE_QF_DISPATCH(self, call) (kernel<0>{const_cast<quotient_filter &>(self)}.call)
#endif

insert_status quotient_filter::insert(std::uint64_t const key, std::uint64_t const count) noexcept
{
    return KSIEVE_QF_DISPATCH(*this, insert_key(key, count));
}

std::uint64_t quotient_filter::count(std::uint64_t const key) const noexcept
{
    return KSIEVE_QF_DISPATCH(*this, count_key(key));
}

insert_status quotient_filter::insert_batch(std::span<std::uint64_t const> const keys) noexcept
{
    return KSIEVE_QF_DISPATCH(*this, insert_batch(keys));
}

insert_status quotient_filter::insert_batch(std::span<std::uint64_t const> const keys,
                                            std::uint64_t * const old) noexcept
{
    return KSIEVE_QF_DISPATCH(*this, insert_batch(keys, old));
}

void quotient_filter::count_batch(std::span<std::uint64_t const> const keys,
                                  std::uint64_t * const out) const noexcept
{
    KSIEVE_QF_DISPATCH(*this, count_batch(keys, out));
}

void quotient_filter::count_sharded(std::span<quotient_filter const> const shards, unsigned const key_bits,
                                    unsigned const shard_bits, std::span<std::uint64_t const> const keys,
                                    std::uint64_t * const out) noexcept
{
    if (shards.empty() || keys.empty())
        return;
    unsigned const shift = (key_bits - shard_bits) & 63; // no shard bits: every key in shard 0 (mask 0)
    std::uint64_t const shard_mask = shards.size() - 1;
    std::uint64_t const local_mask =
        (key_bits - shard_bits >= 64) ? ~std::uint64_t{0} : (std::uint64_t{1} << (key_bits - shard_bits)) - 1;
    quotient_filter const & first = shards.front();
    bool const big = first.nblocks_ * first.block_bytes_ * shards.size() > next_header_min_bytes;
#if KSIEVE_QF_BMI2_KERNEL
    if (detail::use_pdep_kernels())
        return kernel<1>::count_sharded(shards.data(), shift, shard_mask, local_mask, keys.data(),
                                        keys.size(), out, big);
#endif
    kernel<0>::count_sharded(shards.data(), shift, shard_mask, local_mask, keys.data(), keys.size(), out,
                             big);
}

void quotient_filter::count_batch(std::span<std::uint64_t const> const keys, std::uint64_t * const out,
                                  batch_scratch & scratch) const noexcept
{
    if (!order_batch(keys, scratch))
        KSIEVE_QF_DISPATCH(*this, count_batch(keys, out));
    else
        KSIEVE_QF_DISPATCH(*this,
                           count_batch_ordered(scratch.fps_.data(), keys.size(), scratch.pos_.data(), out));
}

insert_status quotient_filter::insert_batch(std::span<std::uint64_t const> const keys,
                                            std::uint64_t * const old, batch_scratch & scratch) noexcept
{
    if (table_ == nullptr || !order_batch(keys, scratch))
        return KSIEVE_QF_DISPATCH(*this, insert_batch(keys, old));
    return KSIEVE_QF_DISPATCH(
        *this, insert_batch_ordered(scratch.fps_.data(), keys.size(), scratch.pos_.data(), old));
}

#undef KSIEVE_QF_DISPATCH

bool quotient_filter::batch_scratch::reserve(std::size_t const n) noexcept
{
    try
    {
        // each checked on its own: if one resize throws, the other may already have grown
        if (fps_.size() < n)
            fps_.resize(n);
        if (pos_.size() < n)
            pos_.resize(n);
        return true;
    }
    catch (...)
    {
        return false;
    }
}

namespace
{
// Home-slot bits of one region of an ordered batch: a power of two number of blocks of about
// order_region_bytes.
unsigned order_region_slot_bits(std::uint64_t const block_bytes) noexcept
{
    std::uint64_t const region_blocks =
        std::bit_floor(std::max<std::uint64_t>(1, quotient_filter::order_region_bytes / block_bytes));
    return 6 + static_cast<unsigned>(std::countr_zero(region_blocks));
}
} // namespace

bool quotient_filter::ordered_batch(std::size_t const n, batch_scratch const & scratch) const noexcept
{
    // more than one region, else there is nothing to order
    return n >= 2 && n <= std::numeric_limits<std::uint32_t>::max() &&
           nblocks_ * block_bytes_ > scratch.min_table_bytes && n * order_min_density >= nblocks_ &&
           q_ > order_region_slot_bits(block_bytes_);
}

bool quotient_filter::order_batch(std::span<std::uint64_t const> const keys, batch_scratch & s) const noexcept
{
    std::size_t const n = keys.size();
    if (!ordered_batch(n, s))
        return false;
    // At most 2^12 regions (the counts stay in L1).
    unsigned const slot_bits = order_region_slot_bits(block_bytes_);
    unsigned const regions_bits = std::min(q_ - slot_bits, 12u);
    unsigned const shift =
        r_ + q_ - regions_bits; // region = table code >> shift (home slot >> q - regions_bits)
    std::size_t const regions = std::size_t{1} << regions_bits;
    if (!s.reserve(n))
        return false;
    try
    {
        s.start_.assign(regions + 1, 0);
    }
    catch (...)
    {
        return false;
    }
    std::uint32_t * const start = s.start_.data();
    for (std::size_t i = 0; i < n; ++i)
        ++start[(key_code(keys[i]) >> shift) + 1];
    for (std::size_t g = 0; g < regions; ++g)
        start[g + 1] += start[g];
    std::uint64_t * const fps = s.fps_.data();
    std::uint32_t * const pos = s.pos_.data();
    for (std::size_t i = 0; i < n; ++i)
    {
        std::uint64_t const fp = fingerprint(keys[i]); // fingerprints: insertions may grow the table
        std::uint32_t const at = start[slot_code(fp) >> shift]++;
        fps[at] = fp;
        pos[at] = static_cast<std::uint32_t>(i);
    }
    return true;
}

// ---------------------------------------------------------------------------------------------------------
// Public single-key operations.

std::uint64_t quotient_filter::grown_slots() const noexcept
{
    return grown_slots_;
}

bool quotient_filter::can_grow() const noexcept
{
    return grown_slots_ != 0;
}

bool quotient_filter::try_grow() noexcept
{
    try
    {
        std::uint64_t const n = grown_slots();
        return n != 0 && resize_slots(n);
    }
    catch (...)
    {
        return false;
    }
}

void quotient_filter::fold_concurrent() noexcept
{
    if (!conc_ || !conc_->dirty.load(std::memory_order_relaxed))
        return;
    for (std::size_t i = 0; i < conc_->n; ++i)
    {
        auto & g = conc_->regions[i];
        used_ = static_cast<std::uint64_t>(static_cast<std::int64_t>(used_) + g.used);
        distinct_ = static_cast<std::uint64_t>(static_cast<std::int64_t>(distinct_) + g.distinct);
        total_ = sat_add(total_, g.total);
        g.used = 0;
        g.distinct = 0;
        g.total = 0;
    }
    conc_->dirty.store(false, std::memory_order_relaxed);
}

bool quotient_filter::remove(std::uint64_t const key, std::uint64_t const count) noexcept
{
    if (table_ == nullptr)
        return false;
    fold_concurrent();
    std::uint64_t const fp = key_code(key);
    std::uint64_t const h = fp >> r_;
    std::uint64_t const x = fp & rmask_;
    auto k = kernel<0>::of(*this);
    locate_info li;
    if (k.locate(h, phys_slots_, false, li) != rc_ok || !li.occupied)
        return false;
    group_info g;
    if (!k.find_group(li, x, g))
        return false;
    if (count == 0)
        return true;
    std::uint64_t const c2 = g.count > count ? g.count - count : 0;
    std::uint64_t enc[max_group_slots];
    unsigned const n = c2 == 0 ? 0 : k.encode(x, c2, enc);
    for (unsigned t = 0; t < n; ++t)
        k.set_slot(g.pos + t, enc[t]);
    if (n < g.len)
    {
        bool const vanish = n == 0 && g.pos == li.start && g.last;
        k.delete_slots(h, g.pos + n, g.len - n, li.end, vanish, g.last && !vanish);
    }
    used_ -= g.len - n;
    if (c2 == 0)
        --distinct_;
    std::uint64_t const removed = std::min(count, g.count);
    total_ = total_ >= removed ? total_ - removed : 0;
    return true;
}

insert_status quotient_filter::insert_concurrent(std::uint64_t const key, std::uint64_t const count) noexcept
{
    if (table_ == nullptr)
        return insert_status::full;
    if (count == 0)
        return insert_status::ok;
    concurrency & cs = *conc_;
    auto k = kernel<0>::of(*this);
    std::uint64_t const fp = key_code(key);
    std::uint64_t const h = fp >> r_;
    std::uint64_t const x = fp & rmask_;
    std::size_t const first = static_cast<std::size_t>(h >> region_slot_bits);
    std::size_t last = first;
    cs.lock(first);
    std::int64_t du = 0;
    std::uint64_t nd = 0;
    std::uint64_t old_unused = 0;
    int rc;
    for (;;)
    {
        std::uint64_t const limit = std::min(phys_slots_, std::uint64_t{last + 1} << region_slot_bits);
        rc = k.insert_fp(h, x, count, limit, true, none, du, nd, old_unused);
        if (rc == rc_beyond && limit < phys_slots_)
        {
            cs.lock(++last);
            continue;
        }
        break;
    }
    if (rc == rc_saturated)
    {
        // Rare (a cluster of hundreds of slots): serialise with everyone, locks in ascending order.
        for (std::size_t i = first; i <= last; ++i)
            cs.unlock(i);
        for (std::size_t i = 0; i < cs.n; ++i)
            cs.lock(i);
        rc = k.insert_fp(h, x, count, phys_slots_, false, none, du, nd, old_unused);
        if (rc == rc_ok)
        {
            auto & g = cs.regions[first];
            g.used += du;
            g.distinct += static_cast<std::int64_t>(nd);
            g.total = sat_add(g.total, count);
        }
        for (std::size_t i = 0; i < cs.n; ++i)
            cs.unlock(i);
    }
    else
    {
        if (rc == rc_ok)
        {
            auto & g = cs.regions[first];
            g.used += du;
            g.distinct += static_cast<std::int64_t>(nd);
            g.total = sat_add(g.total, count);
        }
        for (std::size_t i = first; i <= last; ++i)
            cs.unlock(i);
    }
    if (rc != rc_ok)
        return insert_status::full;
    if (!cs.dirty.load(std::memory_order_relaxed))
        cs.dirty.store(true, std::memory_order_relaxed);
    return insert_status::ok;
}

// ---------------------------------------------------------------------------------------------------------
// Iteration, rebuilding, merging.

quotient_filter::cursor::cursor(quotient_filter const & f) noexcept : f_{&f} {}

// The next occupied home slot's run: its quotient, first and last slot. False at the end (and after it).
[[gnu::always_inline]] inline bool quotient_filter::cursor::next_run(quotient_filter const & f,
                                                                     position & at) noexcept
{
    auto const k = kernel<0>::of(f);
    at.in_run = false;
    if (at.next_quotient >= f.nslots_)
        return false;
    // The next occupied home slot: the lowest occupied bit not yet consumed.
    while (at.occ_bits == 0)
    {
        std::uint64_t const b = ++at.occ_block;
        if (64 * b >= f.nslots_)
        {
            at.next_quotient = f.nslots_;
            return false;
        }
        at.occ_bits = k.occupieds(b);
        // The walk reads the table front to back: fetch a few blocks ahead (the hardware prefetcher stops
        // at page boundaries).
        if (std::uint64_t const ahead = b + 8; ahead < f.nblocks_)
        {
            auto const * const blk = reinterpret_cast<char const *>(f.ctable_) + ahead * f.block_bytes_;
            __builtin_prefetch(blk);
            __builtin_prefetch(blk + 64);
            __builtin_prefetch(blk + 127);
        }
    }
    std::uint64_t const h = 64 * at.occ_block + static_cast<std::uint64_t>(std::countr_zero(at.occ_bits));
    at.occ_bits &= at.occ_bits - 1;
    // Its run's end: the next runend bit not yet consumed.
    while (at.end_bits == 0)
    {
        std::uint64_t const b = ++at.end_block;
        if (64 * b >= f.phys_slots_)
        {
            at.next_quotient = f.nslots_;
            return false;
        }
        at.end_bits = k.runends(b);
    }
    std::uint64_t const end = 64 * at.end_block + static_cast<std::uint64_t>(std::countr_zero(at.end_bits));
    at.end_bits &= at.end_bits - 1;
    std::uint64_t const start = at.have_prev && at.prev_end + 1 > h ? at.prev_end + 1 : h;
    if (h >= f.nslots_ || end < start)
    {
        // (past the home slots, or a run that ends before it starts: not a table this filter wrote)
        at.next_quotient = f.nslots_;
        return false;
    }
    at.quotient = h;
    if (f.split_)
    {
        // first_top(h) inlined: the estimate and its two steps up, without a branch
        std::uint64_t const a = f.top_estimate(h);
        at.top = a + (f.home_of_top(a) < h ? 1 : 0) + (f.home_of_top(a + 1) < h ? 1 : 0);
    }
    at.pos = start;
    at.run_end = end;
    at.prev_end = end;
    at.have_prev = true;
    at.next_quotient = h + 1;
    at.in_run = true;
    return true;
}

bool quotient_filter::cursor::next() noexcept
{
    quotient_filter const & f = *f_;
    if (!(at_.in_run && at_.pos <= at_.run_end) && !next_run(f, at_))
        return false;
    std::uint64_t v, c, len;
    kernel<0>::of(f).decode_group(at_.pos, at_.run_end, v, c, len);
    fp_ = f.split_ ? ((at_.top + (v >> f.low_bits_)) << f.low_bits_) | (v & f.low_mask_)
                   : (at_.quotient << f.r_) | v;
    count_ = c;
    at_.pos += len;
    return true;
}

std::uint64_t quotient_filter::cursor::words_done() const noexcept
{
    quotient_filter const & f = *f_;
    // Blocks before the run being read and before the next home slot are not read again.
    std::uint64_t const from = std::min(at_.in_run ? at_.pos : at_.next_quotient, at_.next_quotient);
    std::uint64_t const blocks = std::min(from >> 6, f.nblocks_);
    return std::min(blocks * f.block_bytes_ / 8, f.nwords_);
}

std::size_t quotient_filter::cursor::read(std::uint64_t * const fps, std::uint64_t * const counts,
                                          std::size_t const cap) noexcept
{
    quotient_filter const & f = *f_;
    auto const k = kernel<0>::of(f);
    position at = at_; // (a local: kept in registers)
    std::size_t n = 0;
    std::uint64_t v, c, len;
    if (f.split_)
        for (; n < cap; ++n, at.pos += len)
        {
            if (!(at.in_run && at.pos <= at.run_end) && !next_run(f, at))
                break;
            k.decode_group(at.pos, at.run_end, v, c, len);
            fps[n] = ((at.top + (v >> f.low_bits_)) << f.low_bits_) | (v & f.low_mask_);
            counts[n] = c;
        }
    else
        for (; n < cap; ++n, at.pos += len)
        {
            if (!(at.in_run && at.pos <= at.run_end) && !next_run(f, at))
                break;
            k.decode_group(at.pos, at.run_end, v, c, len);
            fps[n] = (at.quotient << f.r_) | v;
            counts[n] = c;
        }
    at_ = at;
    return n;
}

// Packs a block's 64 remainders of R bits (slot i at bit i R) into its R words, the shifts and word indices
// known at compile time.
template <unsigned R>
void pack_remainders(std::uint64_t const * const rems, std::uint8_t * const out) noexcept
{
    std::uint64_t words[R + 1] = {};
#pragma GCC unroll 64
    for (unsigned i = 0; i < 64; ++i)
    {
        unsigned const bit = i * R;
        unsigned const off = bit & 63;
        words[bit >> 6] |= rems[i] << off;
        if (off + R > 64)
            words[(bit >> 6) + 1] |= (rems[i] >> 1) >> (63 - off);
    }
    for (unsigned w = 0; w < R; ++w)
        store64(out + 8 * w, words[w]);
}

template <std::size_t... R> constexpr auto pack_table(std::index_sequence<R...>) noexcept
{
    using fn = void (*)(std::uint64_t const *, std::uint8_t *) noexcept;
    return std::array<fn, sizeof...(R)>{&pack_remainders<static_cast<unsigned>(R == 0 ? 1 : R)>...};
}

// pack_remainders<r> for every remainder width r (entry 0 unused: r >= 2).
constexpr auto pack_block_remainders =
    pack_table(std::make_index_sequence<quotient_filter::max_remainder_bits + 1>{});

// Builds a filter from fingerprints appended in strictly increasing order (resize, merge) into an empty
// table. A run's end is marked when the next run starts (or at finish()). The remainders of the block being
// filled are collected here and packed into the table when the walk leaves the block; the occupied and runend
// bits go straight to the table. The statistics are written by finish().
struct qf_appender
{
    quotient_filter & f;
    std::uint64_t pos{0};
    std::uint64_t last_h{none};
    std::uint64_t used{0};
    std::uint64_t distinct{0};
    std::uint64_t total{0};
    std::uint64_t block{none}; // the block whose remainders are in rems
    std::array<std::uint64_t, 64> rems{};
    std::uint64_t occ_block{none}; // the block of the occupied bits in occ_word, not yet in the table
    std::uint64_t occ_word{0};
    std::uint64_t end_block{none}; // likewise for runend bits
    std::uint64_t end_word{0};

    // ORs `word` into the 64-bit field at byte `field` of block b's header.
    void or_header(std::uint64_t const b, std::uint64_t const field, std::uint64_t const word) noexcept
    {
        std::uint8_t * const w = reinterpret_cast<std::uint8_t *>(f.table_) + b * f.block_bytes_ + field;
        store64(w, load64(w) | word);
    }

    // Packs rems into the remainder area of `block` (r words of 64 slots of r bits) and clears it.
    void flush() noexcept
    {
        if (block == none)
            return;
        auto * const out = reinterpret_cast<std::uint8_t *>(f.table_) + block * f.block_bytes_ + header_bytes;
        pack_block_remainders[f.r_](rems.data(), out);
        rems.fill(0);
        block = none;
    }

    bool append(std::uint64_t const fp, std::uint64_t const count) noexcept
    {
        std::pair<std::uint64_t, std::uint64_t> const e{fp, count};
        return append_all({&e, 1});
    }

    // append() for each (fingerprint, count) of `entries`, the table's parameters and the appender's state in
    // locals (stores into the table could otherwise alias them). False as soon as one does not fit.
    bool append_all(std::span<std::pair<std::uint64_t, std::uint64_t> const> const entries) noexcept
    {
        return f.split_ ? append_all_as<true>(entries) : append_all_as<false>(entries);
    }

    // append_all() for a table of split geometry or not.
    template <bool split>
    bool append_all_as(std::span<std::pair<std::uint64_t, std::uint64_t> const> const entries) noexcept
    {
        auto k = quotient_filter::kernel<0>{f};
        auto * const table = reinterpret_cast<std::uint8_t *>(f.table_);
        std::uint64_t const block_bytes = f.block_bytes_;
        unsigned const r = f.r_;
        std::uint64_t const rmask = f.rmask_;
        std::uint64_t const phys = f.phys_slots_;
        unsigned const low_bits = f.low_bits_;
        std::uint64_t const low_mask = f.low_mask_;
        std::uint64_t const scaled = f.scaled_slots_;
        std::uint64_t p = pos;
        std::uint64_t last = last_h;
        std::uint64_t n_used = used;
        std::uint64_t n_total = total;
        // (occupied and runend bits collected a word at a time, as the remainders are)
        std::uint64_t ob = occ_block, ow = occ_word, eb = end_block, ew = end_word;
        auto set_bit =
            [&](std::uint64_t const j, std::uint64_t & b, std::uint64_t & word, std::uint64_t const field)
        {
            if ((j >> 6) != b)
            {
                if (b != none)
                {
                    std::uint8_t * const w = table + b * block_bytes + field;
                    store64(w, load64(w) | word);
                }
                b = j >> 6;
                word = 0;
            }
            word |= std::uint64_t{1} << (j & 63);
        };
        bool ok = true;
        for (auto const & [fp, count] : entries)
        {
            std::uint64_t code = fp;
            if constexpr (split)
            {
                __extension__ using wide = unsigned __int128;
                wide const t = static_cast<wide>(fp >> low_bits) * scaled;
                code = (static_cast<std::uint64_t>(t >> 64) << r) |
                       ((static_cast<std::uint64_t>(t) >= scaled ? std::uint64_t{1} : 0) << low_bits) |
                       (fp & low_mask);
            }
            std::uint64_t const h = code >> r;
            std::uint64_t enc[max_group_slots];
            unsigned n = 1;
            enc[0] = code & rmask;
            if (count != 1) // (a single slot holds most fingerprints)
                n = k.encode(code & rmask, count, enc);
            bool const same = h == last;
            std::uint64_t const start = same ? p : std::max(h, p);
            if (start + n > phys)
            {
                ok = false;
                break;
            }
            if (!same)
            {
                if (last != none)
                    set_bit(p - 1, eb, ew, 9); // runends
                set_bit(h, ob, ow, 1);         // occupieds
                last = h;
            }
            for (unsigned t = 0; t < n; ++t)
            {
                std::uint64_t const j = start + t;
                if ((j >> 6) != block)
                {
                    flush();
                    block = j >> 6;
                }
                rems[j & 63] = enc[t];
            }
            p = start + n;
            n_used += n;
            n_total = sat_add(n_total, count);
            ++distinct;
        }
        pos = p;
        last_h = last;
        used = n_used;
        total = n_total;
        occ_block = ob;
        occ_word = ow;
        end_block = eb;
        end_word = ew;
        return ok;
    }
    void finish() noexcept
    {
        flush();
        if (occ_block != none)
            or_header(occ_block, 1, occ_word);
        if (end_block != none)
            or_header(end_block, 9, end_word);
        auto k = quotient_filter::kernel<0>{f};
        if (last_h != none)
            k.set_runend(pos - 1, true);
        f.used_ = used;
        f.distinct_ = distinct;
        f.total_ = total;
        k.update_offsets(1, f.nblocks_ - 1);
    }
};

bool quotient_filter::resize(unsigned const new_q)
{
    if (new_q < min_quotient_bits || new_q > max_quotient_bits)
        return false;
    return resize_slots(std::uint64_t{1} << new_q);
}

bool quotient_filter::resize_slots(std::uint64_t const nslots)
{
    if (table_ == nullptr || !geometry_ok(p_, nslots))
        return false;
    fold_concurrent();
    if (nslots == nslots_)
        return true;
    if (used_ > nslots)
        return false;
    quotient_filter nf;
    nf.set_key(key_bits_, p_, max_load_, auto_grow_);
    nf.set_geometry(nslots);
    nf.allocate_table();
    qf_appender app{nf};
    cursor c{*this};
    while (c.next())
        if (!app.append(c.fingerprint(), c.count()))
            return false;
    app.finish();
    if (nf.used_ > nf.nslots_)
        return false;
    *this = std::move(nf);
    return true;
}

bool quotient_filter::shrink()
{
    if (nslots_ % 128 != 0 ||
        static_cast<double>(used_slots()) > max_load_ * static_cast<double>(nslots_ / 2))
        return false;
    return resize_slots(nslots_ / 2);
}

std::uint64_t quotient_filter::fit_slots() const
{
    // Slots the contents take: one per fingerprint, counters measured at the remainder width of a table
    // sized for the fingerprints alone (a reference that depends on the contents only, not on the table now).
    std::uint64_t used = distinct();
    if (total_count() != used)
    {
        unsigned const r_ref =
            std::clamp(remainder_bits_for(p_, slots_for(used, max_load_)), min_remainder_bits,
                       std::min(max_remainder_bits, p_ - min_quotient_bits));
        quotient_filter const ref = with_geometry(key_bits_, min_quotient_bits, r_ref, max_load_, false);
        std::uint64_t const mask = low_bits_mask(r_ref);
        used = 0;
        cursor c{*this};
        while (c.next())
            used += c.count() == 1 ? 1 : kernel<0>::of(ref).encoded_length(c.fingerprint() & mask, c.count());
    }
    return slots_for(used, max_load_);
}

bool quotient_filter::fit(double const slack)
{
    if (table_ == nullptr)
        return false;
    // Every fingerprint takes a slot: when that alone leaves less than `slack` to save, so does fit_slots(),
    // whose walk of the table (for the counters' slots) is then not needed.
    if (slack > 0.0 &&
        static_cast<double>(slots_for(distinct(), max_load_)) >= (1.0 - slack) * static_cast<double>(nslots_))
        return false;
    std::uint64_t n = fit_slots();
    if (slack > 0.0 ? static_cast<double>(n) >= (1.0 - slack) * static_cast<double>(nslots_) : n == nslots_)
        return false;
    // The counters may take a few more slots at the table's own remainder width than at the reference: then
    // the slots they take there, and 64 more at a time.
    std::uint64_t const before = nslots_;
    for (unsigned tries = 0; tries < 16; ++tries)
    {
        if (resize_slots(n) && static_cast<double>(used_) <= max_load_ * static_cast<double>(n))
            return nslots_ != before;
        n = std::max(n + 64, slots_for(used_, max_load_));
    }
    return nslots_ != before;
}

namespace
{

// What a k-way walk knows of one fingerprint: the inputs that hold it with a count of at least min_count,
// their summed and smallest count, and the first input's count (0 if it lacks it).
struct walk_entry
{
    std::uint64_t sum{0};
    std::uint64_t min{0};
    std::uint64_t first{0};
    std::size_t present{0};
};

// A filter's fingerprints cut to `p` bits (the top bits of each key's hash: a filter of wider fingerprints
// cut to fewer bits holds exactly what one of that width would), equal cut values joined; read from the
// filter a chunk at a time.
class fp_source
{
public:
    fp_source(quotient_filter const & f, unsigned const p, std::size_t const input,
              quotient_filter::consumed_fn const & consumed)
        : c_{f}, shift_{f.fingerprint_bits() - p}, words_{f.words()}, input_{input}, consumed_{consumed}
    {
    }
    fp_source(fp_source const &) = delete;
    fp_source & operator=(fp_source const &) = delete;

    // The next fingerprint and its count; false at the end.
    [[gnu::always_inline]] bool next(std::uint64_t & fp, std::uint64_t & count) noexcept
    {
        if (i_ == n_ && !refill())
            return false;
        fp = fps_[i_] >> shift_;
        count = counts_[i_];
        ++i_;
        if (shift_ != 0)
            while ((i_ != n_ || refill()) && (fps_[i_] >> shift_) == fp)
                count = sat_add(count, counts_[i_++]);
        return true;
    }

    // Fingerprints not cut (p is the filter's own width): fill() decodes the next chunk into fps() and
    // counts() and returns its size (0 at the end), for walks that keep their position in locals.
    [[nodiscard]] bool uncut() const noexcept { return shift_ == 0; }
    std::size_t fill() noexcept
    {
        refill();
        return n_;
    }
    [[nodiscard]] std::uint64_t const * fps() const noexcept { return fps_.data(); }
    [[nodiscard]] std::uint64_t const * counts() const noexcept { return counts_.data(); }

private:
    static constexpr std::size_t chunk = 256;
    bool refill() noexcept
    {
        i_ = 0;
        n_ = c_.read(fps_.data(), counts_.data(), chunk);
        if (consumed_)
        {
            // (the words passed, every 256 KiB)
            std::uint64_t const done = n_ == 0 ? words_.size() : c_.words_done();
            if (done >= released_ + (std::uint64_t{32} << 10) || (n_ == 0 && done > released_))
            {
                consumed_(input_, words_.subspan(released_, done - released_));
                released_ = done;
            }
        }
        return n_ != 0;
    }

    quotient_filter::cursor c_;
    unsigned shift_;
    std::span<std::uint64_t const> words_;
    std::size_t input_;
    quotient_filter::consumed_fn const & consumed_;
    std::uint64_t released_{0};
    std::size_t i_{0};
    std::size_t n_{0};
    std::array<std::uint64_t, chunk> fps_;
    std::array<std::uint64_t, chunk> counts_;
};

// An input's current fingerprint in a walk.
struct walk_head
{
    std::uint64_t fp{0};
    std::uint64_t count{0};
    std::size_t input{0};
};

// Adds input i's count c to e (counts below min_count are as absent).
[[gnu::always_inline]] inline void take(walk_entry & e, std::size_t const i, std::uint64_t const c,
                                        std::uint64_t const min_count) noexcept
{
    if (c < min_count)
        return;
    e.sum = sat_add(e.sum, c);
    e.min = e.present == 0 ? c : std::min(e.min, c);
    e.first = i == 0 ? c : e.first;
    ++e.present;
}

// walk_two for inputs whose fingerprints are not cut: positions in the decoded chunks kept in locals.
template <typename Fn>
void walk_two_uncut(fp_source & a, fp_source & b, std::uint64_t const min_count, Fn & fn)
{
    std::uint64_t const * const fa = a.fps();
    std::uint64_t const * const ca = a.counts();
    std::uint64_t const * const fb = b.fps();
    std::uint64_t const * const cb = b.counts();
    std::size_t na = a.fill(), nb = b.fill();
    std::size_t ia = 0, ib = 0;
    while (na != 0 && nb != 0)
    {
        walk_entry e;
        std::uint64_t const x = fa[ia];
        std::uint64_t const y = fb[ib];
        std::uint64_t const fp = std::min(x, y);
        if (x == fp)
        {
            take(e, 0, ca[ia], min_count);
            if (++ia == na)
            {
                na = a.fill();
                ia = 0;
            }
        }
        if (y == fp)
        {
            take(e, 1, cb[ib], min_count);
            if (++ib == nb)
            {
                nb = b.fill();
                ib = 0;
            }
        }
        if (e.present != 0)
            fn(fp, e);
    }
    // (the rest of the input that is left: chunk `n` of it from entry i)
    auto drain = [&](fp_source & src, std::size_t n, std::size_t i, std::size_t const input)
    {
        for (; n != 0; n = src.fill(), i = 0)
            for (; i < n; ++i)
            {
                walk_entry e;
                take(e, input, src.counts()[i], min_count);
                if (e.present != 0)
                    fn(src.fps()[i], e);
            }
    };
    drain(a, na, ia, 0);
    drain(b, nb, ib, 1);
}

// Two inputs: a plain two-way merge. fn is copied in and back out: the copy is a local whose state (a sink's
// counters and pointers) the compiler keeps in registers.
template <typename Fn> void walk_two(fp_source & a, fp_source & b, std::uint64_t const min_count, Fn & fn_out)
{
    Fn fn = fn_out;
    if (a.uncut() && b.uncut())
    {
        walk_two_uncut(a, b, min_count, fn);
        fn_out = fn;
        return;
    }
    std::uint64_t fa, ca, fb, cb;
    bool ha = a.next(fa, ca);
    bool hb = b.next(fb, cb);
    while (ha && hb)
    {
        walk_entry e;
        std::uint64_t const fp = std::min(fa, fb);
        if (fa == fp)
        {
            take(e, 0, ca, min_count);
            ha = a.next(fa, ca);
        }
        if (fb == fp)
        {
            take(e, 1, cb, min_count);
            hb = b.next(fb, cb);
        }
        if (e.present != 0)
            fn(fp, e);
    }
    for (; ha; ha = a.next(fa, ca))
    {
        walk_entry e;
        take(e, 0, ca, min_count);
        if (e.present != 0)
            fn(fa, e);
    }
    for (; hb; hb = b.next(fb, cb))
    {
        walk_entry e;
        take(e, 1, cb, min_count);
        if (e.present != 0)
            fn(fb, e);
    }
    fn_out = fn;
}

// K-way walk of the inputs in fingerprint order, fingerprints cut to p bits; fn(fingerprint, walk_entry) for
// every fingerprint some input holds. Counts below min_count are as absent.
template <typename Fn>
void merge_walk(std::span<quotient_filter const * const> const inputs, unsigned const p,
                std::uint64_t const min_count, quotient_filter::consumed_fn const & consumed, Fn & fn)
{
    std::vector<std::unique_ptr<fp_source>> cs;
    cs.reserve(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i)
        cs.push_back(std::make_unique<fp_source>(*inputs[i], p, i, consumed));
    if (cs.size() == 2)
        return walk_two(*cs[0], *cs[1], min_count, fn);
    std::vector<walk_head> heads;
    heads.reserve(cs.size());
    for (std::size_t i = 0; i < cs.size(); ++i)
        if (walk_head h{0, 0, i}; cs[i]->next(h.fp, h.count))
            heads.push_back(h);
    if (cs.size() <= 16)
    {
        // Few inputs: the smallest of their heads by a scan.
        while (!heads.empty())
        {
            std::uint64_t fp = none;
            for (auto const & h : heads)
                fp = std::min(fp, h.fp);
            walk_entry e;
            for (std::size_t a = 0; a < heads.size();)
            {
                auto & h = heads[a];
                if (h.fp == fp)
                {
                    take(e, h.input, h.count, min_count);
                    if (!cs[h.input]->next(h.fp, h.count))
                    {
                        h = heads.back();
                        heads.pop_back();
                        continue;
                    }
                }
                ++a;
            }
            if (e.present != 0)
                fn(fp, e);
        }
        return;
    }
    // Many inputs: a min-heap of heads.
    auto greater = [](walk_head const & a, walk_head const & b) { return a.fp > b.fp; };
    std::make_heap(heads.begin(), heads.end(), greater);
    while (!heads.empty())
    {
        std::uint64_t const fp = heads.front().fp;
        walk_entry e;
        while (!heads.empty() && heads.front().fp == fp)
        {
            std::pop_heap(heads.begin(), heads.end(), greater);
            walk_head & h = heads.back();
            take(e, h.input, h.count, min_count);
            if (cs[h.input]->next(h.fp, h.count))
                std::push_heap(heads.begin(), heads.end(), greater);
            else
                heads.pop_back();
        }
        if (e.present != 0)
            fn(fp, e);
    }
}

// The (fingerprint, count) stream of a walk, kept in a combine_scratch: fingerprints as gaps from the one
// before, counts in a byte, the rare values that do not fit in side lists.
class result_buffer
{
public:
    explicit result_buffer(quotient_filter::combine_scratch & s) noexcept
        : s_{&s}, gaps_{s.gaps.get()}, counts_{s.counts.get()}, cap_{s.capacity}
    {
        s_->wide_gaps.clear();
        s_->wide_counts.clear();
    }
    // False (and the entry not kept) once the buffer would pass the scratch's max_bytes.
    [[gnu::always_inline]] bool push(std::uint64_t const fp, std::uint64_t const count)
    {
        if (n_ == cap_) [[unlikely]]
        {
            room const r = grow(*s_, n_);
            if (r.cap == 0)
                return false;
            gaps_ = r.gaps;
            counts_ = r.counts;
            cap_ = r.cap;
        }
        std::uint64_t const gap = fp - last_;
        last_ = fp;
        constexpr std::uint64_t gap_escape = 0xffffffffu;
        gaps_[n_] = static_cast<std::uint32_t>(std::min(gap, gap_escape));
        if (gap >= gap_escape) [[unlikely]]
            s_->wide_gaps.push_back(gap);
        counts_[n_] = static_cast<std::uint8_t>(std::min<std::uint64_t>(count, 255));
        if (count >= 255) [[unlikely]]
            s_->wide_counts.push_back(count);
        ++n_;
        return true;
    }
    [[nodiscard]] std::size_t size() const noexcept { return n_; }
    // fn(chunk) for the entries in order, a span of (fingerprint, count) pairs at a time, while fn returns
    // true.
    template <typename Fn> void for_each_chunk(Fn && fn) const
    {
        std::array<std::pair<std::uint64_t, std::uint64_t>, 1024> chunk;
        std::size_t wg = 0;
        std::size_t wc = 0;
        std::uint64_t fp = 0;
        std::size_t const n = size();
        for (std::size_t i = 0; i < n;)
        {
            std::size_t const m = std::min(chunk.size(), n - i);
            for (std::size_t t = 0; t < m; ++t, ++i)
            {
                std::uint64_t gap = gaps_[i];
                if (gap == 0xffffffffu) [[unlikely]]
                    gap = s_->wide_gaps[wg++];
                fp += gap;
                std::uint64_t c = counts_[i];
                if (c == 255) [[unlikely]]
                    c = s_->wide_counts[wc++];
                chunk[t] = {fp, c};
            }
            if (!fn(std::span<std::pair<std::uint64_t, std::uint64_t> const>{chunk.data(), m}))
                return;
        }
    }

private:
    struct room
    {
        std::uint32_t * gaps;
        std::uint8_t * counts;
        std::size_t cap; // 0: no more room
    };
    // Room for more than the n entries of s: twice as many, at most max_bytes / 5. (Values in and out, so
    // that the buffer's own state never has its address taken.)
    [[gnu::noinline]] static room grow(quotient_filter::combine_scratch & s, std::size_t const n)
    {
        std::size_t const max_entries = s.max_bytes / 5;
        if (n >= max_entries)
            return {nullptr, nullptr, 0};
        std::size_t const cap = std::min(std::max<std::size_t>(2 * n, 4096), max_entries);
        auto gaps = std::make_unique_for_overwrite<std::uint32_t[]>(cap);
        auto counts = std::make_unique_for_overwrite<std::uint8_t[]>(cap);
        std::copy_n(s.gaps.get(), n, gaps.get());
        std::copy_n(s.counts.get(), n, counts.get());
        s.gaps = std::move(gaps);
        s.counts = std::move(counts);
        s.capacity = cap;
        return {s.gaps.get(), s.counts.get(), cap};
    }

    quotient_filter::combine_scratch * s_;
    std::uint32_t * gaps_;
    std::uint8_t * counts_;
    std::size_t cap_;
    std::size_t n_{0};
    std::uint64_t last_{0};
};

// The count a set operation gives a fingerprint (0: not in the result).
[[gnu::always_inline]] inline std::uint64_t combined_count(set_operation const op, walk_entry const & e,
                                                           std::size_t const inputs) noexcept
{
    switch (op)
    {
    case set_operation::unite:
        return e.sum;
    case set_operation::intersect:
        return e.present == inputs ? e.min : 0;
    case set_operation::subtract:
        return e.first != 0 && e.present == 1 ? e.first : 0;
    case set_operation::subtract_counts:
    {
        std::uint64_t const others = e.sum - e.first;
        return e.first > others ? e.first - others : 0;
    }
    }
    return 0;
}

// A walk's callback: the count the operation gives each fingerprint, handed to `sink` where not 0. Held by
// value (copied into the walk and back), as is the sink.
template <set_operation Op, typename Sink> struct counted
{
    Sink sink;
    std::size_t inputs;
    [[gnu::always_inline]] void operator()(std::uint64_t const fp, walk_entry const & e)
    {
        if (std::uint64_t const c = combined_count(Op, e, inputs); c != 0)
            sink(fp, c);
    }
};

// merge_walk with the callback counted<op, Sink>; the sink, as the walk left it, is returned.
template <typename Sink>
Sink walk_with(set_operation const op, std::span<quotient_filter const * const> const inputs,
               unsigned const p, std::uint64_t const min_count, quotient_filter::consumed_fn const & consumed,
               Sink sink)
{
    // (one walk per operation: its count rule inlined)
    auto with = [&](auto const op_c)
    {
        counted<op_c.value, Sink> fn{sink, inputs.size()};
        merge_walk(inputs, p, min_count, consumed, fn);
        sink = fn.sink;
    };
    switch (op)
    {
    case set_operation::unite:
        with(std::integral_constant<set_operation, set_operation::unite>{});
        break;
    case set_operation::intersect:
        with(std::integral_constant<set_operation, set_operation::intersect>{});
        break;
    case set_operation::subtract:
        with(std::integral_constant<set_operation, set_operation::subtract>{});
        break;
    case set_operation::subtract_counts:
        with(std::integral_constant<set_operation, set_operation::subtract_counts>{});
        break;
    }
    return sink;
}

} // namespace

quotient_filter quotient_filter::merge(std::span<quotient_filter const * const> const inputs)
{
    return combine(inputs, set_operation::unite, 1);
}

quotient_filter quotient_filter::combine(std::span<quotient_filter const * const> const inputs,
                                         set_operation const op, std::uint64_t const min_count,
                                         combine_scratch * const scratch, consumed_fn const & consumed)
{
    if (inputs.empty())
        throw usage_error{"quotient filter merge: no input"};
    quotient_filter const & first = *inputs[0];
    // Filters of different fingerprint widths combine at the narrowest: their fingerprints cut to it.
    unsigned p_min = first.p_;
    for (std::size_t i = 1; i < inputs.size(); ++i)
    {
        quotient_filter const & f = *inputs[i];
        if (f.key_bits_ != first.key_bits_)
            throw incompatible_error{"cannot combine quotient filters of " + std::to_string(first.key_bits_) +
                                     "- and " + std::to_string(f.key_bits_) +
                                     "-bit keys (input 1 and input " + std::to_string(i + 1) + ")"};
        p_min = std::min(p_min, f.p_);
    }
    // Counter lengths are measured with the smallest remainder width among the inputs once cut to p_min.
    unsigned r_ref = max_remainder_bits;
    for (auto const * f : inputs)
        r_ref = std::min(r_ref, p_min > f->q_ + min_remainder_bits ? p_min - f->q_ : min_remainder_bits);
    // The result's (fingerprint, count) stream: kept from the first walk unless it outgrows the buffer, then
    // walked again for the second pass.
    quotient_filter::combine_scratch own;
    // Pass 1: the slots the result needs, and the result kept.
    struct pass_one
    {
        result_buffer result;
        quotient_filter const * ref; // (its remainder width measures the counters)
        std::uint64_t mask;
        std::uint64_t need{0};
        bool keep{true};
        [[gnu::always_inline]] void operator()(std::uint64_t const fp, std::uint64_t const c)
        {
            need += c == 1 ? 1 : kernel<0>::of(*ref).encoded_length(fp & mask, c);
            keep = keep && result.push(fp, c);
        }
    };
    quotient_filter const ref =
        with_geometry(first.key_bits_, min_quotient_bits, r_ref, first.max_load_, false);
    pass_one const one =
        walk_with(op, inputs, p_min, min_count, consumed,
                  pass_one{result_buffer{scratch != nullptr ? *scratch : own}, &ref, low_bits_mask(r_ref)});
    std::uint64_t const need = one.need;
    unsigned const p = p_min;
    unsigned q_lo = std::min(default_min_quotient_bits, p - min_remainder_bits);
    q_lo = std::max({q_lo, min_quotient_bits, p > max_remainder_bits ? p - max_remainder_bits : 0u});
    // The fewest home slots that hold the result within max_load (at least 2^q_lo), or the next power of two
    // where the fingerprints do not fit that table.
    std::uint64_t nslots = std::max(slots_for(need, first.max_load_), std::uint64_t{1} << q_lo);
    // Pass 2: append into the new table (1/8 larger if the counters turn out longer).
    for (;; nslots += std::max<std::uint64_t>(64, nslots / 8 / 64 * 64))
    {
        if (!geometry_ok(p, nslots))
            nslots = std::bit_ceil(nslots);
        if (top_bits_for(nslots) > p - min_remainder_bits || top_bits_for(nslots) > max_quotient_bits)
            throw full_error{"quotient filter merge: the union does not fit in a " + std::to_string(p) +
                             "-bit fingerprint filter"};
        quotient_filter out;
        out.set_key(first.key_bits_, p, first.max_load_, first.auto_grow_);
        out.set_geometry(nslots);
        out.allocate_table(scratch != nullptr ? &scratch->spare_table : nullptr);
        qf_appender app{out};
        bool ok = true;
        if (one.keep)
            one.result.for_each_chunk([&](auto const chunk) { return ok = app.append_all(chunk); });
        else
        {
            // (the walk's result a chunk at a time)
            struct rewalk
            {
                std::vector<std::pair<std::uint64_t, std::uint64_t>> * chunk;
                qf_appender * app;
                bool * ok;
                void operator()(std::uint64_t const fp, std::uint64_t const c)
                {
                    chunk->emplace_back(fp, c);
                    if (chunk->size() == 1024)
                    {
                        *ok = *ok && app->append_all(*chunk);
                        chunk->clear();
                    }
                }
            };
            std::vector<std::pair<std::uint64_t, std::uint64_t>> chunk;
            chunk.reserve(1024);
            walk_with(op, inputs, p_min, min_count, consumed, rewalk{&chunk, &app, &ok});
            ok = ok && app.append_all(chunk);
        }
        if (!ok || static_cast<double>(app.used) > first.max_load_ * static_cast<double>(out.nslots_))
            continue;
        app.finish();
        return out;
    }
}

// ---------------------------------------------------------------------------------------------------------
// Parameters and statistics.

std::uint64_t quotient_filter::used_slots() const noexcept
{
    auto const v = static_cast<std::int64_t>(used_);
    return static_cast<std::uint64_t>(
        conc_ ? conc_->plus_pending(v, &concurrency::region::used, std::plus<>{}) : v);
}

std::uint64_t quotient_filter::distinct() const noexcept
{
    auto const v = static_cast<std::int64_t>(distinct_);
    return static_cast<std::uint64_t>(
        conc_ ? conc_->plus_pending(v, &concurrency::region::distinct, std::plus<>{}) : v);
}

std::uint64_t quotient_filter::total_count() const noexcept
{
    return conc_ ? conc_->plus_pending(total_, &concurrency::region::total,
                                       [](std::uint64_t const a, std::uint64_t const b)
                                       { return sat_add(a, b); })
                 : total_;
}

std::vector<std::uint64_t> quotient_filter::params() const
{
    std::uint64_t const flags = (auto_grow_ ? 1u : 0u) | (exact() ? 2u : 0u);
    // layout 1 (11 parameters) for 2^q home slots; layout 2 adds their number N
    std::vector<std::uint64_t> v{split_ ? params_version : 1,
                                 q_,
                                 r_,
                                 p_,
                                 key_bits_,
                                 used_slots(),
                                 distinct(),
                                 total_count(),
                                 std::bit_cast<std::uint64_t>(max_load_),
                                 flags,
                                 nblocks_};
    if (split_)
        v.push_back(nslots_);
    return v;
}

filter_stats quotient_filter::stats() const noexcept
{
    filter_stats s;
    s.bytes = nwords_ * 8;
    s.slots = nslots_;
    s.used = used_slots();
    s.distinct = distinct();
    s.total_count = total_count();
    s.load = nslots_ == 0 ? 0.0 : static_cast<double>(s.used) / static_cast<double>(nslots_);
    s.estimated_fpr =
        exact() ? 0.0 : std::min(1.0, std::ldexp(static_cast<double>(s.distinct), -static_cast<int>(p_)));
    return s;
}

} // namespace ksieve
