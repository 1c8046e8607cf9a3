#pragma once
/*! \file
 * \brief A small counting hash table for dedup's per-batch bookkeeping (key -> count), emptied in
 * O(1).
 */
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <ksieve/filters/kmers/kmer.hpp>

namespace ksieve::detail
{

/*! \brief Open addressing (linear probing) from a 64-bit key to a 32-bit count. Every entry carries
 * the epoch it was written in, and reset() starts a new epoch, so that emptying the table costs
 * nothing: an entry is empty iff its stamp is not the current epoch. A key's home slot is
 * mix64(key) & (capacity() - 1); callers that have already computed mix64(key) pass it as `hash`.
 *
 * No allocation except in reset(); no exceptions except std::bad_alloc from reset(). Thread safety:
 * const members may run concurrently; the others need exclusive access. */
class stamp_table
{
public:
    /*! \brief Empty the table for at most `need` keys: its capacity becomes the smallest power of
     * two that is at least min_capacity and 2 x need (the load stays at most 1/2). Memory grows
     * when the capacity does and is kept afterwards, so that a smaller reset() allocates nothing.
     */
    void reset(std::size_t const need, std::size_t const min_capacity = 64)
    {
        std::size_t cap = std::bit_ceil(std::max<std::size_t>(min_capacity, 1));
        while (cap < 2 * need)
            cap *= 2;
        if (slots_.size() < cap)
        {
            slots_.assign(cap, entry{});
            epoch_ = 0;
        }
        if (++epoch_ == 0) // stamp wrap-around: clear once every 2^32 resets
        {
            std::fill(slots_.begin(), slots_.end(), entry{});
            epoch_ = 1;
        }
        mask_ = cap - 1;
    }

    /*! \brief The slots in use since the last reset(). */
    [[nodiscard]] std::size_t capacity() const noexcept { return mask_ + 1; }

    /*! \brief The hash that places `key`. */
    [[nodiscard]] static std::size_t hash_of(std::uint64_t const key) noexcept
    {
        return static_cast<std::size_t>(mix64(key));
    }

    /*! \brief Prefetch the home slot of a key of this hash. \pre reset() was called. */
    void prefetch(std::size_t const hash) const noexcept
    {
        __builtin_prefetch(slots_.data() + (hash & mask_));
    }

    /*! \brief The count of `key` (0 if absent). \pre reset() was called; hash == hash_of(key). */
    [[nodiscard]] std::uint32_t find(std::uint64_t const key, std::size_t const hash) const noexcept
    {
        entry const & e = slots_[slot(key, hash)];
        return e.stamp == epoch_ ? e.count : 0;
    }
    [[nodiscard]] std::uint32_t find(std::uint64_t const key) const noexcept
    {
        return find(key, hash_of(key));
    }

    /*! \brief The count of `key`, inserted as 0 if absent. \pre reset() was called with room for
     * every key inserted since; hash == hash_of(key). */
    [[nodiscard]] std::uint32_t & at(std::uint64_t const key, std::size_t const hash) noexcept
    {
        entry & e = slots_[slot(key, hash)];
        if (e.stamp != epoch_)
            e = entry{key, 0, epoch_};
        return e.count;
    }
    [[nodiscard]] std::uint32_t & at(std::uint64_t const key) noexcept
    {
        return at(key, hash_of(key));
    }

private:
    struct entry
    {
        std::uint64_t key{0};
        std::uint32_t count{0};
        std::uint32_t stamp{0};
    };

    // The slot that holds `key`, or the empty slot where it would go.
    [[nodiscard]] std::size_t slot(std::uint64_t const key, std::size_t const hash) const noexcept
    {
        std::size_t i = hash & mask_;
        while (slots_[i].stamp == epoch_ && slots_[i].key != key)
            i = (i + 1) & mask_;
        return i;
    }

    std::vector<entry> slots_;
    std::size_t mask_{0};
    std::uint32_t epoch_{0};
};

} // namespace ksieve::detail
