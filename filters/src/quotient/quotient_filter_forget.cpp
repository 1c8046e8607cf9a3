// quotient_filter: room within a memory cap for a stream that keeps inserting (dedup). A table at
// its cap forgets its entries of the lowest counts (ties: a hash of the fingerprint) instead of
// growing: later lookups of a forgotten key count from zero, and the load, so the false-positive
// rate, stays within max_load.
#include "quotient_filter_appender.hpp"

#include <algorithm>
#include <array>

namespace ksieve
{

namespace
{

// A mix of a fingerprint (splitmix64's finaliser): the order in which entries of one count are
// forgotten, spread over the table.
constexpr std::uint64_t mix(std::uint64_t x) noexcept
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

constexpr std::size_t count_classes = 256; // counts at or above 255 are one class
constexpr unsigned tie_bits = 10;          // entries of the boundary count: 1024 classes by mix

std::size_t count_class(std::uint64_t const count) noexcept
{
    return static_cast<std::size_t>(std::min<std::uint64_t>(count, count_classes - 1));
}

} // namespace

template <typename Keep> void quotient_filter::rebuild_keeping(Keep && keep)
{
    quotient_filter nf = empty(key_bits_, p_, max_load_, auto_grow_, nslots_);
    qf_appender app{nf};
    cursor c{*this};
    while (c.next())
        if (keep(c.fingerprint(), c.count()))
            (void)app.append(c.fingerprint(), c.count()); // (fits: fewer entries than before)
    app.finish();
    *this = std::move(nf);
}

std::uint64_t quotient_filter::bytes_at(std::uint64_t const nslots) const noexcept
{
    return 8 * words_for(blocks_for(nslots), remainder_bits_for(p_, nslots));
}

std::uint64_t quotient_filter::room_within(std::uint64_t const cap_bytes) const noexcept
{
    // the largest table that growth reaches within the cap (this one if it is already larger)
    std::uint64_t n = nslots_;
    for (;;)
    {
        std::uint64_t const next = grown_slots_for(p_, n);
        if (!auto_grow_ || next == 0 || bytes_at(next) > cap_bytes)
            break;
        n = next;
    }
    return static_cast<std::uint64_t>(max_load_ * static_cast<double>(n));
}

bool quotient_filter::has_room(std::uint64_t const cap_bytes,
                               std::uint64_t const incoming) const noexcept
{
    return table_ == nullptr || used_slots() + incoming <= room_within(cap_bytes);
}

std::uint64_t quotient_filter::make_room(std::uint64_t const cap_bytes,
                                         std::uint64_t const incoming)
{
    if (table_ == nullptr)
        return 0;
    fold_concurrent();
    std::uint64_t const room = room_within(cap_bytes);
    if (used_ + incoming <= room)
        return 0;
    // down to half the room at most, so that a stream forgets now and then rather than before
    // every batch (each time costs a rebuild of the table)
    return forget(std::min(room / 2, room > incoming ? room - incoming : 0));
}

std::uint64_t quotient_filter::forget(std::uint64_t const target_used)
{
    if (table_ == nullptr || used_ <= target_used)
        return 0;
    fold_concurrent();
    std::uint64_t const before = distinct_;
    // Entries to keep, from the highest count down; each entry takes used / distinct slots on
    // average (counters take more): aim below the target, and again lower if the rebuilt table
    // still holds too many.
    double keep = static_cast<double>(distinct_) * static_cast<double>(target_used) /
                  static_cast<double>(used_);
    std::array<std::uint64_t, count_classes> by_count{};
    {
        cursor c{*this};
        while (c.next())
            ++by_count[count_class(c.count())];
    }
    for (int attempt = 0; used_ > target_used && attempt < 8; ++attempt, keep *= 0.9)
    {
        // the boundary count: all entries above it kept, those of it kept by their mix
        auto left = static_cast<std::uint64_t>(std::max(0.0, keep));
        std::size_t boundary = count_classes;
        while (boundary > 0 && by_count[boundary - 1] <= left)
            left -= by_count[--boundary];
        std::array<std::uint64_t, std::size_t{1} << tie_bits> by_mix{};
        std::uint64_t tie_below = 0; // keep boundary entries whose mix class is below this
        if (boundary > 0 && left > 0)
        {
            cursor c{*this};
            while (c.next())
                if (count_class(c.count()) == boundary - 1)
                    ++by_mix[mix(c.fingerprint()) >> (64 - tie_bits)];
            while (tie_below < by_mix.size() && by_mix[tie_below] <= left)
                left -= by_mix[tie_below++];
        }
        rebuild_keeping(
            [&](std::uint64_t const fp, std::uint64_t const count)
            {
                std::size_t const cc = count_class(count);
                return cc >= boundary || (boundary > 0 && cc == boundary - 1 &&
                                          (mix(fp) >> (64 - tie_bits)) < tie_below);
            });
        for (auto & v : by_count)
            v = 0;
        cursor again{*this};
        while (again.next())
            ++by_count[count_class(again.count())];
    }
    return before - distinct_;
}

std::uint64_t quotient_filter::keep_sample(unsigned const level)
{
    if (table_ == nullptr || level == 0)
        return 0;
    fold_concurrent();
    std::uint64_t const before = distinct_;
    std::uint64_t const mask = (std::uint64_t{1} << level) - 1;
    rebuild_keeping([&](std::uint64_t const fp, std::uint64_t)
                    { return ((fp >> shl_) & mask) == 0; });
    return before - distinct_;
}

} // namespace ksieve
