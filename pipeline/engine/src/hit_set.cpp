// hit_set: the exact set of keys that dedup learns as hits (growth within a memory cap, insertion,
// and the batched membership tests).
#include <ksieve/engine/hit_set.hpp>

#include <ksieve/filters/support/memory_budget.hpp>

#include "hit_set_kernels.hpp"

#include <algorithm>
#include <bit>
#include <new>
#include <utility>

namespace ksieve
{

namespace
{
constexpr std::size_t min_buckets = 1024;
constexpr std::size_t prefetch_ahead = 16;
} // namespace

bool hit_set::reserve(std::size_t const more, std::size_t const max_bytes)
{
    std::size_t const need = stored_ + more;
    if (nbuckets_ != 0 &&
        static_cast<double>(need) <= max_load * static_cast<double>(nbuckets_ * bucket_keys))
        return true;
    std::size_t nb = std::max(min_buckets, nbuckets_);
    while (static_cast<double>(need) > max_load * static_cast<double>(nb * bucket_keys))
        nb *= 2;
    if (nb * sizeof(bucket) + bytes() >
        max_bytes) // the old table lives until the new one is filled
        return false;
    zeroed_memory fresh;
    try
    {
        fresh = zeroed_memory{nb * sizeof(bucket)};
    }
    catch (memory_limit_error const &) // the set only saves time: no room for it is no error
    {
        return false;
    }
    catch (std::bad_alloc const &)
    {
        return false;
    }
    zeroed_memory const old = std::move(mem_);
    std::size_t const old_buckets = nbuckets_;
    mem_ = std::move(fresh);
    nbuckets_ = nb;
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(nb));
    std::uint64_t const * const slots = old_buckets == 0 ? nullptr : old.as<bucket>()[0].key;
    std::size_t const old_slots = old_buckets * bucket_keys;
    for (std::size_t i = 0; i < old_slots; ++i)
    {
        if (i + prefetch_ahead < old_slots && slots[i + prefetch_ahead] != 0)
            __builtin_prefetch(&mem_.as<bucket>()[home(slots[i + prefetch_ahead])], 1, 3);
        if (slots[i] != 0)
            place(slots[i]);
    }
    return true;
}

void hit_set::place(std::uint64_t const key) noexcept
{
    std::size_t b = home(key);
    for (;;)
    {
        for (std::uint64_t & slot : mem_.as<bucket>()[b].key)
            if (slot == 0)
            {
                slot = key;
                return;
            }
        b = (b + 1) & (nbuckets_ - 1);
    }
}

void hit_set::insert(std::uint64_t const key) noexcept
{
    if (key == 0)
    {
        size_ += !has_zero_;
        has_zero_ = true;
        return;
    }
    if (contains(key))
        return;
    place(key);
    ++stored_;
    ++size_;
}

void hit_set::insert(std::uint64_t const * const keys, std::size_t const n) noexcept
{
    for (std::size_t i = 0; i < n; ++i)
    {
        if (i + prefetch_ahead < n && nbuckets_ != 0)
            __builtin_prefetch(&mem_.as<bucket>()[home(keys[i + prefetch_ahead])], 1, 3);
        insert(keys[i]);
    }
}

bool hit_set::contains(std::uint64_t const key) const noexcept
{
    if (key == 0)
        return has_zero_;
    if (nbuckets_ == 0)
        return false;
    std::size_t b = home(key);
    for (;;)
    {
        bool hit = false, empty = false;
        for (std::uint64_t const slot : mem_.as<bucket>()[b].key)
        {
            hit |= slot == key;
            empty |= slot == 0;
        }
        if (hit || empty)
            return hit;
        b = (b + 1) & (nbuckets_ - 1);
    }
}

// The lookup (hit_set_kernels.inc) of the CPU level the dispatcher chooses (hit_set_kernels.hpp):
// every copy gives the same answers.
void hit_set::lookup(std::uint64_t const * const keys, std::size_t const n,
                     std::uint64_t * const out, std::uint64_t const hit_value) const noexcept
{
    if (nbuckets_ == 0)
    {
        for (std::size_t i = 0; i < n; ++i)
            out[i] = keys[i] == 0 && has_zero_ ? hit_value : 0;
        return;
    }
    detail::hit_set_kernels().lookup(*this, mem_.as<bucket>()[0].key, shift_, keys, n, out,
                                     hit_value);
}

} // namespace ksieve
