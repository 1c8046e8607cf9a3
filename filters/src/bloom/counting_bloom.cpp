// The counting Bloom filter: 4-bit counters in words, construction and view, insert / remove /
// count, pipelined batches, set operations and stats.
#include <ksieve/filters/bloom/counting_bloom.hpp>
#include <ksieve/filters/support/error.hpp>

#include "bloom_common.hpp"

#include <bit>
#include <string>

namespace ksieve
{

namespace
{

constexpr std::uint64_t nibble_high = 0x8888888888888888ULL;
constexpr std::uint64_t nibble_low = 0x1111111111111111ULL;

/*! Nibble-wise saturating sum of 16 4-bit counters. */
constexpr std::uint64_t saturating_add(std::uint64_t const x, std::uint64_t const y) noexcept
{
    std::uint64_t const s = ((x & ~nibble_high) + (y & ~nibble_high)) ^ ((x ^ y) & nibble_high);
    std::uint64_t const carry =
        ((x & y) | ((x | y) & ~s)) & nibble_high; // carry out of each nibble
    return s | ((carry >> 3) * 15);
}
static_assert(saturating_add(0x0000000000000F87ULL, 0x00000000000001F9ULL) ==
              0x0000000000000FFFULL);
static_assert(saturating_add(0x1234ULL, 0x4321ULL) == 0x5555ULL);

constexpr std::uint64_t nibble_min(std::uint64_t const x, std::uint64_t const y) noexcept
{
    std::uint64_t r = 0;
    for (unsigned s = 0; s < 64; s += 4)
    {
        std::uint64_t const a = (x >> s) & 15;
        std::uint64_t const b = (y >> s) & 15;
        r |= (a < b ? a : b) << s;
    }
    return r;
}

/*! Mask with bit 0 of every non-zero nibble set. */
constexpr std::uint64_t nonzero_nibbles(std::uint64_t const w) noexcept
{
    return (w | (w >> 1) | (w >> 2) | (w >> 3)) & nibble_low;
}

} // namespace

namespace detail
{
// What the shared members (bloom_common.hpp) need to know of this file's filter types.
template <>
inline constexpr bloom_kind<counting_bloom_filter> bloom_kind_of<counting_bloom_filter>{
    "counting Bloom", "words",    1, "hash functions", &counting_bloom_filter::counters, "counters",
    &saturating_add,  &nibble_min};
} // namespace detail

counting_bloom_filter::counting_bloom_filter(std::uint64_t const words, unsigned const k)
    : counting_bloom_filter{words * counters_per_word, k,
                            detail::bloom_words<counting_bloom_filter>(words, k)}
{
}

counting_bloom_filter counting_bloom_filter::create(filter_config const & cfg,
                                                    unsigned const key_bits,
                                                    std::uint64_t const expected)
{
    return detail::create_classic_layout<counting_bloom_filter>(cfg, key_bits, expected,
                                                                counters_per_word);
}

counting_bloom_filter counting_bloom_filter::view(std::span<std::uint64_t const> const params,
                                                  std::span<std::uint64_t const> const words,
                                                  unsigned)
{
    unsigned const k = detail::view_hash_count<counting_bloom_filter>(
        params,
        [](std::uint64_t const counters)
        {
            if (counters == 0 || counters % counters_per_word != 0 ||
                counters > (std::uint64_t{1} << 60))
                throw format_error{"counting Bloom filter with an invalid number of counters " +
                                   std::to_string(counters)};
        });
    std::uint64_t const counters = params[1];
    detail::check_payload_words<counting_bloom_filter>(counters, "counters", words.size(),
                                                       counters / counters_per_word);
    return counting_bloom_filter{counters, k, detail::word_storage::view(words)};
}

bool counting_bloom_filter::remove(std::uint64_t const key, std::uint64_t const count) noexcept
{
    if (count == 0 || this->count(key) == 0)
        return false;
    std::uint64_t a = mix64(key);
    std::uint64_t const b = detail::classic_second_hash(a);
    for (unsigned i = 0; i < k_; ++i, a += b)
    {
        std::uint64_t const idx = detail::mul_high(a, counters_);
        std::uint64_t & w = storage_.data()[idx / counters_per_word];
        unsigned const shift = 4 * (idx % counters_per_word);
        std::uint64_t const c = (w >> shift) & 15;
        if (c == max_count)
            continue; // saturated: the true value is unknown, keep it (sticky)
        std::uint64_t const n = c > count ? c - count : 0;
        w ^= (c ^ n) << shift;
    }
    return true;
}

void counting_bloom_filter::positions(std::uint64_t const key,
                                      std::uint64_t * const out) const noexcept
{
    std::uint64_t a = mix64(key);
    std::uint64_t const b = detail::classic_second_hash(a);
    for (unsigned i = 0; i < k_; ++i, a += b)
        out[i] = detail::mul_high(a, counters_);
}

insert_status
counting_bloom_filter::insert_batch(std::span<std::uint64_t const> const keys) noexcept
{
    std::uint64_t const * const w = storage_.data();
    detail::pipelined<detail::double_hash>(
        keys,
        [this, w](std::uint64_t const key)
        { return detail::stage_double_hash<1, counters_per_word>(key, k_, counters_, w); },
        [this](std::size_t, detail::double_hash s)
        {
            for (unsigned i = 0; i < k_; ++i, s.a += s.b)
                add(detail::mul_high(s.a, counters_), 1);
        });
    return insert_status::ok;
}

void counting_bloom_filter::count_batch(std::span<std::uint64_t const> const keys,
                                        std::uint64_t * const out) const noexcept
{
    std::uint64_t const * const w = storage_.data();
    detail::pipelined<detail::double_hash>(
        keys,
        [this, w](std::uint64_t const key)
        { return detail::stage_double_hash<0, counters_per_word>(key, k_, counters_, w); },
        [this, out](std::size_t const idx, detail::double_hash s)
        {
            std::uint64_t m = max_count;
            for (unsigned i = 0; i < k_; ++i, s.a += s.b)
            {
                std::uint64_t const c = counter(detail::mul_high(s.a, counters_));
                m = c < m ? c : m;
            }
            out[idx] = m;
        });
}

filter_stats counting_bloom_filter::stats() const noexcept
{
    std::uint64_t used = 0;
    std::uint64_t sum = 0;
    std::uint64_t const * const w = storage_.data();
    for (std::size_t i = 0, n = storage_.size(); i < n; ++i)
    {
        used += static_cast<std::uint64_t>(std::popcount(nonzero_nibbles(w[i])));
        std::uint64_t const bytes =
            (w[i] & 0x0F0F0F0F0F0F0F0FULL) + ((w[i] >> 4) & 0x0F0F0F0F0F0F0F0FULL);
        sum += (bytes * 0x0101010101010101ULL) >> 56; // byte sums <= 8 * 30 < 256
    }
    filter_stats s = detail::bloom_stats(used, counters_, storage_.size(), k_);
    s.total_count = (sum + k_ / 2) / k_;
    return s;
}

std::uint64_t counting_bloom_filter::saturated_counters() const noexcept
{
    std::uint64_t n = 0;
    std::uint64_t const * const w = storage_.data();
    for (std::size_t i = 0, e = storage_.size(); i < e; ++i)
        n += static_cast<std::uint64_t>(
            std::popcount(w[i] & (w[i] >> 1) & (w[i] >> 2) & (w[i] >> 3) & nibble_low));
    return n;
}

template class detail::bloom_set_ops<counting_bloom_filter>;

} // namespace ksieve
