#pragma once
/*! \file
 * \brief Bloom filters: the cache-line-blocked Bloom filter (ksieve's `--type bloom`) and the classic
 * (unblocked) layout, kept for comparison (`bloom-classic`).
 *
 * ## Keys and hashing
 * Both filters take hashed keys of any width (a shard may see only a few bits for small k) and derive
 * everything from h = mix64(key), a bijection on 64 bits, so the quality of the bit positions does not
 * depend on how many bits the key has.
 *
 * - Blocked (Putze, Sanders, Singler 2007): the filter is an array of 64-byte blocks (512 bits, one cache
 *   line). The block is `(h * blocks) >> 64` (fastrange: any block count, not only powers of two); the k
 *   bit positions inside the block are the top 9 bits of `uint32(h) * salt_i mod 2^32` for k fixed odd
 *   salts (independent of the bits that choose the block). One key touches one cache line.
 * - Classic: m bits (m a multiple of 64), positions `(a * m) >> 64` with a = h, a += b (k times), b =
 *   mix64(h ^ c) | 1: double hashing (Kirsch-Mitzenmacher). One key touches up to k cache lines.
 * The hash scheme is part of the file format (params()[0] == scheme id).
 *
 * ## Sizing from (n, eps)
 * The classic analysis gives, for an unblocked filter, m = -n ln(eps) / (ln 2)^2 bits and k = (m/n) ln 2 hash functions,
 * from FPR = (1 - e^{-kn/m})^k. The classic filter uses exactly that m (rounded up to whole words) and the
 * integer k (floor or ceil of (m/n) ln 2) that minimises the formula, so its FPR exceeds eps by at most
 * about 3% (the cost of an integer k; 2.2% at eps = 0.1%).
 *
 * **Correction for blocking.** The classic formula assumes every key spreads its bits over the whole array.
 * In a blocked filter the number of keys per block varies (Binomial(n, 1/blocks), about Poisson with
 * mean lambda = 512 n / m), and overfull blocks have a much higher local FPR that the underfull ones do not
 * compensate (the per-block FPR is convex in the load). The FPR of a blocked filter is therefore
 *
 *     FPR_blocked(n, m, k) = sum_{i >= 0} Poisson(i; lambda) * (1 - (1 - 1/512)^{i k})^k,  lambda = 512 n / m
 *
 * i.e. the FPR of a classic 512-bit filter holding i keys, averaged over the distribution of keys per block
 * (Putze, Sanders, Singler: "Cache-, Hash- and Space-Efficient Bloom Filters", 2007). With the classic m
 * this is 1.14 eps at eps = 1%, 1.54 eps at 0.1% and 2.56 eps at 0.01%, which would break the "FPR <= 1.5
 * eps" promise. blocked_bloom_filter::shape_for therefore searches, for every k, the smallest number of
 * blocks with FPR_blocked <= eps and keeps the smallest filter: 9.90 bits/key (k = 6) at 1% instead of the
 * classic 9.59, 15.49 (k = 9) instead of 14.38 at 0.1%, 21.91 (k = 12) instead of 19.17 at 0.01%.
 * predicted_fpr() evaluates the formula; the tests check the measured FPR against it.
 *
 * ## Cardinality
 * stats().distinct is the standard estimate n = -(m/k) ln(1 - N/m) from the number N of set bits (N < k: 0,
 * N == k: 1, N == m: m/k). It is unbiased for the classic layout. For the blocked layout the expected
 * fraction of zero bits is exp(-(512 n/m)(1 - (1 - 1/512)^k)) instead of exp(-kn/m), so the classic formula
 * underestimates n by about (k - 1)/1024 (0.6% at k = 7, 1.1% at k = 12) below saturation.
 *
 * ## Speed
 * insert_batch / count_batch hash each key 32 keys ahead of its use and prefetch its block (or its k words),
 * so that many cache misses overlap. With AVX-512 (`-march=native`, KSIEVE_NATIVE=ON) the blocked filter's
 * batches build a key's 512-bit mask in one register and OR it into the block (insert), and test up to 16
 * bits with one vpmulld / vpermd / vptestmd sequence (lookup). The AVX2 kernels use the same scheme on
 * 256-bit halves; portable x86-64 builds compile them besides the unrolled scalar kernels (k <= 16) and run
 * them on CPUs with x86-64-v3 (the filter library's run-time dispatch; KSIEVE_SIMD=generic forces the
 * scalar ones). All paths set and test the same bits. Owned word
 * arrays are 64-byte aligned; arrays of 4 MiB and more are 2 MiB aligned and advised for transparent huge
 * pages (MADV_HUGEPAGE), which removes most TLB misses of random access to a large filter.
 *
 * ## Thread safety
 * Const members (count, count_batch, contains, stats, params, words, clone) may run concurrently with
 * each other. insert_concurrent / insert_batch_concurrent may run concurrently with each other (atomic OR
 * on the words, relaxed ordering: bits are only ever set, so the result equals a serial insert of the
 * same keys in any order) but not with any other member. Every other mutating member needs exclusive
 * access. A filter returned by view() must not be mutated (precondition).
 */
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include <ksieve/filters/filter.hpp>
#include <ksieve/filters/kmer.hpp>
#include <ksieve/filters/memory_budget.hpp>

namespace ksieve
{

namespace detail
{

/*! \brief High 64 bits of a * b: maps a uniform 64-bit a onto [0, b) without division. */
[[nodiscard]] inline std::uint64_t mul_high(std::uint64_t const a, std::uint64_t const b) noexcept
{
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::uint64_t>((static_cast<u128>(a) * b) >> 64);
}

/*! \brief Word array of a filter: either owned (zeroed, 64-byte aligned; large arrays are additionally
 * 2 MiB aligned and advised for transparent huge pages on Linux) or a read-only view of words owned
 * elsewhere (an mmap'd file). Move-only. Thread safety: as the filter that holds it. */
class word_storage
{
public:
    word_storage() noexcept = default;
    /*! \brief Owned, zero-filled array of `words` words. \throws ksieve::error if the allocation fails. */
    explicit word_storage(std::size_t words);
    /*! \brief Non-owning read-only view. */
    [[nodiscard]] static word_storage view(std::span<std::uint64_t const> words) noexcept;

    word_storage(word_storage && other) noexcept;
    word_storage & operator=(word_storage && other) noexcept;
    word_storage(word_storage const &) = delete;
    word_storage & operator=(word_storage const &) = delete;
    ~word_storage();

    /*! \brief An owned copy. \throws ksieve::error if the allocation fails. */
    [[nodiscard]] word_storage clone() const;

    /*! \brief Mutable words. \pre owning() (writing through a view is undefined). */
    [[nodiscard]] std::uint64_t * data() noexcept { return data_; }
    [[nodiscard]] std::uint64_t const * data() const noexcept { return data_; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool owning() const noexcept { return align_ != 0; }
    [[nodiscard]] std::span<std::uint64_t const> span() const noexcept { return {data_, size_}; }

private:
    void release() noexcept;

    std::uint64_t * data_{nullptr};
    std::size_t size_{0};
    std::size_t align_{0}; // alignment of the owned allocation, 0 for a view
    memory_charge charge_; // the owned bytes against the memory budget
};

/*! \brief Odd multipliers of the blocked filter: bit i of a key is the top 9 bits of uint32(h) * salt[i].
 * Part of the file format (hash scheme 1): never change. */
inline constexpr std::uint32_t blocked_bloom_salts[32] = {
    0xA8817217U, 0x62E2083FU, 0xEC57D223U, 0xBDA78EE9U, 0xB505AA11U, 0xF12E72DBU, 0x1B3C7A35U, 0x7211BE53U,
    0x35C5F219U, 0xE0F94147U, 0xB632E74FU, 0x1B45E15BU, 0x75167BE5U, 0x1A278609U, 0x5C1B21A1U, 0x332B0F3DU,
    0xEEF8853BU, 0xAD701B65U, 0xDB9636C9U, 0xC5E87C39U, 0xDC39EB67U, 0x54096519U, 0x24BD248DU, 0x95BC0AE3U,
    0x96EDD2F9U, 0x8402D8EBU, 0x7193C5C9U, 0x5CAD3747U, 0x8BC8E363U, 0xE0F9F781U, 0xC5F28AB1U, 0xA11139C9U};

/*! \brief Keys a filter of key_bits-bit keys can hold at most: min(expected, 2^key_bits). */
[[nodiscard]] constexpr std::uint64_t cap_expected(std::uint64_t const expected,
                                                   unsigned const key_bits) noexcept
{
    return key_bits >= 63
               ? expected
               : (expected < (std::uint64_t{1} << key_bits) ? expected : std::uint64_t{1} << key_bits);
}

/*! \brief Prefetch distance (keys) of the batch operations. */
inline constexpr std::size_t prefetch_distance = 32;

/*! \brief Software pipeline over keys: stage(key) hashes one key and issues its prefetches
 * `prefetch_distance` keys ahead of op(i, staged value), which then finds the memory in cache. */
template <typename staged_t, std::size_t distance = prefetch_distance, typename stage_t, typename op_t>
inline void pipelined(std::span<std::uint64_t const> const keys, stage_t && stage, op_t && op) noexcept
{
    staged_t ring[distance];
    std::size_t const n = keys.size();
    std::size_t const head = n < distance ? n : distance;
    for (std::size_t i = 0; i < head; ++i)
        ring[i] = stage(keys[i]);
    for (std::size_t i = 0; i < n; ++i)
    {
        staged_t const s = ring[i % distance];
        if (i + distance < n)
            ring[i % distance] = stage(keys[i + distance]);
        op(i, s);
    }
}

/*! \brief The standard cardinality estimate -(m/k) ln(1 - N/m) with its special cases (N < k: 0,
 * N == k: 1, N >= m: m/k). */
[[nodiscard]] std::uint64_t bloom_cardinality(std::uint64_t set_bits, std::uint64_t m, unsigned k) noexcept;

/*! \brief Seed sizing for a classic layout: m = -n ln(eps) / (ln 2)^2 rounded up to a multiple of
 * `granule` (>= granule), k = the integer next to (m/n) ln 2 that minimises (1 - e^{-kn/m})^k.
 * \pre n > 0, 0 < eps < 1. */
void classic_bloom_shape(std::uint64_t n, double eps, std::uint64_t granule, std::uint64_t & m, unsigned & k);

/*! \brief Throws usage_error unless 0 < fpr < 0.5 and expected > 0 (shared by all Bloom types). */
void check_bloom_config(filter_config const & cfg, std::uint64_t expected, char const * type_name);

/*! \brief The members the Bloom filters share (set operations, clone), defined in the filter library; a
 * friend of each Bloom filter. */
struct bloom_ops;

} // namespace detail

/*! \brief Cache-line-blocked Bloom filter (filter_type::bloom). See the file comment for layout, sizing
 * and thread safety. count() returns 1 if the key may be present, 0 if it is certainly absent.
 * Move-only; clone() copies. */
class blocked_bloom_filter
{
public:
    static constexpr filter_type type_id = filter_type::bloom;
    /*! \brief Bits per block (one 64-byte cache line). */
    static constexpr unsigned block_bits = 512;
    static constexpr unsigned block_words = block_bits / 64;
    /*! \brief Largest supported number of bits per key (hash functions). */
    static constexpr unsigned max_hashes = 32;
    /*! \brief Hash scheme id stored as params()[0]. */
    static constexpr std::uint64_t scheme = 1;

    /*! \brief Number of blocks and bits per key of a blocked filter. */
    struct shape
    {
        std::uint64_t blocks{1};
        unsigned k{1};
    };

    /*! \brief Empty filter of `blocks` blocks with k bits per key.
     * \throws usage_error if blocks == 0 or k is not in [1, max_hashes]; ksieve::error if out of memory. */
    blocked_bloom_filter(std::uint64_t blocks, unsigned k);

    /*! \brief Empty filter for `expected` keys at FPR cfg.fpr (shape_for). key_bits is not needed (every key
     * goes through mix64) except that expected is capped at 2^key_bits distinct keys.
     * \throws usage_error if cfg.fpr is not in (0, 0.5) or expected == 0 (a Bloom filter needs --expected or
     * a first-pass estimate). */
    [[nodiscard]] static blocked_bloom_filter create(filter_config const & cfg, unsigned key_bits,
                                                     std::uint64_t expected);

    /*! \brief Smallest filter (blocks, k) whose blocked FPR formula (file comment) is <= eps for n keys.
     * Cached per thread for the last (n, eps). \pre n > 0, 0 < eps < 1. */
    [[nodiscard]] static shape shape_for(std::uint64_t n, double eps);
    /*! \brief The blocked FPR formula (Poisson sum) for n keys in `blocks` blocks with k bits per key. */
    [[nodiscard]] static double predicted_fpr(std::uint64_t n, std::uint64_t blocks, unsigned k) noexcept;

    /*! \brief Read-only filter over words it does not own (mmap).
     * \throws format_error if params are not {scheme, blocks, k} with a known scheme, blocks >= 1,
     * 1 <= k <= max_hashes and words.size() == 8 * blocks. Any word contents are valid. */
    [[nodiscard]] static blocked_bloom_filter view(std::span<std::uint64_t const> params,
                                                   std::span<std::uint64_t const> words, unsigned key_bits);

    blocked_bloom_filter(blocked_bloom_filter &&) noexcept = default;
    blocked_bloom_filter & operator=(blocked_bloom_filter &&) noexcept = default;

    /*! \brief Insert a key (count 0 inserts nothing, any other count is a single insert). Always ok.
     * Exclusive access. */
    insert_status insert(std::uint64_t const key, std::uint64_t const count = 1) noexcept
    {
        if (count != 0)
        {
            std::uint64_t const h = mix64(key);
            set_bits(block_ptr(h), static_cast<std::uint32_t>(h));
        }
        return insert_status::ok;
    }
    /*! \brief Insert with atomic OR: safe concurrently with other insert_concurrent calls (only). */
    void insert_concurrent(std::uint64_t key) noexcept;
    /*! \brief insert() of every key, with software prefetching. Always ok. Exclusive access. */
    insert_status insert_batch(std::span<std::uint64_t const> keys) noexcept;
    /*! \brief insert_concurrent() of every key, with prefetching. */
    void insert_batch_concurrent(std::span<std::uint64_t const> keys) noexcept;

    /*! \brief true if the key may have been inserted (false: certainly not). */
    [[nodiscard]] bool contains(std::uint64_t const key) const noexcept
    {
        std::uint64_t const h = mix64(key);
        return test_bits(block_ptr(h), static_cast<std::uint32_t>(h));
    }
    /*! \brief 1 if the key may have been inserted, else 0. */
    [[nodiscard]] std::uint64_t count(std::uint64_t const key) const noexcept
    {
        return contains(key) ? 1 : 0;
    }
    /*! \brief out[i] = count(keys[i]), with prefetching. \pre out has keys.size() elements. */
    void count_batch(std::span<std::uint64_t const> keys, std::uint64_t * out) const noexcept;
    /*! \brief out[i] = count of the whole key keys[i] (key_bits bits, of which the top shard_bits choose
     * the shard, the rest the key within it) over the shards of a sharded filter, in one prefetching pipeline
     * across shards (no partition by shard). The same results as count_batch per shard. Thread-safe (const).
     * \pre shards.size() == 2^shard_bits; out has keys.size() elements. */
    static void count_sharded(std::span<blocked_bloom_filter const> shards, unsigned key_bits,
                              unsigned shard_bits, std::span<std::uint64_t const> keys,
                              std::uint64_t * out) noexcept;

    /*! \brief In-place union (OR): afterwards holds the keys of both. Exclusive access.
     * \throws incompatible_error if blocks or k differ. */
    void unite_with(blocked_bloom_filter const & other);
    /*! \brief In-place intersection (AND): holds every key of both, and possibly (false positives) more;
     * its FPR can be higher than that of a filter built from the intersection of the key sets.
     * \throws incompatible_error if blocks or k differ. */
    void intersect_with(blocked_bloom_filter const & other);
    /*! \brief OR of all filters (ksieve merge). \throws incompatible_error if they differ in shape or the
     * span is empty. */
    [[nodiscard]] static blocked_bloom_filter merge(std::span<blocked_bloom_filter const * const> filters);

    /*! \brief {scheme, blocks, k}. */
    [[nodiscard]] std::vector<std::uint64_t> params() const { return {scheme, blocks_, k_}; }
    [[nodiscard]] std::span<std::uint64_t const> words() const noexcept { return storage_.span(); }
    [[nodiscard]] blocked_bloom_filter clone() const;
    /*! \brief slots = bits, used = set bits, distinct = standard cardinality estimate, estimated_fpr = exact
     * expected FPR of this filter for a key not inserted: mean over blocks of (set bits / 512)^k. O(m). */
    [[nodiscard]] filter_stats stats() const noexcept;

    [[nodiscard]] std::uint64_t blocks() const noexcept { return blocks_; }
    [[nodiscard]] std::uint64_t bits() const noexcept { return blocks_ * block_bits; }
    [[nodiscard]] unsigned hash_count() const noexcept { return k_; }
    [[nodiscard]] bool is_view() const noexcept { return !storage_.owning(); }

private:
    blocked_bloom_filter(std::uint64_t blocks, unsigned k, detail::word_storage storage) noexcept
        : blocks_{blocks}, k_{k}, storage_{std::move(storage)}
    {
    }

    /*! \brief Bit position (0..511) of the i-th bit of a key inside its block. */
    [[nodiscard]] static unsigned position(std::uint32_t const lo, unsigned const i) noexcept
    {
        return (lo * detail::blocked_bloom_salts[i]) >> 23;
    }
    [[nodiscard]] std::uint64_t const * block_ptr(std::uint64_t const h) const noexcept
    {
        return storage_.data() + block_words * detail::mul_high(h, blocks_);
    }
    [[nodiscard]] std::uint64_t * block_ptr(std::uint64_t const h) noexcept
    {
        return storage_.data() + block_words * detail::mul_high(h, blocks_);
    }
    void set_bits(std::uint64_t * const block, std::uint32_t const lo) const noexcept
    {
        for (unsigned i = 0; i < k_; ++i)
        {
            unsigned const p = position(lo, i);
            block[p >> 6] |= std::uint64_t{1} << (p & 63);
        }
    }
    [[nodiscard]] bool test_bits(std::uint64_t const * const block, std::uint32_t const lo) const noexcept
    {
        std::uint64_t acc = 1;
        for (unsigned i = 0; i < k_; ++i)
        {
            unsigned const p = position(lo, i);
            acc &= block[p >> 6] >> (p & 63);
        }
        return (acc & 1) != 0;
    }
    void set_bits_atomic(std::uint64_t * block, std::uint32_t lo) const noexcept;
    friend struct detail::bloom_ops;

    std::uint64_t blocks_;
    unsigned k_;
    detail::word_storage storage_;
};

/*! \brief Classic (unblocked) Bloom filter (filter_type::bloom_classic), sized with the classic formulas;
 * for comparison with the blocked layout. Same interface and thread safety as blocked_bloom_filter. */
class classic_bloom_filter
{
public:
    static constexpr filter_type type_id = filter_type::bloom_classic;
    static constexpr unsigned max_hashes = 64;
    static constexpr std::uint64_t scheme = 1;

    /*! \brief Empty filter of 64 * words bits with k hash functions.
     * \throws usage_error if words == 0 or k is not in [1, max_hashes]; ksieve::error if out of memory. */
    classic_bloom_filter(std::uint64_t words, unsigned k);
    /*! \brief Seed sizing (detail::classic_bloom_shape). \throws usage_error as blocked_bloom_filter::create
     */
    [[nodiscard]] static classic_bloom_filter create(filter_config const & cfg, unsigned key_bits,
                                                     std::uint64_t expected);
    /*! \brief The classic FPR formula (1 - e^{-kn/m})^k. */
    [[nodiscard]] static double predicted_fpr(std::uint64_t n, std::uint64_t bits, unsigned k) noexcept;
    /*! \brief \throws format_error unless params == {scheme, words, k} with words == words.size() >= 1 and
     * 1 <= k <= max_hashes. */
    [[nodiscard]] static classic_bloom_filter view(std::span<std::uint64_t const> params,
                                                   std::span<std::uint64_t const> words, unsigned key_bits);

    classic_bloom_filter(classic_bloom_filter &&) noexcept = default;
    classic_bloom_filter & operator=(classic_bloom_filter &&) noexcept = default;

    insert_status insert(std::uint64_t const key, std::uint64_t const count = 1) noexcept
    {
        if (count == 0)
            return insert_status::ok;
        std::uint64_t a = mix64(key);
        std::uint64_t const b = second_hash(a);
        std::uint64_t * const w = storage_.data();
        for (unsigned i = 0; i < k_; ++i, a += b)
        {
            std::uint64_t const p = detail::mul_high(a, bits_);
            w[p >> 6] |= std::uint64_t{1} << (p & 63);
        }
        return insert_status::ok;
    }
    void insert_concurrent(std::uint64_t key) noexcept;
    insert_status insert_batch(std::span<std::uint64_t const> keys) noexcept;
    void insert_batch_concurrent(std::span<std::uint64_t const> keys) noexcept;

    [[nodiscard]] bool contains(std::uint64_t const key) const noexcept
    {
        std::uint64_t a = mix64(key);
        std::uint64_t const b = second_hash(a);
        std::uint64_t const * const w = storage_.data();
        std::uint64_t acc = 1;
        for (unsigned i = 0; i < k_; ++i, a += b)
        {
            std::uint64_t const p = detail::mul_high(a, bits_);
            acc &= w[p >> 6] >> (p & 63);
        }
        return (acc & 1) != 0;
    }
    [[nodiscard]] std::uint64_t count(std::uint64_t const key) const noexcept
    {
        return contains(key) ? 1 : 0;
    }
    void count_batch(std::span<std::uint64_t const> keys, std::uint64_t * out) const noexcept;

    void unite_with(classic_bloom_filter const & other);
    void intersect_with(classic_bloom_filter const & other);
    [[nodiscard]] static classic_bloom_filter merge(std::span<classic_bloom_filter const * const> filters);

    /*! \brief {scheme, words, k}. */
    [[nodiscard]] std::vector<std::uint64_t> params() const { return {scheme, bits_ / 64, k_}; }
    [[nodiscard]] std::span<std::uint64_t const> words() const noexcept { return storage_.span(); }
    [[nodiscard]] classic_bloom_filter clone() const;
    /*! \brief As blocked_bloom_filter::stats, with estimated_fpr = (N/m)^k. */
    [[nodiscard]] filter_stats stats() const noexcept;

    [[nodiscard]] std::uint64_t bits() const noexcept { return bits_; }
    [[nodiscard]] unsigned hash_count() const noexcept { return k_; }
    [[nodiscard]] bool is_view() const noexcept { return !storage_.owning(); }

    /*! \brief Step of the double hashing: a second, odd 64-bit hash. */
    [[nodiscard]] static std::uint64_t second_hash(std::uint64_t const h) noexcept
    {
        return mix64(h ^ 0x9E3779B97F4A7C15ULL) | 1;
    }

private:
    classic_bloom_filter(std::uint64_t bits, unsigned k, detail::word_storage storage) noexcept
        : bits_{bits}, k_{k}, storage_{std::move(storage)}
    {
    }
    friend struct detail::bloom_ops;

    std::uint64_t bits_;
    unsigned k_;
    detail::word_storage storage_;
};

/*! \brief a OR b as a new filter. \throws incompatible_error if the shapes differ. */
[[nodiscard]] blocked_bloom_filter unite(blocked_bloom_filter const & a, blocked_bloom_filter const & b);
/*! \brief a AND b as a new filter. \throws incompatible_error if the shapes differ. */
[[nodiscard]] blocked_bloom_filter intersect(blocked_bloom_filter const & a, blocked_bloom_filter const & b);
[[nodiscard]] classic_bloom_filter unite(classic_bloom_filter const & a, classic_bloom_filter const & b);
[[nodiscard]] classic_bloom_filter intersect(classic_bloom_filter const & a, classic_bloom_filter const & b);

static_assert(shard_filter<blocked_bloom_filter>);
static_assert(shard_filter<classic_bloom_filter>);

} // namespace ksieve
