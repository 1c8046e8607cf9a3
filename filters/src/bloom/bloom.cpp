// The blocked and classic Bloom filters: storage, construction, view, the dispatch of the blocked
// filter's batch kernels (bloom_blocked_kernels_*.cpp), the classic filter's pipelined hashing, set
// operations, stats.
#include <ksieve/filters/bloom/bloom.hpp>
#include <ksieve/filters/support/error.hpp>

#include "../support/platform.hpp"
#include "bloom_blocked_kernels.hpp"
#include "bloom_common.hpp"
#include <ksieve/filters/support/cpu_dispatch.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <string>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
namespace ksieve
{

namespace detail
{
// What the shared members (bloom_common.hpp) need to know of this file's filter types.
template <>
inline constexpr bloom_kind<blocked_bloom_filter> bloom_kind_of<blocked_bloom_filter>{
    "blocked Bloom",
    "blocks",
    blocked_bloom_filter::block_words,
    "bits per key",
    &blocked_bloom_filter::blocks,
    "blocks",
    [](std::uint64_t const x, std::uint64_t const y) noexcept { return x | y; },
    [](std::uint64_t const x, std::uint64_t const y) noexcept { return x & y; }};
template <>
inline constexpr bloom_kind<classic_bloom_filter> bloom_kind_of<classic_bloom_filter>{
    "classic Bloom",
    "words",
    1,
    "hash functions",
    &classic_bloom_filter::bits,
    "bits",
    bloom_kind_of<blocked_bloom_filter>.unite,
    bloom_kind_of<blocked_bloom_filter>.intersect};

namespace
{

constexpr std::size_t huge_page = std::size_t{2} << 20;

} // namespace

word_storage::word_storage(std::size_t const words) : size_{words}, align_{64}
{
    if (words == 0)
        return;
    if (words > std::numeric_limits<std::size_t>::max() / 16)
        throw error{"out of memory: a filter of " + std::to_string(words) +
                    " words cannot be allocated"};
    std::size_t const bytes = words * 8;
    charge_ = memory_charge{bytes};
    // Large arrays: 2 MiB alignment so that transparent huge pages can back them (random access to
    // a filter far larger than the TLB reach otherwise pays a page walk on almost every access).
    align_ = bytes >= 2 * huge_page ? huge_page : 64;
    void * p = nullptr;
    try
    {
        p = ::operator new (bytes, std::align_val_t{align_});
    }
    catch (std::bad_alloc const &)
    {
        throw error{"out of memory: cannot allocate " + std::to_string(bytes) +
                    " bytes for a filter"};
    }
    if (align_ == huge_page)
        detail::platform::advise_huge_pages(p, bytes);
    std::memset(p, 0, bytes);
    data_ = static_cast<std::uint64_t *>(p);
}

word_storage word_storage::view(std::span<std::uint64_t const> const words) noexcept
{
    word_storage s;
    s.data_ =
        const_cast<std::uint64_t *>(words.data()); // never written through: views are read-only
    s.size_ = words.size();
    s.align_ = 0;
    return s;
}

word_storage::word_storage(word_storage && other) noexcept
    : data_{std::exchange(other.data_, nullptr)}, size_{std::exchange(other.size_, 0)},
      align_{std::exchange(other.align_, 0)}, charge_{std::move(other.charge_)}
{
}

word_storage & word_storage::operator=(word_storage && other) noexcept
{
    word_storage taken{std::move(other)}; // (its destructor frees what this held)
    std::swap(data_, taken.data_);
    std::swap(size_, taken.size_);
    std::swap(align_, taken.align_);
    std::swap(charge_, taken.charge_);
    return *this;
}

word_storage::~word_storage()
{
    release();
}

void word_storage::release() noexcept
{
    if (align_ != 0 && data_ != nullptr)
        ::operator delete (data_, std::align_val_t{align_});
    data_ = nullptr;
    size_ = 0;
    align_ = 0;
    charge_ = memory_charge{};
}

word_storage word_storage::clone() const
{
    word_storage s{size_};
    if (size_ != 0)
        std::memcpy(s.data_, data_, size_ * 8);
    return s;
}

std::uint64_t bloom_cardinality(std::uint64_t const set_bits, std::uint64_t const m,
                                unsigned const k) noexcept
{
    if (set_bits < k)
        return 0;
    if (set_bits == k)
        return 1;
    if (set_bits >= m)
        return m / k;
    double const md = static_cast<double>(m);
    double const n = -(md / k) * std::log1p(-static_cast<double>(set_bits) / md);
    return static_cast<std::uint64_t>(std::llround(n));
}

void classic_bloom_shape(std::uint64_t const n, double const eps, std::uint64_t const granule,
                         std::uint64_t & m, unsigned & k)
{
    double const ln2 = std::log(2.0);
    double const bits = -static_cast<double>(n) * std::log(eps) / (ln2 * ln2);
    if (!(bits < 0x1p62))
        throw error{"out of memory: a Bloom filter for " + std::to_string(n) +
                    " keys would be too large"};
    std::uint64_t const raw =
        std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(bits)));
    m = (raw + granule - 1) / granule * granule;
    double const ratio = static_cast<double>(m) / static_cast<double>(n);
    auto fpr = [&](unsigned const kk) { return std::pow(-std::expm1(-kk / ratio), kk); };
    double const kopt = ratio * ln2;
    unsigned const lo = std::max(1u, static_cast<unsigned>(std::floor(kopt)));
    unsigned const hi = std::max(1u, static_cast<unsigned>(std::ceil(kopt)));
    k = fpr(lo) <= fpr(hi) ? lo : hi;
}

void check_bloom_config(filter_config const & cfg, std::uint64_t const expected,
                        char const * const type_name)
{
    if (!(cfg.fpr > 0.0 && cfg.fpr < 0.5))
        throw usage_error{std::string{"--fpr "} + std::to_string(cfg.fpr) +
                          " is not possible with a " + type_name +
                          " filter: it needs 0 < EPS < 0.5" +
                          (cfg.fpr > 0.0 ? "" : " (--fpr 0, an exact filter, needs --type qf)")};
    if (expected == 0)
        throw usage_error{
            std::string{"a "} + type_name +
            " filter must be sized in advance: give --expected N (distinct k-mers) or let ksieve "
            "estimate it in a first pass over the input"};
}

} // namespace detail

namespace
{

/*! Poisson(lambda) expectation of g(i), g bounded by 1: sum outwards from the mode until the terms
 * vanish. */
template <typename g_t> double poisson_expectation(double const lambda, g_t && g) noexcept
{
    if (lambda <= 0)
        return g(0);
    double const i0 = std::floor(lambda);
    double const p0 = std::exp(-lambda + i0 * std::log(lambda) - std::lgamma(i0 + 1));
    double sum = p0 * g(i0);
    double p = p0;
    for (double i = i0 + 1;; i += 1)
    {
        p *= lambda / i;
        sum += p * g(i);
        if (p < 1e-22)
            break;
    }
    p = p0;
    for (double i = i0; i > 0; i -= 1)
    {
        p *= i / lambda;
        sum += p * g(i - 1);
        if (p < 1e-22)
            break;
    }
    return sum;
}

/*! FPR of a classic filter of b bits holding i keys with k bits each: (1 - (1 - 1/b)^{ik})^k. */
inline double classic_fpr(double const b, double const i, unsigned const k) noexcept
{
    return std::pow(-std::expm1(i * k * std::log1p(-1.0 / b)), static_cast<double>(k));
}

/*! Sets the bits of a key's double hashing s among the `bits` bits of w with set(word, mask): a
 * plain or an atomic OR. */
template <typename set_t>
[[gnu::always_inline]] inline void set_classic_bits(std::uint64_t * const w,
                                                    std::uint64_t const bits, unsigned const k,
                                                    detail::double_hash s, set_t const set) noexcept
{
    for (unsigned i = 0; i < k; ++i, s.a += s.b)
    {
        std::uint64_t const p = detail::mul_high(s.a, bits);
        set(w[p >> 6], std::uint64_t{1} << (p & 63));
    }
}

/*! set_classic_bits for every key, with prefetching. */
template <typename set_t>
inline void insert_classic_batch(std::uint64_t * const w, std::uint64_t const bits,
                                 unsigned const k, std::span<std::uint64_t const> const keys,
                                 set_t const set) noexcept
{
    detail::pipelined<detail::double_hash>(
        keys,
        [=](std::uint64_t const key) { return detail::stage_double_hash<1, 64>(key, k, bits, w); },
        [=](std::size_t, detail::double_hash const s) { set_classic_bits(w, bits, k, s, set); });
}

/*! The OR of insert_batch: mask into word. */
struct plain_or_op
{
    void operator()(std::uint64_t & word, std::uint64_t const mask) const noexcept { word |= mask; }
};

/*! The OR of the concurrent inserts: atomic_or of mask into word. */
struct atomic_or_op
{
    void operator()(std::uint64_t & word, std::uint64_t const mask) const noexcept
    {
        atomic_or(word, mask);
    }
};

} // namespace

// ---------------------------------------------------------------------------------------------------------
// blocked_bloom_filter

blocked_bloom_filter::blocked_bloom_filter(std::uint64_t const blocks, unsigned const k)
    : blocks_{blocks}, k_{k}, storage_{detail::bloom_words<blocked_bloom_filter>(blocks, k)}
{
}

blocked_bloom_filter blocked_bloom_filter::create(filter_config const & cfg,
                                                  unsigned const key_bits,
                                                  std::uint64_t const expected)
{
    detail::check_bloom_config(cfg, expected, "Bloom");
    shape const s = shape_for(detail::cap_expected(expected, key_bits), cfg.fpr);
    return blocked_bloom_filter{s.blocks, s.k};
}

double blocked_bloom_filter::predicted_fpr(std::uint64_t const n, std::uint64_t const blocks,
                                           unsigned const k) noexcept
{
    if (n == 0 || blocks == 0)
        return n == 0 ? 0.0 : 1.0;
    double const lambda = static_cast<double>(n) / static_cast<double>(blocks);
    return poisson_expectation(lambda,
                               [k](double const i) { return classic_fpr(block_bits, i, k); });
}

blocked_bloom_filter::shape blocked_bloom_filter::shape_for(std::uint64_t const n, double const eps)
{
    thread_local std::uint64_t cached_n = 0;
    thread_local double cached_eps = 0;
    thread_local shape cached{};
    if (n == cached_n && eps == cached_eps)
        return cached;

    constexpr std::uint64_t max_blocks = std::uint64_t{1} << 56;
    double const ln2 = std::log(2.0);
    double const seed_bits = -static_cast<double>(n) * std::log(eps) / (ln2 * ln2);
    std::uint64_t const guess = static_cast<std::uint64_t>(
        std::clamp(std::ceil(seed_bits / block_bits), 1.0, double(max_blocks)));
    shape best{0, 0};
    for (unsigned k = 1; k <= max_hashes; ++k)
    {
        if (best.blocks != 0 && k > best.k + 3)
            break; // past the optimum: the size only grows from here
        std::uint64_t hi = guess;
        while (predicted_fpr(n, hi, k) > eps && hi < max_blocks)
            hi = std::min(max_blocks, 2 * hi);
        if (predicted_fpr(n, hi, k) > eps)
            continue;
        std::uint64_t lo = 0; // predicted_fpr(n, lo, k) > eps, or lo == 0
        while (hi - lo > 1)
        {
            std::uint64_t const mid = lo + (hi - lo) / 2;
            if (predicted_fpr(n, mid, k) <= eps)
                hi = mid;
            else
                lo = mid;
        }
        if (best.blocks == 0 || hi < best.blocks)
            best = shape{hi, k};
    }
    if (best.blocks == 0)
        throw error{"out of memory: a blocked Bloom filter for " + std::to_string(n) +
                    " keys would be too large"};
    cached_n = n;
    cached_eps = eps;
    cached = best;
    return best;
}

blocked_bloom_filter blocked_bloom_filter::view(std::span<std::uint64_t const> const params,
                                                std::span<std::uint64_t const> const words,
                                                unsigned)
{
    unsigned const k = detail::view_hash_count<blocked_bloom_filter>(
        params,
        [](std::uint64_t const blocks)
        {
            if (blocks == 0 || blocks > (std::uint64_t{1} << 56))
                throw format_error{"blocked Bloom filter with an invalid block count " +
                                   std::to_string(blocks)};
        });
    std::uint64_t const blocks = params[1];
    if (words.size() != blocks * block_words)
        throw format_error{"blocked Bloom filter of " + std::to_string(blocks) + " blocks with " +
                           std::to_string(words.size()) + " payload words instead of " +
                           std::to_string(blocks * block_words)};
    return blocked_bloom_filter{blocks, k, detail::word_storage::view(words)};
}

// ---------------------------------------------------------------------------------------------------------
// Batch kernels of the blocked filter (bloom_blocked_kernels.inc), one copy per CPU level: the
// build's target and, on x86-64 builds whose target lacks it, x86-64-v3; detail::bloom_kernels()
// (bloom_blocked_kernels.hpp) has the active level's entries.
#define KSIEVE_BLOOM_DISPATCH(call) (detail::bloom_kernels().call)

void blocked_bloom_filter::set_bits_atomic(std::uint64_t * const block,
                                           std::uint32_t const lo) const noexcept
{
    KSIEVE_BLOOM_DISPATCH(set_bits_atomic(block, lo, k_));
}

void blocked_bloom_filter::insert_concurrent(std::uint64_t const key) noexcept
{
    std::uint64_t const h = mix64(key);
    set_bits_atomic(block_ptr(h), static_cast<std::uint32_t>(h));
}

insert_status blocked_bloom_filter::insert_batch(std::span<std::uint64_t const> const keys) noexcept
{
    KSIEVE_BLOOM_DISPATCH(insert_batch(storage_.data(), blocks_, k_, keys));
    return insert_status::ok;
}

void blocked_bloom_filter::insert_batch_concurrent(
    std::span<std::uint64_t const> const keys) noexcept
{
    KSIEVE_BLOOM_DISPATCH(insert_batch_concurrent(storage_.data(), blocks_, k_, keys));
}

void blocked_bloom_filter::count_batch(std::span<std::uint64_t const> const keys,
                                       std::uint64_t * const out) const noexcept
{
    KSIEVE_BLOOM_DISPATCH(count_batch(storage_.data(), blocks_, k_, keys, out));
}

void blocked_bloom_filter::count_sharded(std::span<blocked_bloom_filter const> const shards,
                                         unsigned const key_bits, unsigned const shard_bits,
                                         std::span<std::uint64_t const> const keys,
                                         std::uint64_t * const out) noexcept
{
    if (shards.empty() || keys.empty())
        return;
    unsigned const k = shards.front().k_;
    bool const one_k =
        std::all_of(shards.begin(), shards.end(), [k](auto const & f) { return f.k_ == k; });
    unsigned const local_bits = key_bits - shard_bits;
    std::uint64_t const local_mask =
        local_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << local_bits) - 1;
    std::uint64_t const shard_mask = shards.size() - 1;
    if (!one_k) // (not from ksieve's own filters: their shards share k) one key at a time
    {
        for (std::size_t i = 0; i < keys.size(); ++i)
            out[i] =
                shards[(keys[i] >> (local_bits & 63)) & shard_mask].count(keys[i] & local_mask);
        return;
    }
    // the shards' tables, kept per thread (grown once, not per call)
    thread_local std::vector<std::uint64_t *> words;
    thread_local std::vector<std::uint64_t> blocks;
    words.resize(shards.size());
    blocks.resize(shards.size());
    for (std::size_t s = 0; s < shards.size(); ++s)
    {
        words[s] = const_cast<std::uint64_t *>(shards[s].storage_.data()); // only read
        blocks[s] = shards[s].blocks_;
    }
    detail::bloom_shard_tables const t{words.data(), blocks.data(), local_bits & 63, shard_mask,
                                       local_mask};
    KSIEVE_BLOOM_DISPATCH(count_sharded(t, k, keys, out));
}

filter_stats blocked_bloom_filter::stats() const noexcept
{
    std::array<std::uint64_t, block_bits + 1> hist{};
    std::uint64_t const * const w = storage_.data();
    for (std::uint64_t b = 0; b < blocks_; ++b)
    {
        unsigned c = 0;
        for (unsigned j = 0; j < block_words; ++j)
            c += static_cast<unsigned>(std::popcount(w[b * block_words + j]));
        ++hist[c];
    }
    std::uint64_t used = 0;
    double fpr = 0;
    for (unsigned c = 0; c <= block_bits; ++c)
    {
        used += c * hist[c];
        if (hist[c] != 0)
            fpr += static_cast<double>(hist[c]) * std::pow(c / double(block_bits), double(k_));
    }
    filter_stats s = detail::bloom_stats(used, bits(), storage_.size(), k_);
    s.estimated_fpr = fpr / static_cast<double>(blocks_);
    return s;
}

// ---------------------------------------------------------------------------------------------------------
// classic_bloom_filter

classic_bloom_filter::classic_bloom_filter(std::uint64_t const words, unsigned const k)
    : bits_{words * 64}, k_{k}, storage_{detail::bloom_words<classic_bloom_filter>(words, k)}
{
}

classic_bloom_filter classic_bloom_filter::create(filter_config const & cfg,
                                                  unsigned const key_bits,
                                                  std::uint64_t const expected)
{
    return detail::create_classic_layout<classic_bloom_filter>(cfg, key_bits, expected, 64);
}

double classic_bloom_filter::predicted_fpr(std::uint64_t const n, std::uint64_t const bits,
                                           unsigned const k) noexcept
{
    return std::pow(
        -std::expm1(-static_cast<double>(k) * static_cast<double>(n) / static_cast<double>(bits)),
        static_cast<double>(k));
}

classic_bloom_filter classic_bloom_filter::view(std::span<std::uint64_t const> const params,
                                                std::span<std::uint64_t const> const words,
                                                unsigned)
{
    unsigned const k = detail::view_hash_count<classic_bloom_filter>(
        params,
        [](std::uint64_t const nwords)
        {
            if (nwords == 0 || nwords > (std::uint64_t{1} << 56))
                throw format_error{"classic Bloom filter with an invalid size of " +
                                   std::to_string(nwords) + " words"};
        });
    std::uint64_t const nwords = params[1];
    detail::check_payload_words<classic_bloom_filter>(nwords, "words", words.size(), nwords);
    return classic_bloom_filter{nwords * 64, k, detail::word_storage::view(words)};
}

void classic_bloom_filter::insert_concurrent(std::uint64_t const key) noexcept
{
    std::uint64_t const a = mix64(key);
    set_classic_bits(storage_.data(), bits_, k_,
                     detail::double_hash{a, detail::classic_second_hash(a)}, atomic_or_op{});
}

insert_status classic_bloom_filter::insert_batch(std::span<std::uint64_t const> const keys) noexcept
{
    insert_classic_batch(storage_.data(), bits_, k_, keys, plain_or_op{});
    return insert_status::ok;
}

void classic_bloom_filter::insert_batch_concurrent(
    std::span<std::uint64_t const> const keys) noexcept
{
    insert_classic_batch(storage_.data(), bits_, k_, keys, atomic_or_op{});
}

void classic_bloom_filter::count_batch(std::span<std::uint64_t const> const keys,
                                       std::uint64_t * const out) const noexcept
{
    std::uint64_t const * const w = storage_.data();
    detail::pipelined<detail::double_hash>(
        keys,
        [this, w](std::uint64_t const key)
        { return detail::stage_double_hash<0, 64>(key, k_, bits_, w); },
        [this, w, out](std::size_t const idx, detail::double_hash s)
        {
            std::uint64_t acc = 1;
            for (unsigned i = 0; i < k_; ++i, s.a += s.b)
            {
                std::uint64_t const p = detail::mul_high(s.a, bits_);
                acc &= w[p >> 6] >> (p & 63);
            }
            out[idx] = acc & 1;
        });
}

filter_stats classic_bloom_filter::stats() const noexcept
{
    std::uint64_t used = 0;
    std::uint64_t const * const w = storage_.data();
    for (std::size_t i = 0, n = storage_.size(); i < n; ++i)
        used += static_cast<std::uint64_t>(std::popcount(w[i]));
    return detail::bloom_stats(used, bits_, storage_.size(), k_);
}

template class detail::bloom_set_ops<blocked_bloom_filter>;
template class detail::bloom_set_ops<classic_bloom_filter>;

} // namespace ksieve
