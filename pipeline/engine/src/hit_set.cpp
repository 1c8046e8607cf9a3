// hit_set: the exact set of keys that dedup learns as hits (growth within a memory cap, insertion, and
// the batched membership tests).
#include <ksieve/engine/hit_set.hpp>

#include <ksieve/filters/cpu_dispatch.hpp>
#include <ksieve/filters/memory_budget.hpp>

#include <algorithm>
#include <bit>
#include <new>
#include <utility>

#if defined(__x86_64__) && !defined(__AVX2__) && defined(__GNUC__)
#define KSIEVE_HIT_SET_V3_KERNEL 1 // lookup also compiled for x86-64-v3
#else
#define KSIEVE_HIT_SET_V3_KERNEL 0
#endif

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
    if (nb * sizeof(bucket) + bytes() > max_bytes) // the old table lives until the new one is filled
        return false;
    memory fresh;
    try
    {
        fresh = memory{nb};
    }
    catch (memory_limit_error const &) // the set only saves time: no room for it is no error
    {
        return false;
    }
    catch (std::bad_alloc const &)
    {
        return false;
    }
    memory const old = std::move(mem_);
    std::size_t const old_buckets = nbuckets_;
    mem_ = std::move(fresh);
    nbuckets_ = nb;
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(nb));
    std::uint64_t const * const slots = old_buckets == 0 ? nullptr : old.ptr()[0].key;
    std::size_t const old_slots = old_buckets * bucket_keys;
    for (std::size_t i = 0; i < old_slots; ++i)
    {
        if (i + prefetch_ahead < old_slots && slots[i + prefetch_ahead] != 0)
            __builtin_prefetch(&mem_.ptr()[home(slots[i + prefetch_ahead])], 1, 3);
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
        for (std::uint64_t & slot : mem_.ptr()[b].key)
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
            __builtin_prefetch(&mem_.ptr()[home(keys[i + prefetch_ahead])], 1, 3);
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
        for (std::uint64_t const slot : mem_.ptr()[b].key)
        {
            hit |= slot == key;
            empty |= slot == 0;
        }
        if (hit || empty)
            return hit;
        b = (b + 1) & (nbuckets_ - 1);
    }
}

namespace
{

/* The body of hit_set::lookup over the table's slots (buckets of hit_set::bucket_keys keys): home(key)
 * gives the home bucket, contains(key) decides the rare key whose home bucket is full without it. The
 * bucket's 8 comparisons are written as one generic vector compare, which the compiler lowers for each
 * copy's target. */
template <typename home_t, typename contains_t>
[[gnu::always_inline]] inline void lookup_slots(std::uint64_t const * const slots, home_t const & home,
                                                contains_t const & contains, std::uint64_t const * const keys,
                                                std::size_t const n, std::uint64_t * const out,
                                                std::uint64_t const hit_value) noexcept
{
    for (std::size_t i = 0; i < n; ++i)
    {
        if (i + prefetch_ahead < n)
            __builtin_prefetch(slots + hit_set::bucket_keys * home(keys[i + prefetch_ahead]), 0, 3);
        // the home bucket decides unless it is full without the key (rare at max_load)
        using lanes = std::uint64_t __attribute__((vector_size(64)));
        std::uint64_t const key = keys[i];
        lanes v;
        __builtin_memcpy(&v, slots + hit_set::bucket_keys * home(key), sizeof v);
        lanes const hits = v == key, empties = v == 0;
        std::uint64_t hit = 0, empty = 0;
        for (std::size_t j = 0; j < hit_set::bucket_keys; ++j)
        {
            hit |= hits[j];
            empty |= empties[j];
        }
        bool const found = (hit | empty) != 0 && key != 0 ? hit != 0 : contains(key);
        out[i] = found ? hit_value : 0;
    }
}

template <typename home_t, typename contains_t>
void lookup_generic(std::uint64_t const * const slots, home_t const & home, contains_t const & contains,
                    std::uint64_t const * const keys, std::size_t const n, std::uint64_t * const out,
                    std::uint64_t const hit_value) noexcept
{
    lookup_slots(slots, home, contains, keys, n, out, hit_value);
}

#if KSIEVE_HIT_SET_V3_KERNEL
template <typename home_t, typename contains_t>
[[gnu::target("avx2,bmi,bmi2,lzcnt,popcnt")]] void
lookup_v3(std::uint64_t const * const slots, home_t const & home, contains_t const & contains,
          std::uint64_t const * const keys, std::size_t const n, std::uint64_t * const out,
          std::uint64_t const hit_value) noexcept
{
    lookup_slots(slots, home, contains, keys, n, out, hit_value);
}
#endif

} // namespace

// Compiled generic and, where the build does not target AVX2, for x86-64-v3; the filter library's
// dispatcher (cpu_dispatch.hpp) picks the copy. Both give the same answers.
void hit_set::lookup(std::uint64_t const * const keys, std::size_t const n, std::uint64_t * const out,
                     std::uint64_t const hit_value) const noexcept
{
    if (nbuckets_ == 0)
    {
        for (std::size_t i = 0; i < n; ++i)
            out[i] = keys[i] == 0 && has_zero_ ? hit_value : 0;
        return;
    }
    std::uint64_t const * const slots = mem_.ptr()[0].key;
    auto const home_of = [this](std::uint64_t const key) noexcept { return home(key); };
    auto const contains_key = [this](std::uint64_t const key) noexcept { return contains(key); };
#if KSIEVE_HIT_SET_V3_KERNEL
    if (detail::use_v3_kernels())
        return lookup_v3(slots, home_of, contains_key, keys, n, out, hit_value);
#endif
    lookup_generic(slots, home_of, contains_key, keys, n, out, hit_value);
}

} // namespace ksieve
