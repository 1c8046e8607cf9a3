// The registry of mapped filter files (address ranges and names) in fixed slots published by
// atomics, so that a SIGBUS handler can name the filter file that changed under a mapping
// (async-signal-safe lookup).
#include "mapped_ranges.hpp"

#include <ksieve/filters/filter_file.hpp>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstring>

namespace ksieve
{

namespace
{

constexpr std::size_t mapping_slots = 256;

struct mapping_slot
{
    std::atomic<int> state{0}; // 0 free, 1 being written, 2 holds a mapping
    std::atomic<std::uintptr_t> begin{0};
    std::atomic<std::uintptr_t> end{0};
    char name[PATH_MAX]{};
};

mapping_slot mapping_registry[mapping_slots];

static_assert(std::atomic<int>::is_always_lock_free &&
                  std::atomic<std::uintptr_t>::is_always_lock_free,
              "the mapping registry is read from a signal handler");

} // namespace

namespace detail
{

int remember_mapping(void const * const begin, std::uint64_t const bytes,
                     std::string const & name) noexcept
{
    if (name.size() >= PATH_MAX || bytes == 0)
        return -1;
    for (std::size_t i = 0; i < mapping_slots; ++i)
    {
        mapping_slot & slot = mapping_registry[i];
        int expected = 0;
        if (!slot.state.compare_exchange_strong(expected, 1, std::memory_order_acquire))
            continue;
        std::memcpy(slot.name, name.c_str(), name.size() + 1);
        auto const b = reinterpret_cast<std::uintptr_t>(begin);
        slot.begin.store(b, std::memory_order_relaxed);
        slot.end.store(b + bytes, std::memory_order_relaxed);
        slot.state.store(2, std::memory_order_release);
        return static_cast<int>(i);
    }
    return -1;
}

void forget_mapping(int const slot) noexcept
{
    if (slot >= 0 && static_cast<std::size_t>(slot) < mapping_slots)
        mapping_registry[slot].state.store(0, std::memory_order_release);
}

} // namespace detail

char const * mapped_filter_name(void const * const address) noexcept
{
    auto const a = reinterpret_cast<std::uintptr_t>(address);
    for (auto const & slot : mapping_registry)
        if (slot.state.load(std::memory_order_acquire) == 2 &&
            a >= slot.begin.load(std::memory_order_relaxed) &&
            a < slot.end.load(std::memory_order_relaxed))
            return slot.name;
    return nullptr;
}

} // namespace ksieve
