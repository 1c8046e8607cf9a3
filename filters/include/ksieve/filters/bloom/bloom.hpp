#pragma once
/*! \file
 * \brief Bloom filters: the cache-line-blocked Bloom filter (ksieve's `--type bloom`) and the
 * classic (unblocked) layout, kept for comparison (`bloom-classic`).
 *
 * Design (hashing, sizing with the correction for blocking, cardinality, speed): docs/design.md,
 * "Filter internals"; the words' layout: docs/file_format.md, sections 5.2 and 5.3.
 *
 * Thread safety: const members may run concurrently with each other; insert_concurrent and
 * insert_batch_concurrent with each other only (atomic OR, relaxed: bits are only ever set, so the
 * result equals a serial insert of the same keys in any order); every other mutating member needs
 * exclusive access. A filter returned by view() must not be mutated (precondition).
 */
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include <ksieve/filters/bloom/bloom_words.hpp>
#include <ksieve/filters/common/filter.hpp>
#include <ksieve/filters/kmers/kmer.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

namespace ksieve
{

/*! \brief Cache-line-blocked Bloom filter (filter_type::bloom); see the file comment. count() is 1
 * if the key may be present, 0 if it is certainly absent. Move-only; clone() copies. */
class blocked_bloom_filter : public detail::bloom_set_ops<blocked_bloom_filter>
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

    /*! \brief Empty filter of `blocks` blocks, k bits a key. \throws usage_error if blocks is 0 or
     * k is not in [1, max_hashes]; ksieve::error if out of memory. */
    blocked_bloom_filter(std::uint64_t blocks, unsigned k);

    /*! \brief Empty filter for `expected` keys (at most 2^key_bits) at FPR cfg.fpr (shape_for).
     * \throws usage_error if cfg.fpr is not in (0, 0.5) or expected == 0 (a Bloom filter needs
     * --expected or a first-pass estimate). */
    [[nodiscard]] static blocked_bloom_filter create(filter_config const & cfg, unsigned key_bits,
                                                     std::uint64_t expected);

    /*! \brief Smallest filter (blocks, k) whose blocked FPR formula (file comment) is <= eps for n
     * keys. Cached per thread for the last (n, eps). \pre n > 0, 0 < eps < 1. */
    [[nodiscard]] static shape shape_for(std::uint64_t n, double eps);
    /*! \brief The blocked FPR formula (Poisson sum) for n keys in `blocks` blocks, k bits a key. */
    [[nodiscard]] static double predicted_fpr(std::uint64_t n, std::uint64_t blocks,
                                              unsigned k) noexcept;

    /*! \brief Read-only filter over words it does not own (mmap). \throws format_error if params
     * are not {scheme, blocks, k} with a known scheme, blocks >= 1, 1 <= k <= max_hashes and
     * words.size() == 8 * blocks. Any word contents are valid. */
    [[nodiscard]] static blocked_bloom_filter view(std::span<std::uint64_t const> params,
                                                   std::span<std::uint64_t const> words,
                                                   unsigned key_bits);

    blocked_bloom_filter(blocked_bloom_filter &&) noexcept = default;
    blocked_bloom_filter & operator=(blocked_bloom_filter &&) noexcept = default;

    /*! \brief Insert a key (count 0 inserts nothing, any other count is a single insert). Always
     * ok. Exclusive access. */
    insert_status insert(std::uint64_t const key, std::uint64_t const count = 1) noexcept
    {
        if (count != 0)
        {
            std::uint64_t const h = mix64(key);
            set_bits(block_ptr(h), static_cast<std::uint32_t>(h));
        }
        return insert_status::ok;
    }
    /*! \brief Insert with atomic OR: safe concurrently with other insert_concurrent calls only. */
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
    /*! \brief out[i] = count of the whole key keys[i] (its top shard_bits of key_bits choose the
     * shard) over the shards of a sharded filter, in one prefetching pipeline across shards: the
     * results of count_batch per shard. Thread-safe (const). \pre shards.size() == 2^shard_bits;
     * out has keys.size() elements. */
    static void count_sharded(std::span<blocked_bloom_filter const> shards, unsigned key_bits,
                              unsigned shard_bits, std::span<std::uint64_t const> keys,
                              std::uint64_t * out) noexcept;

    /*! \brief {scheme, blocks, k}. */
    [[nodiscard]] std::vector<std::uint64_t> params() const { return {scheme, blocks_, k_}; }
    [[nodiscard]] std::span<std::uint64_t const> words() const noexcept { return storage_.span(); }
    /*! \brief slots = bits, used = set bits, distinct = standard cardinality estimate,
     * estimated_fpr = exact expected FPR of this filter for a key not inserted: mean over blocks of
     * (set bits / 512)^k. O(m). */
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
    [[nodiscard]] bool test_bits(std::uint64_t const * const block,
                                 std::uint32_t const lo) const noexcept
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

/*! \brief Classic (unblocked) Bloom filter (filter_type::bloom_classic), sized with the classic
 * formulas; for comparison with the blocked layout. Same interface and thread safety as
 * blocked_bloom_filter. */
class classic_bloom_filter : public detail::bloom_set_ops<classic_bloom_filter>
{
public:
    static constexpr filter_type type_id = filter_type::bloom_classic;
    static constexpr unsigned max_hashes = 64;
    static constexpr std::uint64_t scheme = 1;

    /*! \brief Empty filter of 64 * words bits, k hash functions. \throws usage_error if words is 0
     * or k is not in [1, max_hashes]; ksieve::error if out of memory. */
    classic_bloom_filter(std::uint64_t words, unsigned k);
    /*! \brief Sized by detail::classic_bloom_shape. \throws usage_error as
     * blocked_bloom_filter::create. */
    [[nodiscard]] static classic_bloom_filter create(filter_config const & cfg, unsigned key_bits,
                                                     std::uint64_t expected);
    /*! \brief The classic FPR formula (1 - e^{-kn/m})^k. */
    [[nodiscard]] static double predicted_fpr(std::uint64_t n, std::uint64_t bits,
                                              unsigned k) noexcept;
    /*! \brief \throws format_error unless params == {scheme, words, k} with words == words.size()
     * >= 1 and 1 <= k <= max_hashes. */
    [[nodiscard]] static classic_bloom_filter view(std::span<std::uint64_t const> params,
                                                   std::span<std::uint64_t const> words,
                                                   unsigned key_bits);

    classic_bloom_filter(classic_bloom_filter &&) noexcept = default;
    classic_bloom_filter & operator=(classic_bloom_filter &&) noexcept = default;

    insert_status insert(std::uint64_t const key, std::uint64_t const count = 1) noexcept
    {
        if (count == 0)
            return insert_status::ok;
        std::uint64_t a = mix64(key);
        std::uint64_t const b = detail::classic_second_hash(a);
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
        std::uint64_t const b = detail::classic_second_hash(a);
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

    /*! \brief {scheme, words, k}. */
    [[nodiscard]] std::vector<std::uint64_t> params() const { return {scheme, bits_ / 64, k_}; }
    [[nodiscard]] std::span<std::uint64_t const> words() const noexcept { return storage_.span(); }
    /*! \brief As blocked_bloom_filter::stats, with estimated_fpr = (N/m)^k. */
    [[nodiscard]] filter_stats stats() const noexcept;

    [[nodiscard]] std::uint64_t bits() const noexcept { return bits_; }
    [[nodiscard]] unsigned hash_count() const noexcept { return k_; }
    [[nodiscard]] bool is_view() const noexcept { return !storage_.owning(); }

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

static_assert(shard_filter<blocked_bloom_filter>);
static_assert(shard_filter<classic_bloom_filter>);

} // namespace ksieve
