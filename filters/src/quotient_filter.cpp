#include <ksieve/filters/error.hpp>
#include <ksieve/filters/quotient_filter.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <thread>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__BMI2__) || defined(__SSE2__)
#include <immintrin.h>
#endif

namespace ksieve
{

namespace
{

constexpr std::uint64_t none = ~std::uint64_t{0};
constexpr std::uint64_t offset_saturated = 255;
constexpr std::uint64_t header_bytes = 17; // offset (1), occupieds (8), runends (8)
constexpr std::uint64_t params_version = 1;
constexpr std::size_t params_count = 11;
constexpr unsigned min_quotient_bits = 6;
constexpr unsigned max_quotient_bits = 48;
constexpr unsigned max_group_slots = 80; // 3 + 65 digits (r = 2, count 2^64) fits
constexpr std::size_t prefetch_distance = 16;
constexpr std::size_t batch_stage_gap = 8;

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
inline void store64(void * p, std::uint64_t const v) noexcept { std::memcpy(p, &v, 8); }

// popcount: the instruction when the target has it, else a branch-free SWAR count (the libgcc fallback
// of std::popcount is a call).
[[gnu::always_inline]] inline unsigned popcnt(std::uint64_t x) noexcept
{
#if defined(__POPCNT__)
    return static_cast<unsigned>(__builtin_popcountll(x));
#else
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return static_cast<unsigned>((x * 0x0101010101010101ULL) >> 56);
#endif
}

[[gnu::always_inline]] inline std::uint64_t low_mask(unsigned const n) noexcept
{
#if defined(__BMI2__)
    return _bzhi_u64(~std::uint64_t{0}, n); // n >= 64 gives all ones
#else
    return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
#endif
}

/* Position of the k-th (0-based) set bit of w, or 64 if w has at most k set bits (branch-free callers
 * compute selects whose result they then discard). */
inline unsigned select64(std::uint64_t w, unsigned k) noexcept
{
#if defined(__BMI2__)
    return static_cast<unsigned>(std::countr_zero(_pdep_u64(std::uint64_t{1} << (k & 63), w)));
#else
    unsigned base = 0;
    for (; base < 64; base += 8, w >>= 8)
    {
        unsigned const c = popcnt(w & 0xFFu);
        if (k < c)
        {
            for (unsigned i = 0; i < k; ++i)
                w &= w - 1;
            return base + static_cast<unsigned>(std::countr_zero(w));
        }
        k -= c;
    }
    return 64;
#endif
}

// cond ? a : b without a branch (the compiler turns plain ternaries on random data into branches).
[[gnu::always_inline]] inline std::uint64_t pick(bool const cond, std::uint64_t const a, std::uint64_t const b) noexcept
{
    return b ^ ((a ^ b) & (std::uint64_t{0} - static_cast<std::uint64_t>(cond)));
}

inline std::uint64_t sat_add(std::uint64_t const a, std::uint64_t const b) noexcept
{
    std::uint64_t const s = a + b;
    return s < a ? none : s;
}

inline std::uint64_t mul_add_sat(std::uint64_t const v, std::uint64_t const base, std::uint64_t const t) noexcept
{
    if (v > (none - t) / base)
        return none;
    return v * base + t;
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

std::uint64_t blocks_for(unsigned const q) noexcept
{
    std::uint64_t const nslots = std::uint64_t{1} << q;
    return (nslots + 63) / 64 + overflow_blocks(nslots);
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
    std::uint64_t * ptr{nullptr};
    std::size_t bytes{0};
    bool mapped{false};

    explicit memory(std::size_t const words)
    {
        bytes = std::max<std::size_t>(words, 1) * 8;
#if defined(__linux__)
        if (bytes >= (std::size_t{4} << 20))
        {
            void * const m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED)
                throw std::bad_alloc{};
#if defined(MADV_HUGEPAGE)
            ::madvise(m, bytes, MADV_HUGEPAGE); // fewer TLB misses on random access; a hint only
#endif
            ptr = static_cast<std::uint64_t *>(m);
            mapped = true;
            return;
        }
#endif
        ptr = new std::uint64_t[bytes / 8]();
    }
    ~memory()
    {
#if defined(__linux__)
        if (mapped)
        {
            ::munmap(ptr, bytes);
            return;
        }
#endif
        delete[] ptr;
    }
    memory(memory const &) = delete;
    memory & operator=(memory const &) = delete;
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
    bool last{false};       // the group ends the run
    std::uint64_t pos{0};   // group start, or insertion position when not found
    std::uint64_t len{0};
    std::uint64_t count{0};
};

// ---------------------------------------------------------------------------------------------------------
// Construction.

quotient_filter::quotient_filter() noexcept = default;
quotient_filter::quotient_filter(quotient_filter &&) noexcept = default;
quotient_filter & quotient_filter::operator=(quotient_filter &&) noexcept = default;
quotient_filter::~quotient_filter() = default;

void quotient_filter::set_key(unsigned const key_bits, unsigned const p, double const max_load,
                              bool const auto_grow) noexcept
{
    key_bits_ = key_bits;
    p_ = p;
    shl_ = p >= key_bits ? p - key_bits : 0;
    shr_ = p < key_bits ? key_bits - p : 0;
    key_mask_ = low_mask(key_bits);
    max_load_ = max_load;
    auto_grow_ = auto_grow;
}

void quotient_filter::set_geometry(unsigned const q, unsigned const r)
{
    q_ = q;
    r_ = r;
    rmask_ = low_mask(r);
    nslots_ = std::uint64_t{1} << q;
    nblocks_ = blocks_for(q);
    phys_slots_ = nblocks_ * 64;
    block_bytes_ = header_bytes + 8 * std::uint64_t{r};
    nwords_ = words_for(nblocks_, r);
    grow_at_ = static_cast<std::uint64_t>(max_load_ * static_cast<double>(nslots_));
    swar_fields_ = 57 / r;
    swar_ones_ = 0;
    for (unsigned f = 0; f < swar_fields_; ++f)
        swar_ones_ |= std::uint64_t{1} << (f * r);
    swar_high_ = swar_ones_ << (r - 1);
}

void quotient_filter::allocate_table()
{
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
        throw usage_error{"quotient filter: invalid geometry q = " + std::to_string(q) + ", r = " +
                          std::to_string(r) + " for " + std::to_string(key_bits) + "-bit keys"};
    if (!(max_load > 0.0 && max_load <= 1.0))
        throw usage_error{"quotient filter: maximal load must be in (0, 1]"};
    quotient_filter f;
    f.set_key(key_bits, q + r, max_load, auto_grow);
    f.set_geometry(q, r);
    f.allocate_table();
    return f;
}

quotient_filter quotient_filter::create(filter_config const & cfg, unsigned const key_bits,
                                        std::uint64_t const expected)
{
    if (key_bits < 1 || key_bits > 64)
        throw usage_error{"quotient filter: key bits " + std::to_string(key_bits) + " outside [1, 64]"};
    if (!(cfg.fpr >= 0.0 && cfg.fpr < 0.5))
        throw usage_error{"quotient filter: false-positive rate must be in [0, 0.5), got " + std::to_string(cfg.fpr)};
    if (!(cfg.max_load > 0.0 && cfg.max_load <= 1.0))
        throw usage_error{"quotient filter: maximal load must be in (0, 1], got " + std::to_string(cfg.max_load)};
    // Exact width: the key, padded when the key space could be filled (counters need several slots per key).
    unsigned p_exact = key_bits;
    if (key_bits + cfg.shard_bits < small_key_space_bits)
        p_exact += exact_padding_bits;
    p_exact = std::min(64u, std::max(p_exact, min_fingerprint_bits));
    // Initial table: smallest 2^q >= expected / max_load (exact powers of two: ldexp is exact).
    unsigned q = default_min_quotient_bits;
    if (expected > 0)
        while (q < max_quotient_bits && std::ldexp(cfg.max_load, static_cast<int>(q)) < static_cast<double>(expected))
            ++q;
    unsigned p = p_exact;
    if (cfg.fpr > 0.0)
    {
        std::uint64_t n_design = expected;
        if (n_design == 0)
            n_design = std::max<std::uint64_t>(1, default_design_keys >> std::min(cfg.shard_bits, 63u));
        // Smallest p with n_design / 2^p <= eps.
        unsigned bits = 1;
        while (bits < 64 && std::ldexp(cfg.fpr, static_cast<int>(bits)) < static_cast<double>(n_design))
            ++bits;
        p = std::max(bits, q + min_remainder_bits);
        if (p >= key_bits)
            p = p_exact; // the fingerprint holds the whole key: exact, with the same p as exact mode
    }
    q = std::min(q, p - min_remainder_bits);
    if (p - q > max_remainder_bits)
        q = p - max_remainder_bits;
    return with_geometry(key_bits, q, p - q, cfg.max_load, cfg.auto_grow);
}

quotient_filter quotient_filter::view(std::span<std::uint64_t const> const params,
                                      std::span<std::uint64_t const> const words, unsigned const key_bits)
{
    auto bad = [](std::string const & what) { return format_error{"quotient filter: " + what}; };
    if (params.size() != params_count)
        throw bad("expected " + std::to_string(params_count) + " parameters, found " + std::to_string(params.size()));
    if (params[0] != params_version)
        throw bad("unknown layout version " + std::to_string(params[0]));
    if (key_bits < 1 || key_bits > 64 || params[4] != key_bits)
        throw bad("key bits " + std::to_string(params[4]) + " do not match the file (" + std::to_string(key_bits) +
                  ")");
    std::uint64_t const q = params[1];
    std::uint64_t const r = params[2];
    std::uint64_t const p = params[3];
    if (q < min_quotient_bits || q > max_quotient_bits || r < min_remainder_bits || r > max_remainder_bits ||
        p != q + r || p > 64)
        throw bad("invalid geometry q = " + std::to_string(q) + ", r = " + std::to_string(r) + ", p = " +
                  std::to_string(p));
    std::uint64_t const flags = params[9];
    if (flags > 3 || (((flags >> 1) & 1) != 0) != (p >= key_bits))
        throw bad("invalid flags");
    double const max_load = std::bit_cast<double>(params[8]);
    if (!(max_load > 0.0 && max_load <= 1.0))
        throw bad("invalid maximal load");
    quotient_filter f;
    f.set_key(key_bits, static_cast<unsigned>(p), max_load, (flags & 1) != 0);
    f.set_geometry(static_cast<unsigned>(q), static_cast<unsigned>(r));
    if (params[10] != f.nblocks_)
        throw bad("block count " + std::to_string(params[10]) + " does not match q = " + std::to_string(q));
    if (words.size() != f.nwords_)
        throw bad("payload of " + std::to_string(words.size()) + " words, expected " + std::to_string(f.nwords_));
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
    f.set_geometry(q_, r_);
    f.allocate_table();
    std::memcpy(f.table_, ctable_, nwords_ * 8);
    f.used_ = used_slots();
    f.distinct_ = distinct();
    f.total_ = total_count();
    return f;
}

// ---------------------------------------------------------------------------------------------------------
// Slot-level primitives.

[[gnu::always_inline]] inline std::uint8_t const * quotient_filter::block(std::uint64_t const b) const noexcept
{
    return reinterpret_cast<std::uint8_t const *>(ctable_) + b * block_bytes_;
}
[[gnu::always_inline]] inline std::uint8_t * quotient_filter::mblock(std::uint64_t const b) noexcept
{
    return reinterpret_cast<std::uint8_t *>(table_) + b * block_bytes_;
}
[[gnu::always_inline]] inline std::uint64_t quotient_filter::occupieds(std::uint64_t const b) const noexcept { return load64(block(b) + 1); }
[[gnu::always_inline]] inline std::uint64_t quotient_filter::runends(std::uint64_t const b) const noexcept { return load64(block(b) + 9); }

// Remainder bits of slot i of a block start at bit i*r of the block's remainder area (8r bytes). A 64-bit
// window is loaded from the byte holding that bit, moved back so that it never leaves the block: then no
// access touches a neighbouring block (region locks rely on it).
[[gnu::always_inline]] inline std::uint64_t quotient_filter::get_slot(std::uint64_t const j) const noexcept
{
    std::uint8_t const * const rem = block(j >> 6) + header_bytes;
    if (r_ == 8)
        return rem[j & 63];
    std::uint64_t const bit = (j & 63) * r_;
    std::uint64_t byte = bit >> 3;
    std::uint64_t const lim = 8 * std::uint64_t{r_} - 8;
    if (byte > lim)
        byte = lim;
    return (load64(rem + byte) >> (bit - 8 * byte)) & rmask_;
}

[[gnu::always_inline]] inline void quotient_filter::set_slot(std::uint64_t const j, std::uint64_t const v) noexcept
{
    std::uint8_t * const rem = mblock(j >> 6) + header_bytes;
    if (r_ == 8)
    {
        rem[j & 63] = static_cast<std::uint8_t>(v);
        return;
    }
    std::uint64_t const bit = (j & 63) * r_;
    std::uint64_t byte = bit >> 3;
    std::uint64_t const lim = 8 * std::uint64_t{r_} - 8;
    if (byte > lim)
        byte = lim;
    unsigned const sh = static_cast<unsigned>(bit - 8 * byte);
    std::uint64_t w = load64(rem + byte);
    w = (w & ~(rmask_ << sh)) | (v << sh);
    store64(rem + byte, w);
}

// n consecutive slots of one block as one integer (n * r <= 57 bits).
[[gnu::always_inline]] inline std::uint64_t quotient_filter::get_chunk(std::uint64_t const j, unsigned const n) const noexcept
{
    std::uint8_t const * const rem = block(j >> 6) + header_bytes;
    std::uint64_t const bit = (j & 63) * r_;
    std::uint64_t byte = bit >> 3;
    std::uint64_t const lim = 8 * std::uint64_t{r_} - 8;
    if (byte > lim)
        byte = lim;
    return (load64(rem + byte) >> (bit - 8 * byte)) & low_mask(n * r_);
}

[[gnu::always_inline]] inline void quotient_filter::set_chunk(std::uint64_t const j, unsigned const n, std::uint64_t const v) noexcept
{
    std::uint8_t * const rem = mblock(j >> 6) + header_bytes;
    std::uint64_t const bit = (j & 63) * r_;
    std::uint64_t byte = bit >> 3;
    std::uint64_t const lim = 8 * std::uint64_t{r_} - 8;
    if (byte > lim)
        byte = lim;
    unsigned const sh = static_cast<unsigned>(bit - 8 * byte);
    std::uint64_t const m = low_mask(n * r_) << sh;
    std::uint64_t w = load64(rem + byte);
    w = (w & ~m) | (v << sh);
    store64(rem + byte, w);
}

[[gnu::always_inline]] inline void quotient_filter::set_runend(std::uint64_t const j, bool const v) noexcept
{
    std::uint8_t * const p = mblock(j >> 6) + 9;
    std::uint64_t w = load64(p);
    std::uint64_t const bit = std::uint64_t{1} << (j & 63);
    w = v ? (w | bit) : (w & ~bit);
    store64(p, w);
}

[[gnu::always_inline]] inline void quotient_filter::set_occupied(std::uint64_t const h, bool const v) noexcept
{
    std::uint8_t * const p = mblock(h >> 6) + 1;
    std::uint64_t w = load64(p);
    std::uint64_t const bit = std::uint64_t{1} << (h & 63);
    w = v ? (w | bit) : (w & ~bit);
    store64(p, w);
}

// memmove of n slots (remainders and runend bits) from src to dst, in pieces that stay inside one block on
// both sides.
void quotient_filter::move_slots(std::uint64_t dst, std::uint64_t src, std::uint64_t n) noexcept
{
    if (n == 0 || dst == src)
        return;
    bool const bytewise = (r_ & 7) == 0;
    std::uint64_t const cmax = bytewise ? 64 : 57 / r_;
    auto piece = [&](std::uint64_t const d, std::uint64_t const s, unsigned const c) {
        // remainders
        if (bytewise)
        {
            std::uint64_t const bpr = r_ / 8;
            small_memmove(mblock(d >> 6) + header_bytes + (d & 63) * bpr, block(s >> 6) + header_bytes + (s & 63) * bpr,
                          c * bpr);
        }
        else
            set_chunk(d, c, get_chunk(s, c));
        // runend bits
        std::uint64_t const bits = (runends(s >> 6) >> (s & 63)) & low_mask(c);
        std::uint8_t * const p = mblock(d >> 6) + 9;
        std::uint64_t const m = low_mask(c) << (d & 63);
        store64(p, (load64(p) & ~m) | (bits << (d & 63)));
    };
    if (dst < src)
    {
        while (n > 0)
        {
            std::uint64_t c = std::min({n, cmax, 64 - (src & 63), 64 - (dst & 63)});
            piece(dst, src, static_cast<unsigned>(c));
            src += c;
            dst += c;
            n -= c;
        }
    }
    else
    {
        std::uint64_t se = src + n;
        std::uint64_t de = dst + n;
        while (n > 0)
        {
            std::uint64_t c = std::min({n, cmax, ((se - 1) & 63) + 1, ((de - 1) & 63) + 1});
            se -= c;
            de -= c;
            piece(de, se, static_cast<unsigned>(c));
            n -= c;
        }
    }
}

// Zero remainders and runend bits of slots [from, to).
void quotient_filter::clear_slots(std::uint64_t from, std::uint64_t const to) noexcept
{
    bool const bytewise = (r_ & 7) == 0;
    std::uint64_t const cmax = bytewise ? 64 : 57 / r_;
    while (from < to)
    {
        std::uint64_t const c = std::min({to - from, cmax, 64 - (from & 63)});
        if (bytewise)
            std::memset(mblock(from >> 6) + header_bytes + (from & 63) * (r_ / 8), 0, c * (r_ / 8));
        else
            set_chunk(from, static_cast<unsigned>(c), 0);
        std::uint8_t * const p = mblock(from >> 6) + 9;
        store64(p, load64(p) & ~(low_mask(static_cast<unsigned>(c)) << (from & 63)));
        from += c;
    }
}

// Position of the k-th (1-based) runend at or after `from`, or none if it is not below `limit`.
[[gnu::always_inline]] inline std::uint64_t quotient_filter::select_runend(std::uint64_t const from, std::uint64_t k,
                                             std::uint64_t const limit) const noexcept
{
    if (from >= limit)
        return none;
    std::uint64_t b = from >> 6;
    std::uint64_t w = runends(b) & (~std::uint64_t{0} << (from & 63));
    for (;;)
    {
        auto const c = static_cast<std::uint64_t>(popcnt(w));
        if (c >= k)
        {
            std::uint64_t const pos = 64 * b + select64(w, static_cast<unsigned>(k - 1));
            return pos < limit ? pos : none;
        }
        k -= c;
        ++b;
        if (64 * b >= limit)
            return none;
        w = runends(b);
    }
}

// The true offset of block b (the stored byte saturates at 255). Scanning backwards is not allowed when
// `limited` (region locks): then false.
[[gnu::always_inline]] inline bool quotient_filter::true_offset(std::uint64_t const b, bool const limited, std::uint64_t & out) const noexcept
{
    std::uint64_t const o = block(b)[0];
    if (o < offset_saturated)
    {
        out = o;
        return true;
    }
    if (limited)
        return false;
    std::uint64_t b0 = b;
    while (b0 > 0 && block(b0)[0] == offset_saturated)
        --b0;
    std::uint64_t const o0 = (b0 == 0) ? 0 : block(b0)[0];
    std::uint64_t d = 0;
    for (std::uint64_t t = b0; t < b; ++t)
        d += static_cast<std::uint64_t>(popcnt(occupieds(t)));
    std::uint64_t const span = 64 * (b - b0);
    if (d == 0)
    {
        out = o0 > span ? o0 - span : 0;
        return true;
    }
    std::uint64_t const re = select_runend(64 * b0 + o0, d, phys_slots_);
    if (re == none)
        out = offset_saturated; // corrupted data: any bounded value keeps reads in range
    else
        out = re + 1 > 64 * b ? re + 1 - 64 * b : 0;
    return true;
}

// End of the run of the last occupied quotient <= j; a value v with v + 1 <= j (possibly none) if no run
// reaches j.
[[gnu::always_inline]] inline int quotient_filter::run_end_upto(std::uint64_t const j, std::uint64_t const limit, bool const limited,
                                  std::uint64_t & out) const noexcept
{
    std::uint64_t const b = j >> 6;
    std::uint64_t o;
    if (!true_offset(b, limited, o))
        return rc_saturated;
    auto const d =
        static_cast<std::uint64_t>(popcnt(occupieds(b) & low_mask(static_cast<unsigned>(j & 63) + 1)));
    std::uint64_t const base = 64 * b + o;
    if (d == 0)
    {
        out = base - 1;
        return rc_ok;
    }
    out = select_runend(base, d, limit);
    return out == none ? rc_beyond : rc_ok;
}

// First empty slot at or after j (below limit). In block b with base = 64b + offset, slots below base are
// covered by earlier quotients' runs; slot j >= base is used iff some run with home in [64b, j] has not
// ended in [base, j) (runs are placed in order, contiguously): the open runs end at the next runends.
int quotient_filter::first_empty(std::uint64_t j, std::uint64_t const limit, bool const limited,
                                 std::uint64_t & out) const noexcept
{
    for (;;)
    {
        if (j >= limit)
            return rc_beyond;
        std::uint64_t const b = j >> 6;
        std::uint8_t const * const blk = block(b);
        std::uint64_t o = blk[0];
        if (o == offset_saturated && !true_offset(b, limited, o))
            return rc_saturated;
        std::uint64_t const base = 64 * b + o;
        if (j < base)
        {
            j = base;
            continue;
        }
        unsigned i = static_cast<unsigned>(j & 63);
        std::uint64_t const occw = load64(blk + 1);
        std::uint64_t const rew = load64(blk + 9);
        unsigned open = popcnt(occw & low_mask(i + 1)) - popcnt(rew & low_mask(i) & ~low_mask(static_cast<unsigned>(o)));
        // Inside this block: the open runs end at the next `open` runends; the runs open just after are
        // exactly those whose home lies in between.
        while (open > 0)
        {
            std::uint64_t const w = rew & ~low_mask(i);
            unsigned const c = popcnt(w);
            if (c < open)
            {
                std::uint64_t const e = select_runend(64 * (b + 1), open - c, limit);
                if (e == none)
                    return rc_beyond;
                j = e + 1;
                break;
            }
            unsigned const e = select64(w, open - 1);
            if (e == 63)
            {
                j = 64 * (b + 1);
                break;
            }
            open = popcnt(occw & low_mask(e + 2) & ~low_mask(i + 1));
            i = e + 1;
        }
        if (open == 0)
        {
            out = 64 * b + i;
            return out < limit ? rc_ok : rc_beyond;
        }
    }
}

// Run of quotient h: li.occupied, li.start (run start, or where a new run of h would start), li.end.
[[gnu::always_inline]] inline int quotient_filter::locate(std::uint64_t const h, std::uint64_t const limit, bool const limited,
                            locate_info & li) const noexcept
{
    std::uint64_t const b = h >> 6;
    unsigned const i = static_cast<unsigned>(h & 63);
    std::uint8_t const * const blk = block(b);
    std::uint64_t o = blk[0];
    if (o == offset_saturated && !true_offset(b, limited, o))
        return rc_saturated;
    std::uint64_t const occw = load64(blk + 1);
    li.occupied = ((occw >> i) & 1) != 0;
    unsigned const d = popcnt(occw & low_mask(i));
    // Fast path: the runends needed are in this block's word.
    if (o < 64)
    {
        std::uint64_t const w = load64(blk + 9) & (~std::uint64_t{0} << o);
        unsigned const need = li.occupied ? d + 1 : d;
        if (popcnt(w) >= need)
        {
            std::uint64_t const sel = 64 * b + select64(w, d - (d != 0));
            std::uint64_t const prev = pick(d == 0, 64 * b + o - 1, sel);
            li.start = std::max(h, prev + 1);
            if (li.occupied)
                li.end = 64 * b + select64(w, d);
            return (li.occupied ? li.end : li.start) < limit ? rc_ok : rc_beyond;
        }
    }
    std::uint64_t const base = 64 * b + o;
    std::uint64_t prev;
    if (d == 0)
        prev = base - 1;
    else
    {
        prev = select_runend(base, d, limit);
        if (prev == none)
            return rc_beyond;
    }
    li.start = std::max(h, prev + 1);
    if (li.occupied)
    {
        li.end = select_runend(li.start, 1, limit);
        if (li.end == none)
            return rc_beyond;
    }
    return rc_ok;
}

[[gnu::always_inline]] inline void quotient_filter::decode_group(std::uint64_t const pos, std::uint64_t const end, std::uint64_t & value,
                                   std::uint64_t & count, std::uint64_t & len) const noexcept
{
    std::uint64_t const x = get_slot(pos);
    value = x;
    if (pos >= end)
    {
        count = 1;
        len = 1;
        return;
    }
    std::uint64_t const y = get_slot(pos + 1);
    std::uint64_t const base = rmask_; // digits in base 2^r - 1
    if (x == 0)
    {
        if (y != 0)
        {
            count = 1;
            len = 1;
            return;
        }
        std::uint64_t v = 0;
        std::uint64_t k = pos + 2;
        for (; k <= end; ++k)
        {
            std::uint64_t const t = get_slot(k);
            if (t == 0)
                break;
            v = mul_add_sat(v, base, t - 1);
        }
        if (k > end)
            k = end; // corrupted: stay inside the run
        count = sat_add(v, 2);
        len = k - pos + 1;
        return;
    }
    if (y == x)
    {
        count = 2;
        len = 2;
        return;
    }
    if (y > x)
    {
        count = 1;
        len = 1;
        return;
    }
    std::uint64_t v = 0;
    std::uint64_t k = pos + 1;
    for (; k <= end; ++k)
    {
        std::uint64_t const t = get_slot(k);
        if (t == x)
            break;
        v = mul_add_sat(v, base, t < x ? t : t - 1);
    }
    if (k > end)
        k = end;
    count = sat_add(v, 3);
    len = k - pos + 1;
}

unsigned quotient_filter::encode(std::uint64_t const x, std::uint64_t const c, std::uint64_t * const out) const noexcept
{
    if (c <= 1)
    {
        out[0] = x;
        return 1;
    }
    std::uint64_t const base = rmask_;
    std::uint64_t digits[max_group_slots];
    unsigned nd = 0;
    if (x == 0)
    {
        for (std::uint64_t v = c - 2; v > 0; v /= base)
            digits[nd++] = v % base + 1;
        unsigned n = 0;
        out[n++] = 0;
        out[n++] = 0;
        while (nd > 0)
            out[n++] = digits[--nd];
        out[n++] = 0;
        return n;
    }
    if (c == 2)
    {
        out[0] = x;
        out[1] = x;
        return 2;
    }
    std::uint64_t v = c - 3;
    do
    {
        std::uint64_t const t = v % base;
        digits[nd++] = t < x ? t : t + 1;
        v /= base;
    } while (v > 0);
    unsigned n = 0;
    out[n++] = x;
    if (digits[nd - 1] >= x)
        out[n++] = 0;
    while (nd > 0)
        out[n++] = digits[--nd];
    out[n++] = x;
    return n;
}

std::uint64_t quotient_filter::encoded_length(std::uint64_t const x, std::uint64_t const c) const noexcept
{
    std::uint64_t buf[max_group_slots];
    return encode(x, c, buf);
}

bool quotient_filter::find_group(locate_info const & li, std::uint64_t const x, group_info & g) const noexcept
{
    // Short run inside one block without counters (strictly increasing remainders): position by comparing
    // all fields at once.
    std::uint64_t const len = li.end + 1 - li.start;
    if (len <= swar_fields_ && (li.start & 63) + len <= 64)
    {
        auto const n = static_cast<unsigned>(len);
        std::uint64_t const v = get_chunk(li.start, n);
        std::uint64_t const fields = low_mask(n * r_);
        std::uint64_t const nxt = v >> r_;
        std::uint64_t const diff = (v | swar_high_) - (nxt & ~swar_high_);
        std::uint64_t const lt = ((~v & nxt) | (~(v ^ nxt) & ~diff)) & swar_high_;
        if ((~lt & swar_high_ & low_mask((n - 1) * r_)) == 0)
        {
            std::uint64_t const xs = (x * swar_ones_) & fields;
            std::uint64_t const t = v ^ xs;
            std::uint64_t const zero = ((t | ~fields) - (swar_ones_ & fields)) & ~t & swar_high_ & fields;
            if (zero != 0)
            {
                g.found = true;
                g.pos = li.start + static_cast<unsigned>(std::countr_zero(zero)) / r_;
                g.len = 1;
                g.count = 1;
                g.last = g.pos == li.end;
                return true;
            }
            // Fields below x: v[f] < x field-wise.
            std::uint64_t const d2 = (v | swar_high_) - (xs & ~swar_high_);
            std::uint64_t const below = ((~v & xs) | (~(v ^ xs) & ~d2)) & swar_high_ & fields;
            g.found = false;
            g.pos = li.start + popcnt(below);
            g.last = false;
            return false;
        }
    }
    std::uint64_t pos = li.start;
    while (pos <= li.end)
    {
        std::uint64_t v, c, len;
        decode_group(pos, li.end, v, c, len);
        if (v == x)
        {
            g.found = true;
            g.pos = pos;
            g.len = len;
            g.count = c;
            g.last = pos + len - 1 >= li.end;
            return true;
        }
        if (v > x)
            break;
        pos += len;
    }
    g.found = false;
    g.pos = pos > li.end ? li.end + 1 : pos;
    g.last = false;
    return false;
}

// Recompute the offsets of blocks [b_from, b_to] from the true offset of block b_from - 1.
void quotient_filter::update_offsets(std::uint64_t const b_from, std::uint64_t const b_to) noexcept
{
    if (b_from > b_to || b_from == 0)
        return;
    std::uint64_t o;
    if (!true_offset(b_from - 1, false, o))
        o = 0;
    for (std::uint64_t b = b_from; b <= b_to; ++b)
    {
        auto const d = static_cast<std::uint64_t>(popcnt(occupieds(b - 1)));
        if (d == 0)
            o = o > 64 ? o - 64 : 0;
        else
        {
            std::uint64_t const re = select_runend(64 * (b - 1) + o, d, phys_slots_);
            o = (re != none && re + 1 > 64 * b) ? re + 1 - 64 * b : 0;
        }
        mblock(b)[0] = static_cast<std::uint8_t>(std::min(o, offset_saturated));
    }
}

// Insert m slots with values vals at position p for quotient h: a new run (new_run), an append after the
// run's last slot (append), or inside the run. Everything from p to the m-th empty slot at or after p
// shifts right. Changes nothing unless it succeeds.
int quotient_filter::insert_slots(std::uint64_t const h, std::uint64_t const p, std::uint64_t const m,
                                  std::uint64_t const * const vals, bool const new_run, bool const append,
                                  std::uint64_t const limit, bool const limited) noexcept
{
    std::uint64_t empties[max_group_slots];
    std::uint64_t j = p;
    for (std::uint64_t i = 0; i < m; ++i)
    {
        if (int const rc = first_empty(j, limit, limited, empties[i]); rc != rc_ok)
            return rc;
        j = empties[i] + 1;
    }
    std::uint64_t const e_last = empties[m - 1];
    // Fast path (most inserts): one slot, home, insertion point and empty slot in one block, and the empty
    // slot not the block's last (so no block offset changes): one runends word update, one short move.
    if (m == 1 && (p >> 6) == (h >> 6) && (e_last >> 6) == (h >> 6) && (e_last & 63) != 63)
    {
        std::uint8_t * const blk = mblock(h >> 6);
        unsigned const pi = static_cast<unsigned>(p & 63);
        unsigned const ei = static_cast<unsigned>(e_last & 63);
        if ((r_ & 7) == 0)
        {
            std::uint64_t const bpr = r_ / 8;
            small_memmove(blk + header_bytes + (pi + 1) * bpr, blk + header_bytes + pi * bpr, (ei - pi) * bpr);
        }
        else
        {
            // Remainders only (the runends word is updated below), backwards in chunks.
            std::uint64_t n = ei - pi;
            std::uint64_t se = e_last;
            std::uint64_t const cmax = 57 / r_;
            while (n > 0)
            {
                std::uint64_t const c = std::min(n, cmax);
                se -= c;
                set_chunk(se + 1, static_cast<unsigned>(c), get_chunk(se, static_cast<unsigned>(c)));
                n -= c;
            }
        }
        std::uint64_t rew = load64(blk + 9);
        std::uint64_t const below = low_mask(pi);
        std::uint64_t const moved = rew & low_mask(ei) & ~below;
        rew = (rew & below) | (moved << 1) | (rew & ~low_mask(ei + 1));
        rew |= static_cast<std::uint64_t>(new_run || append) << pi;
        rew &= ~(static_cast<std::uint64_t>(append) << ((pi - 1) & 63));
        store64(blk + 9, rew);
        set_slot(p, vals[0]);
        if (new_run)
            set_occupied(h, true);
        return rc_ok;
    }
    std::uint64_t b_to = (e_last + 1) >> 6;
    if (b_to >= nblocks_)
        b_to = nblocks_ - 1;
    if (limited && (b_to + 1) * 64 > limit)
        return rc_beyond;
    for (std::uint64_t i = m; i-- > 0;)
    {
        std::uint64_t const seg = (i == 0) ? p : empties[i - 1] + 1;
        move_slots(seg + (m - i), seg, empties[i] - seg);
    }
    for (std::uint64_t t = 0; t < m; ++t)
    {
        set_slot(p + t, vals[t]);
        set_runend(p + t, false);
    }
    if (new_run || append)
        set_runend(p + m - 1, true);
    if (append)
        set_runend(p - 1, false);
    if (new_run)
        set_occupied(h, true);
    if ((h >> 6) + 1 <= b_to)
        update_offsets((h >> 6) + 1, b_to);
    return rc_ok;
}

// Remove slots [p, p + k) of the run of h (ending at run_end); later runs of the cluster shift left, none
// before its home slot. vanish: the run disappears; fix_runend: slot p - 1 becomes the run's end.
void quotient_filter::delete_slots(std::uint64_t const h, std::uint64_t const p, std::uint64_t const k,
                                   std::uint64_t const run_end, bool const vanish, bool const fix_runend) noexcept
{
    std::uint64_t shift = k;
    std::uint64_t write_end = p;
    std::uint64_t prev_old_end = run_end;
    std::uint64_t const src = p + k;
    if (src <= run_end)
    {
        move_slots(p, src, run_end - src + 1);
        write_end = p + (run_end - src + 1);
    }
    std::uint64_t hq = h;
    for (;;)
    {
        // Next occupied quotient in (hq, prev_old_end + 1]: only such a run is contiguous with the cluster.
        std::uint64_t const last = std::min(prev_old_end + 1, nslots_ - 1);
        if (hq >= last)
            break;
        std::uint64_t const from = hq + 1;
        std::uint64_t b = from >> 6;
        std::uint64_t w = occupieds(b) & (~std::uint64_t{0} << (from & 63));
        while (w == 0 && 64 * (b + 1) <= last)
        {
            ++b;
            w = occupieds(b);
        }
        if (w == 0)
            break;
        std::uint64_t const next = 64 * b + static_cast<std::uint64_t>(std::countr_zero(w));
        if (next > last)
            break;
        hq = next;
        std::uint64_t const old_start = prev_old_end + 1;
        std::uint64_t const new_start = std::max(hq, old_start - shift);
        std::uint64_t const s2 = old_start - new_start;
        if (s2 == 0)
            break;
        std::uint64_t const old_end = select_runend(old_start, 1, phys_slots_);
        if (old_end == none)
            break;
        clear_slots(write_end, new_start);
        move_slots(new_start, old_start, old_end - old_start + 1);
        write_end = new_start + (old_end - old_start + 1);
        prev_old_end = old_end;
        shift = s2;
    }
    clear_slots(write_end, prev_old_end + 1);
    if (fix_runend)
        set_runend(p - 1, true);
    if (vanish)
        set_occupied(h, false);
    update_offsets((h >> 6) + 1, std::min((prev_old_end + 1) >> 6, nblocks_ - 1));
}

// Insert `count` occurrences of the fingerprint (h, x). load_limit: maximal used slots afterwards.
int quotient_filter::insert_fp(std::uint64_t const h, std::uint64_t const x, std::uint64_t const count,
                               std::uint64_t const limit, bool const limited, std::uint64_t const load_limit,
                               std::int64_t & used_delta, std::uint64_t & new_distinct) noexcept
{
    locate_info li;
    if (int const rc = locate(h, limit, limited, li); rc != rc_ok)
        return rc;
    std::uint64_t enc[max_group_slots];
    if (li.occupied)
    {
        group_info g;
        if (find_group(li, x, g))
        {
            std::uint64_t const c2 = sat_add(g.count, count);
            unsigned const n = encode(x, c2, enc);
            if (n > g.len)
            {
                std::uint64_t const m = n - g.len;
                if (used_ + m > load_limit)
                    return rc_overload;
                int const rc = insert_slots(h, g.pos + g.len, m, enc + g.len, false, g.last, limit, limited);
                if (rc != rc_ok)
                    return rc;
            }
            for (std::uint64_t t = 0; t < std::min<std::uint64_t>(n, g.len); ++t)
                set_slot(g.pos + t, enc[t]);
            used_delta = static_cast<std::int64_t>(n) - static_cast<std::int64_t>(g.len);
            new_distinct = 0;
            return rc_ok;
        }
        unsigned const n = encode(x, count, enc);
        if (used_ + n > load_limit)
            return rc_overload;
        int const rc = insert_slots(h, g.pos, n, enc, false, g.pos == li.end + 1, limit, limited);
        if (rc != rc_ok)
            return rc;
        used_delta = n;
        new_distinct = 1;
        return rc_ok;
    }
    unsigned const n = encode(x, count, enc);
    if (used_ + n > load_limit)
        return rc_overload;
    int const rc = insert_slots(h, li.start, n, enc, true, false, limit, limited);
    if (rc != rc_ok)
        return rc;
    used_delta = n;
    new_distinct = 1;
    return rc_ok;
}

// The run of quotient h (false if h is not occupied), for queries.
[[gnu::always_inline]] inline bool quotient_filter::find_run(std::uint64_t const h, std::uint64_t & start,
                                                             std::uint64_t & end) const noexcept
{
    std::uint64_t const b = h >> 6;
    unsigned const i = static_cast<unsigned>(h & 63);
    std::uint8_t const * const blk = block(b);
    std::uint64_t const occw = load64(blk + 1);
    if (((occw >> i) & 1) == 0)
        return false;
    std::uint64_t o = blk[0];
    if (o == offset_saturated)
        (void)true_offset(b, false, o);
    unsigned const d = popcnt(occw & low_mask(i));
    // Fast path: the run ends in this block's runends word.
    if (o < 64)
    {
        std::uint64_t const w = load64(blk + 9) & (~std::uint64_t{0} << o);
        if (popcnt(w) > d)
        {
            std::uint64_t const sel = 64 * b + select64(w, d - (d != 0));
            std::uint64_t const prev = pick(d == 0, 64 * b + o - 1, sel);
            start = std::max(h, prev + 1);
            end = 64 * b + select64(w, d);
            return true;
        }
    }
    std::uint64_t const base = 64 * b + o;
    std::uint64_t const prev = d == 0 ? base - 1 : select_runend(base, d, phys_slots_);
    if (prev == none && d != 0)
        return false;
    start = std::max(h, prev + 1);
    end = select_runend(start, 1, phys_slots_);
    return end != none;
}

// find_run() for the batch pipeline: no branch on the data in the common case (the run's end in this
// block's runends word); an unoccupied h gives the empty range (h + 1, h).
[[gnu::always_inline]] inline void quotient_filter::find_run_branchless(std::uint64_t const h, std::uint64_t & start,
                                                                        std::uint64_t & end) const noexcept
{
    std::uint64_t const b = h >> 6;
    unsigned const i = static_cast<unsigned>(h & 63);
    std::uint8_t const * const blk = block(b);
    std::uint64_t const occw = load64(blk + 1);
    std::uint64_t const o = blk[0];
    bool const occupied = ((occw >> i) & 1) != 0;
    unsigned const d = popcnt(occw & low_mask(i));
    std::uint64_t const w = load64(blk + 9) & (~std::uint64_t{0} << (o & 63));
    if (o < 64 && popcnt(w) > d) [[likely]]
    {
        std::uint64_t const sel = 64 * b + select64(w, d - (d != 0));
        std::uint64_t const prev = pick(d == 0, 64 * b + o - 1, sel);
        std::uint64_t const s = std::max(h, prev + 1);
        std::uint64_t const e = 64 * b + select64(w, d);
        start = pick(occupied, s, h + 1);
        end = pick(occupied, e, h);
        return;
    }
    if (!find_run(h, start, end))
    {
        start = h + 1;
        end = h;
    }
}

// count_fp's scan for a located run. Runs of at most swar_fields_ slots inside one block (nearly all of
// them below 95% load) are read as one integer and compared field-wise: if the remainders strictly
// increase the run holds no counter and the answer is whether x is among them; otherwise (or for longer
// runs) the general decoder runs.
[[gnu::always_inline]] inline std::uint64_t quotient_filter::count_in_run(std::uint64_t const start,
                                                                          std::uint64_t const end,
                                                                          std::uint64_t const x) const noexcept
{
    std::uint64_t const len = end + 1 - start; // 0 for the empty range
    if (len <= swar_fields_ && (start & 63) + len <= 64) [[likely]]
    {
        auto const n = static_cast<unsigned>(len);
        std::uint64_t const v = get_chunk(start, n);
        std::uint64_t const fields = low_mask(n * r_);
        // Field-wise v[f] < v[f + 1] for f < n - 1 (no borrow crosses a field: top bits are split off).
        std::uint64_t const nxt = v >> r_;
        std::uint64_t const diff = (v | swar_high_) - (nxt & ~swar_high_);
        std::uint64_t const lt = ((~v & nxt) | (~(v ^ nxt) & ~diff)) & swar_high_;
        bool const increasing = (~lt & swar_high_ & low_mask((n - (n != 0)) * r_)) == 0;
        // Some field equal to x (exact as an existence test).
        std::uint64_t const t = (v ^ (x * swar_ones_)) & fields;
        std::uint64_t const zero = ((t | ~fields) - (swar_ones_ & fields)) & ~t & swar_high_ & fields;
        if (increasing) [[likely]]
            return zero != 0 ? 1 : 0;
    }
    return scan_run(start, end, x);
}

// Count of remainder x in the run [start, end].
[[gnu::always_inline]] inline std::uint64_t quotient_filter::scan_run(std::uint64_t const start, std::uint64_t const end,
                                                                      std::uint64_t const x) const noexcept
{
    for (std::uint64_t pos = start; pos <= end;)
    {
        std::uint64_t const v = get_slot(pos);
        if (v > x)
            return 0;
        if (v == x && pos == end)
            return 1;
        std::uint64_t val, c, len;
        decode_group(pos, end, val, c, len);
        if (val == x)
            return c;
        pos += len;
    }
    return 0;
}

std::uint64_t quotient_filter::count_fp(std::uint64_t const h, std::uint64_t const x) const noexcept
{
    std::uint64_t start, end;
    if (!find_run(h, start, end))
        return 0;
    return count_in_run(start, end, x);
}

// ---------------------------------------------------------------------------------------------------------
// Public single-key operations.

bool quotient_filter::can_grow() const noexcept
{
    return r_ > min_remainder_bits && q_ < max_quotient_bits;
}

bool quotient_filter::try_grow() noexcept
{
    try
    {
        return resize(q_ + 1);
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

insert_status quotient_filter::insert_fingerprint(std::uint64_t const fp, std::uint64_t const count) noexcept
{
    for (;;)
    {
        bool const growable = auto_grow_ && can_grow();
        std::uint64_t const load_limit = growable ? grow_at_ : nslots_;
        std::int64_t du = 0;
        std::uint64_t nd = 0;
        int const rc = insert_fp(fp >> r_, fp & rmask_, count, phys_slots_, false, load_limit, du, nd);
        if (rc == rc_ok)
        {
            used_ = static_cast<std::uint64_t>(static_cast<std::int64_t>(used_) + du);
            distinct_ += nd;
            total_ = sat_add(total_, count);
            return insert_status::ok;
        }
        if (growable && try_grow())
            continue;
        return insert_status::full;
    }
}

insert_status quotient_filter::insert(std::uint64_t const key, std::uint64_t const count) noexcept
{
    if (table_ == nullptr)
        return insert_status::full;
    if (count == 0)
        return insert_status::ok;
    std::uint64_t const fp = fingerprint(key);
    prefetch(fp, true); // header and home slot lines in parallel rather than one after the other
    fold_concurrent();
    return insert_fingerprint(fp, count);
}

std::uint64_t quotient_filter::count(std::uint64_t const key) const noexcept
{
    std::uint64_t const fp = fingerprint(key);
    prefetch(fp, false); // header and home slot lines in parallel rather than one after the other
    return count_fp(fp >> r_, fp & rmask_);
}

bool quotient_filter::remove(std::uint64_t const key, std::uint64_t const count) noexcept
{
    if (table_ == nullptr)
        return false;
    fold_concurrent();
    std::uint64_t const fp = fingerprint(key);
    std::uint64_t const h = fp >> r_;
    std::uint64_t const x = fp & rmask_;
    locate_info li;
    if (locate(h, phys_slots_, false, li) != rc_ok || !li.occupied)
        return false;
    group_info g;
    if (!find_group(li, x, g))
        return false;
    if (count == 0)
        return true;
    std::uint64_t const c2 = g.count > count ? g.count - count : 0;
    std::uint64_t enc[max_group_slots];
    unsigned const n = c2 == 0 ? 0 : encode(x, c2, enc);
    for (unsigned t = 0; t < n; ++t)
        set_slot(g.pos + t, enc[t]);
    if (n < g.len)
    {
        bool const vanish = n == 0 && g.pos == li.start && g.last;
        delete_slots(h, g.pos + n, g.len - n, li.end, vanish, g.last && !vanish);
    }
    used_ -= g.len - n;
    if (c2 == 0)
        --distinct_;
    std::uint64_t const removed = std::min(count, g.count);
    total_ = total_ >= removed ? total_ - removed : 0;
    return true;
}

void quotient_filter::prefetch(std::uint64_t const fp, bool const write) const noexcept
{
    std::uint64_t const h = fp >> r_;
    std::uint8_t const * const blk = block(h >> 6);
    std::uint8_t const * const slot = blk + header_bytes + ((h & 63) * r_) / 8;
    if (write)
    {
        __builtin_prefetch(blk, 1, 3);
        __builtin_prefetch(slot, 1, 3);
    }
    else
    {
        __builtin_prefetch(blk, 0, 3);
        __builtin_prefetch(slot, 0, 3);
    }
}

// The same three-stage pipeline as count_batch: header prefetch, then (header cached) a prefetch of the
// lines where the insertion will happen (run start, and the next block's header when the cluster may cross
// into it), then the insert itself. Earlier inserts of the batch may move things in between: the prefetches
// are only hints, the insert recomputes everything.
insert_status quotient_filter::insert_batch(std::span<std::uint64_t const> const keys) noexcept
{
    if (keys.empty())
        return insert_status::ok;
    if (table_ == nullptr)
        return insert_status::full;
    fold_concurrent();
    constexpr std::size_t gap = batch_stage_gap;
    constexpr std::size_t ring = 4 * gap;
    std::uint64_t fps[ring];
    std::size_t const n = keys.size();
    for (std::size_t i = 0; i < n + 2 * gap; ++i)
    {
        if (i < n)
        {
            std::uint64_t const fp = fingerprint(keys[i]);
            fps[i % ring] = fp;
            std::uint8_t const * const blk = block(fp >> r_ >> 6);
            __builtin_prefetch(blk, 1, 3);
            __builtin_prefetch(blk + header_bytes - 1, 1, 3);
        }
        if (i >= gap && i - gap < n)
        {
            // Where the insertion will happen (about): the run of h, or h itself if it has none yet.
            std::uint64_t const h = fps[(i - gap) % ring] >> r_;
            std::uint64_t start, end;
            find_run_branchless(h, start, end);
            std::uint64_t const pos = std::min(start, end);
            std::uint8_t const * const blk = block(pos >> 6);
            std::uint8_t const * const slot = blk + header_bytes + ((pos & 63) * r_) / 8;
            // The insertion point, the next line (the shift) and the next block's header (clusters at high
            // load often cross into it; the table has overflow blocks, the last block prefetches itself).
            __builtin_prefetch(slot, 1, 3);
            __builtin_prefetch(slot + 64, 1, 3);
            bool const has_next = (pos >> 6) + 1 < nblocks_;
            __builtin_prefetch(blk + pick(has_next, block_bytes_, 0), 1, 3);
        }
        if (i >= 2 * gap)
        {
            std::size_t const c = i - 2 * gap;
            if (insert_fingerprint(fps[c % ring], 1) != insert_status::ok)
                return insert_status::full;
        }
    }
    return insert_status::ok;
}

// Three-stage software pipeline: stage A prefetches the block header of key i, stage B (stage_gap keys
// later, header now cached) locates the run and prefetches its slots, stage C (stage_gap keys later)
// scans the run. Every cache line a query touches is requested about 2 * stage_gap queries ahead, so the
// misses of consecutive queries overlap instead of adding up.
void quotient_filter::count_batch(std::span<std::uint64_t const> const keys, std::uint64_t * const out) const noexcept
{
    constexpr std::size_t gap = batch_stage_gap;
    constexpr std::size_t ring = 4 * gap; // > 2 * gap: stage A must not overwrite what stage C reads
    std::uint64_t fps[ring];
    std::uint64_t starts[ring];
    std::uint64_t ends[ring];
    std::size_t const n = keys.size();
    std::uint8_t const * const bytes = reinterpret_cast<std::uint8_t const *>(ctable_);
    for (std::size_t i = 0; i < n + 2 * gap; ++i)
    {
        if (i < n)
        {
            std::uint64_t const fp = fingerprint(keys[i]);
            fps[i % ring] = fp;
            std::uint8_t const * const blk = bytes + (fp >> r_ >> 6) * block_bytes_;
            __builtin_prefetch(blk, 0, 3);
            __builtin_prefetch(blk + header_bytes - 1, 0, 3);
        }
        if (i >= gap && i - gap < n)
        {
            std::size_t const k = (i - gap) % ring;
            std::uint64_t const h = fps[k] >> r_;
            std::uint64_t start, end;
            find_run_branchless(h, start, end);
            starts[k] = start;
            ends[k] = end;
            std::uint64_t const p = std::min(start, end);
            __builtin_prefetch(bytes + (p >> 6) * block_bytes_ + header_bytes + ((p & 63) * r_) / 8, 0, 3);
        }
        if (i >= 2 * gap)
        {
            std::size_t const c = i - 2 * gap;
            std::size_t const k = c % ring;
            std::uint64_t const start = starts[k];
            std::uint64_t const end = ends[k];
            std::uint64_t const x = fps[k] & rmask_;
            out[c] = count_in_run(start, end, x);
        }
    }
}

insert_status quotient_filter::insert_concurrent(std::uint64_t const key, std::uint64_t const count) noexcept
{
    if (table_ == nullptr)
        return insert_status::full;
    if (count == 0)
        return insert_status::ok;
    concurrency & cs = *conc_;
    std::uint64_t const fp = fingerprint(key);
    std::uint64_t const h = fp >> r_;
    std::uint64_t const x = fp & rmask_;
    std::size_t const first = static_cast<std::size_t>(h >> region_slot_bits);
    std::size_t last = first;
    cs.lock(first);
    std::int64_t du = 0;
    std::uint64_t nd = 0;
    int rc;
    for (;;)
    {
        std::uint64_t const limit = std::min(phys_slots_, std::uint64_t{last + 1} << region_slot_bits);
        rc = insert_fp(h, x, count, limit, true, none, du, nd);
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
        rc = insert_fp(h, x, count, phys_slots_, false, none, du, nd);
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

bool quotient_filter::cursor::next() noexcept
{
    quotient_filter const & f = *f_;
    for (;;)
    {
        if (in_run_ && pos_ <= run_end_)
        {
            std::uint64_t v, c, len;
            f.decode_group(pos_, run_end_, v, c, len);
            fp_ = (quotient_ << f.r_) | v;
            count_ = c;
            pos_ += len;
            return true;
        }
        in_run_ = false;
        std::uint64_t h = next_quotient_;
        if (h >= f.nslots_)
            return false;
        std::uint64_t b = h >> 6;
        std::uint64_t w = f.occupieds(b) & (~std::uint64_t{0} << (h & 63));
        while (w == 0)
        {
            ++b;
            if (64 * b >= f.nslots_)
                return false;
            w = f.occupieds(b);
        }
        h = 64 * b + static_cast<std::uint64_t>(std::countr_zero(w));
        if (h >= f.nslots_)
            return false;
        std::uint64_t start = h;
        if (have_prev_ && prev_end_ + 1 > h)
            start = prev_end_ + 1;
        std::uint64_t const end = f.select_runend(start, 1, f.phys_slots_);
        if (end == none)
            return false;
        quotient_ = h;
        pos_ = start;
        run_end_ = end;
        prev_end_ = end;
        have_prev_ = true;
        next_quotient_ = h + 1;
        in_run_ = true;
    }
}

// Builds a filter from fingerprints appended in strictly increasing order (resize, merge).
struct qf_appender
{
    quotient_filter & f;
    std::uint64_t pos{0};
    std::uint64_t last_h{none};

    bool append(std::uint64_t const fp, std::uint64_t const count) noexcept
    {
        std::uint64_t const h = fp >> f.r_;
        std::uint64_t const x = fp & f.rmask_;
        std::uint64_t enc[max_group_slots];
        unsigned const n = f.encode(x, count, enc);
        std::uint64_t start;
        bool const same = h == last_h;
        start = same ? pos : std::max(h, pos);
        if (start + n > f.phys_slots_)
            return false;
        if (same)
            f.set_runend(pos - 1, false);
        else
        {
            f.set_occupied(h, true);
            last_h = h;
        }
        for (unsigned t = 0; t < n; ++t)
            f.set_slot(start + t, enc[t]);
        f.set_runend(start + n - 1, true);
        pos = start + n;
        f.used_ += n;
        f.distinct_ += 1;
        f.total_ = sat_add(f.total_, count);
        return true;
    }
    void finish() noexcept { f.update_offsets(1, f.nblocks_ - 1); }
};

bool quotient_filter::resize(unsigned const new_q)
{
    if (table_ == nullptr)
        return false;
    if (new_q < min_quotient_bits || new_q > max_quotient_bits || new_q + min_remainder_bits > p_ ||
        p_ - new_q > max_remainder_bits)
        return false;
    fold_concurrent();
    if (new_q == q_)
        return true;
    quotient_filter nf;
    nf.set_key(key_bits_, p_, max_load_, auto_grow_);
    nf.set_geometry(new_q, p_ - new_q);
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
    if (q_ <= min_quotient_bits)
        return false;
    if (static_cast<double>(used_slots()) > max_load_ * static_cast<double>(nslots_ / 2))
        return false;
    return resize(q_ - 1);
}

namespace
{

// K-way merge of cursors in fingerprint order; fn(fingerprint, summed count).
template <typename Fn>
void merge_walk(std::span<quotient_filter const * const> const inputs, Fn && fn)
{
    std::vector<quotient_filter::cursor> cs;
    cs.reserve(inputs.size());
    for (auto const * f : inputs)
        cs.emplace_back(*f);
    if (cs.size() <= 8)
    {
        std::vector<std::size_t> active;
        for (std::size_t i = 0; i < cs.size(); ++i)
            if (cs[i].next())
                active.push_back(i);
        while (!active.empty())
        {
            std::uint64_t fp = none;
            for (std::size_t const i : active)
                fp = std::min(fp, cs[i].fingerprint());
            std::uint64_t c = 0;
            for (std::size_t a = 0; a < active.size();)
            {
                auto & cur = cs[active[a]];
                if (cur.fingerprint() == fp)
                {
                    c = sat_add(c, cur.count());
                    if (!cur.next())
                    {
                        active[a] = active.back();
                        active.pop_back();
                        continue;
                    }
                }
                ++a;
            }
            fn(fp, c);
        }
        return;
    }
    // Min-heap of (fingerprint, cursor index).
    using item = std::pair<std::uint64_t, std::size_t>;
    std::vector<item> heap;
    auto greater = [](item const & a, item const & b) { return a > b; };
    for (std::size_t i = 0; i < cs.size(); ++i)
        if (cs[i].next())
            heap.emplace_back(cs[i].fingerprint(), i);
    std::make_heap(heap.begin(), heap.end(), greater);
    while (!heap.empty())
    {
        std::uint64_t const fp = heap.front().first;
        std::uint64_t c = 0;
        while (!heap.empty() && heap.front().first == fp)
        {
            std::pop_heap(heap.begin(), heap.end(), greater);
            std::size_t const i = heap.back().second;
            heap.pop_back();
            c = sat_add(c, cs[i].count());
            if (cs[i].next())
            {
                heap.emplace_back(cs[i].fingerprint(), i);
                std::push_heap(heap.begin(), heap.end(), greater);
            }
        }
        fn(fp, c);
    }
}

} // namespace

quotient_filter quotient_filter::merge(std::span<quotient_filter const * const> const inputs)
{
    if (inputs.empty())
        throw usage_error{"quotient filter merge: no input"};
    quotient_filter const & first = *inputs[0];
    unsigned r_ref = first.r_;
    for (std::size_t i = 1; i < inputs.size(); ++i)
    {
        quotient_filter const & f = *inputs[i];
        if (f.key_bits_ != first.key_bits_ || f.p_ != first.p_)
            throw incompatible_error{"cannot merge quotient filters with different key or fingerprint widths (input 1: " +
                                     std::to_string(first.key_bits_) + "-bit keys, " + std::to_string(first.p_) +
                                     "-bit fingerprints; input " + std::to_string(i + 1) + ": " +
                                     std::to_string(f.key_bits_) + "-bit keys, " + std::to_string(f.p_) +
                                     "-bit fingerprints); build them with the same --fpr and --expected"};
        r_ref = std::min(r_ref, f.r_);
    }
    // Pass 1: slots the union needs (counter lengths measured with the smallest remainder width).
    std::uint64_t need = 0;
    {
        std::uint64_t const mask = low_mask(r_ref);
        quotient_filter const & ref = *std::min_element(inputs.begin(), inputs.end(), [](auto const * a, auto const * b) {
            return a->r_ < b->r_;
        })[0];
        merge_walk(inputs, [&](std::uint64_t const fp, std::uint64_t const c) {
            need += c == 1 ? 1 : ref.encoded_length(fp & mask, c);
        });
    }
    unsigned const p = first.p_;
    unsigned q_lo = std::min(default_min_quotient_bits, p - min_remainder_bits);
    q_lo = std::max({q_lo, min_quotient_bits, p > max_remainder_bits ? p - max_remainder_bits : 0u});
    unsigned q = q_lo;
    while (q < p - min_remainder_bits && q < max_quotient_bits &&
           std::ldexp(first.max_load_, static_cast<int>(q)) < static_cast<double>(need))
        ++q;
    // Pass 2: append into the new table (one more doubling if the counters turn out longer).
    for (;; ++q)
    {
        if (q > p - min_remainder_bits || q > max_quotient_bits)
            throw full_error{"quotient filter merge: the union does not fit in a " + std::to_string(p) +
                             "-bit fingerprint filter"};
        quotient_filter out;
        out.set_key(first.key_bits_, p, first.max_load_, first.auto_grow_);
        out.set_geometry(q, p - q);
        out.allocate_table();
        qf_appender app{out};
        bool ok = true;
        merge_walk(inputs, [&](std::uint64_t const fp, std::uint64_t const c) {
            if (ok)
                ok = app.append(fp, c);
        });
        if (!ok || out.used_ > out.nslots_)
            continue;
        app.finish();
        return out;
    }
}

// ---------------------------------------------------------------------------------------------------------
// Parameters and statistics.

std::uint64_t quotient_filter::used_slots() const noexcept
{
    auto v = static_cast<std::int64_t>(used_);
    if (conc_ && conc_->dirty.load(std::memory_order_relaxed))
        for (std::size_t i = 0; i < conc_->n; ++i)
            v += conc_->regions[i].used;
    return static_cast<std::uint64_t>(v);
}

std::uint64_t quotient_filter::distinct() const noexcept
{
    auto v = static_cast<std::int64_t>(distinct_);
    if (conc_ && conc_->dirty.load(std::memory_order_relaxed))
        for (std::size_t i = 0; i < conc_->n; ++i)
            v += conc_->regions[i].distinct;
    return static_cast<std::uint64_t>(v);
}

std::uint64_t quotient_filter::total_count() const noexcept
{
    std::uint64_t v = total_;
    if (conc_ && conc_->dirty.load(std::memory_order_relaxed))
        for (std::size_t i = 0; i < conc_->n; ++i)
            v = sat_add(v, conc_->regions[i].total);
    return v;
}

std::vector<std::uint64_t> quotient_filter::params() const
{
    std::uint64_t const flags = (auto_grow_ ? 1u : 0u) | (exact() ? 2u : 0u);
    return {params_version,
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
    s.estimated_fpr = exact() ? 0.0 : std::min(1.0, std::ldexp(static_cast<double>(s.distinct), -static_cast<int>(p_)));
    return s;
}

} // namespace ksieve
