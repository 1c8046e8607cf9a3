#pragma once
/*! \file
 * \brief hit_set: an exact set of 64-bit keys with batched, prefetched membership tests. dedup
 * keeps in it the k-mers whose count in the filter has reached --min-count, so that the lookups
 * which only ask "is this k-mer a hit?" cost one cache line of a plain hash table instead of a
 * quotient-filter lookup.
 *
 * Layout: buckets of 8 keys, one 64-byte cache line each, a power of two of them; a key's home
 * bucket comes from a multiplicative hash of the key, and a full bucket overflows into the next one
 * (linear probing by bucket, wrapping around). Slot value 0 means empty; the key 0 itself is a
 * flag. The load stays at most max_load, so a miss usually ends in the home bucket, which has an
 * empty slot.
 *
 * Thread safety: const members (contains, lookup) may run concurrently; insert and reserve need
 * exclusive access. Hot paths (contains, lookup, insert after reserve) never throw and never
 * allocate.
 */
#include <cstddef>
#include <cstdint>

#include <ksieve/filters/support/zeroed_memory.hpp>

namespace ksieve
{

/*! \brief Exact set of 64-bit keys (see the file comment). */
class hit_set
{
public:
    static constexpr std::size_t bucket_keys = 8; //!< keys per 64-byte bucket
    static constexpr double max_load = 0.75;      //!< keys / slots after reserve()

    hit_set() = default;

    /*! \brief Room for `more` further keys without passing max_load, growing (rehashing) if needed,
     * unless the old and the new table together would take more than `max_bytes` (the peak of a
     * growth): then nothing changes and the answer is false. \throws std::bad_alloc */
    bool reserve(std::size_t more, std::size_t max_bytes);

    /*! \brief Add a key (no effect if present). \pre reserve() made room for it. */
    void insert(std::uint64_t key) noexcept;

    /*! \brief insert() of keys[0, n), prefetching each key's bucket some keys ahead.
     * \pre reserve() made room for them. */
    void insert(std::uint64_t const * keys, std::size_t n) noexcept;

    /*! \brief Whether the key is in the set. */
    [[nodiscard]] bool contains(std::uint64_t key) const noexcept;

    /*! \brief out[i] = hit_value if keys[i] is in the set, else 0, for i < n: a software pipeline
     * that prefetches each key's bucket some keys ahead. out may not overlap keys. */
    void lookup(std::uint64_t const * keys, std::size_t n, std::uint64_t * out,
                std::uint64_t hit_value) const noexcept;

    /*! \brief Keys in the set. */
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    /*! \brief Bytes of the table. */
    [[nodiscard]] std::size_t bytes() const noexcept { return nbuckets_ * sizeof(bucket); }

private:
    struct alignas(64) bucket
    {
        std::uint64_t key[bucket_keys];
    };
    [[nodiscard]] std::size_t home(std::uint64_t const key) const noexcept
    {
        return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
    }
    void place(std::uint64_t key) noexcept; // key != 0, absent, room guaranteed

    // zeroed buckets: tables of 4 MiB and more come straight from mmap (already zero, no memset,
    // and advised to use transparent huge pages: fewer page faults and TLB misses)
    zeroed_memory mem_;
    std::size_t nbuckets_{0}; // 0 or a power of two
    unsigned shift_{64};      // 64 - log2(nbuckets_)
    std::size_t size_{0};     // keys, the key 0 included
    std::size_t stored_{0};   // keys in the table (all but the key 0)
    bool has_zero_{false};
};

} // namespace ksieve
