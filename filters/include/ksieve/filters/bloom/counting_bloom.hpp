#pragma once
/*! \file
 * \brief Counting Bloom filter with 4-bit saturating counters (filter_type::counting_bloom), after
 * Fan, Cao, Almeida, Broder (2000). Layout: docs/file_format.md, section 5.4; positions and sizing
 * as the classic filter's, with counters for bits (so 4x its memory).
 *
 * Counts: insert(key, c) adds c to each of the key's k counters, saturating at 15 ("sticky": a
 * saturated counter is never decremented, its true value is unknown). count(key) is the minimum of
 * the counters: 0 = certainly absent, else min(multiplicity, 15) <= count <= 15 for inserted keys.
 * remove(key, c) of a key with count(key) > 0 subtracts c (never below 0) from its unsaturated
 * counters; an absent key returns false and changes nothing. Removing only inserted keys (a
 * precondition: removing a false positive corrupts other keys) never causes a false negative; a key
 * with a saturated counter may still be reported after its removal. With every key inserted once at
 * the optimal k, P(any counter reaches 16) <= m (e ln 2 / 16)^16 = m * 1.37e-15 (Fan et al.).
 * Unite: counter-wise saturating sum (the multiset union while nothing saturates); intersect:
 * counter-wise minimum, count(x) >= min(count_a(x), count_b(x)); do not remove from an
 * intersection.
 *
 * Thread safety: const members may run concurrently; every mutating member (there is no concurrent
 * insert) needs exclusive access. A view() must not be mutated.
 */
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <ksieve/filters/bloom/bloom.hpp>
#include <ksieve/filters/common/filter.hpp>

namespace ksieve
{

/*! \brief Counting Bloom filter with 4-bit saturating counters. See the file comment. Move-only. */
class counting_bloom_filter : public detail::bloom_set_ops<counting_bloom_filter>
{
public:
    static constexpr filter_type type_id = filter_type::counting_bloom;
    static constexpr unsigned max_hashes = 64;
    static constexpr std::uint64_t scheme = 1;
    /*! \brief Largest counter value; a counter at max_count is saturated (sticky). */
    static constexpr std::uint64_t max_count = 15;
    static constexpr unsigned counters_per_word = 16;

    /*! \brief Empty filter of 16 * words counters, k hash functions. \throws usage_error if words
     * is 0 or k is not in [1, max_hashes]; ksieve::error if out of memory. */
    counting_bloom_filter(std::uint64_t words, unsigned k);
    /*! \brief Seed sizing for `expected` keys at cfg.fpr (expected capped at 2^key_bits).
     * \throws usage_error if cfg.fpr is not in (0, 0.5) or expected == 0. */
    [[nodiscard]] static counting_bloom_filter create(filter_config const & cfg, unsigned key_bits,
                                                      std::uint64_t expected);
    /*! \brief \throws format_error unless params == {scheme, counters, k} with counters a positive
     * multiple of 16 equal to 16 * words.size() and 1 <= k <= max_hashes. Any word contents are
     * valid. */
    [[nodiscard]] static counting_bloom_filter view(std::span<std::uint64_t const> params,
                                                    std::span<std::uint64_t const> words,
                                                    unsigned key_bits);

    counting_bloom_filter(counting_bloom_filter &&) noexcept = default;
    counting_bloom_filter & operator=(counting_bloom_filter &&) noexcept = default;

    /*! \brief Add `count` occurrences (saturating at 15; none for 0). Always ok. Exclusive. */
    insert_status insert(std::uint64_t const key, std::uint64_t const count = 1) noexcept
    {
        if (count == 0)
            return insert_status::ok;
        std::uint64_t a = mix64(key);
        std::uint64_t const b = detail::classic_second_hash(a);
        for (unsigned i = 0; i < k_; ++i, a += b)
            add(detail::mul_high(a, counters_), count);
        return insert_status::ok;
    }
    /*! \brief Remove `count` occurrences of a key that was inserted (precondition; see the file
     * comment). \returns false (and changes nothing) if count(key) == 0. Saturated counters are
     * left at 15. Exclusive. */
    bool remove(std::uint64_t key, std::uint64_t count = 1) noexcept;
    /*! \brief Minimum of the key's counters: 0 = absent, else >= min(multiplicity, 15). */
    [[nodiscard]] std::uint64_t count(std::uint64_t const key) const noexcept
    {
        std::uint64_t a = mix64(key);
        std::uint64_t const b = detail::classic_second_hash(a);
        std::uint64_t m = max_count;
        for (unsigned i = 0; i < k_; ++i, a += b)
        {
            std::uint64_t const c = counter(detail::mul_high(a, counters_));
            m = c < m ? c : m;
        }
        return m;
    }
    [[nodiscard]] bool contains(std::uint64_t const key) const noexcept { return count(key) != 0; }
    /*! \brief insert(key, 1) for every key (repeats count), with prefetching. Always ok. */
    insert_status insert_batch(std::span<std::uint64_t const> keys) noexcept;
    /*! \brief out[i] = count(keys[i]), with prefetching. */
    void count_batch(std::span<std::uint64_t const> keys, std::uint64_t * out) const noexcept;

    /*! \brief {scheme, counters, k}. */
    [[nodiscard]] std::vector<std::uint64_t> params() const { return {scheme, counters_, k_}; }
    [[nodiscard]] std::span<std::uint64_t const> words() const noexcept { return storage_.span(); }
    /*! \brief slots = counters, used = non-zero counters, distinct = the standard estimate -(m/k)
     * ln(1 - used/m), total_count = (sum of counters) / k (the number of insertions while nothing
     * saturated), estimated_fpr = (used/m)^k. O(m). */
    [[nodiscard]] filter_stats stats() const noexcept;
    /*! \brief Number of saturated counters (value 15). O(m). */
    [[nodiscard]] std::uint64_t saturated_counters() const noexcept;

    /*! \brief Value of counter i. \pre i < counters(). */
    [[nodiscard]] std::uint64_t counter(std::uint64_t const i) const noexcept
    {
        return (storage_.data()[i / counters_per_word] >> (4 * (i % counters_per_word))) & 15;
    }
    /*! \brief The k counter indices of a key (with repetitions, in hash order) into out[0..k). */
    void positions(std::uint64_t key, std::uint64_t * out) const noexcept;

    [[nodiscard]] std::uint64_t counters() const noexcept { return counters_; }
    [[nodiscard]] unsigned hash_count() const noexcept { return k_; }
    [[nodiscard]] bool is_view() const noexcept { return !storage_.owning(); }

private:
    counting_bloom_filter(std::uint64_t counters, unsigned k, detail::word_storage storage) noexcept
        : counters_{counters}, k_{k}, storage_{std::move(storage)}
    {
    }
    void add(std::uint64_t const i, std::uint64_t const count) noexcept
    {
        std::uint64_t & w = storage_.data()[i / counters_per_word];
        unsigned const shift = 4 * (i % counters_per_word);
        std::uint64_t const c = (w >> shift) & 15;
        std::uint64_t const n = count >= max_count - c ? max_count : c + count;
        w ^= (c ^ n) << shift;
    }
    friend struct detail::bloom_ops;

    std::uint64_t counters_;
    unsigned k_;
    detail::word_storage storage_;
};

static_assert(shard_filter<counting_bloom_filter>);

} // namespace ksieve
