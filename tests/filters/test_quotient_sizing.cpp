// Tables sized to fit: the bytes per k-mer of a quotient filter designed for n keys stay within 15%
// of the model (r + metadata bits) / max_load at every size from 10^5 to 10^10 keys (the sizing
// arithmetic, no table made), and real tables filled to their design hold what the model says.
#include <ksieve/filters/quotient/quotient_filter.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>

namespace
{

using ksieve::filter_config;
using ksieve::insert_status;
using ksieve::quotient_filter;

constexpr unsigned key_bits = 62; // k = 31
constexpr double metadata_bits = 2.125;

// The model: remainders of ceil(log2(1 / eps)) bits plus the metadata, at max_load.
double model_bits(double const eps, double const max_load)
{
    return (std::ceil(std::log2(1.0 / eps)) + metadata_bits) / max_load;
}

// Shards as build makes them for n expected keys: 64, fewer while a shard would hold under 2^18
// keys.
unsigned shard_bits_for(std::uint64_t const n)
{
    return std::min(6u,
                    static_cast<unsigned>(std::bit_width(std::max<std::uint64_t>(1, n >> 18)) - 1));
}

// Bits per key of the tables build designs for n keys (its estimate is the true count + 2.5%).
double planned_bits(std::uint64_t const n, double const eps)
{
    filter_config cfg;
    cfg.fpr = eps;
    auto const expected = static_cast<std::uint64_t>(static_cast<double>(n) * 1.025);
    unsigned const sb = shard_bits_for(expected);
    cfg.shard_bits = sb;
    std::uint64_t const shards = std::uint64_t{1} << sb;
    std::uint64_t const bytes = shards * quotient_filter::planned_bytes(
                                             cfg, key_bits - sb, (expected + shards - 1) / shards);
    return 8.0 * static_cast<double>(bytes) / static_cast<double>(n);
}

} // namespace

// Up to 64 MiB, build refits the table to its contents (checked by the command tests and below);
// beyond, the table it designs is what it saves.
TEST(QuotientSizing, BitsPerKeyWithinFifteenPercentOfTheModelUpTo1e10)
{
    for (double const eps : {1e-3, 1e-4, 1e-5})
        for (double n = 3e7; n <= 1.0001e10; n *= 1.25)
        {
            double const bits = planned_bits(static_cast<std::uint64_t>(n), eps);
            double const model = model_bits(eps, 0.9);
            EXPECT_LE(bits, 1.15 * model) << "n " << n << " eps " << eps;
            EXPECT_GE(bits, 0.9 * model)
                << "n " << n << " eps " << eps; // no table too small for its keys
        }
}

TEST(QuotientSizing, PlannedBytesAreTheBytesCreateMakes)
{
    for (double const eps : {0.0, 1e-3})
        for (std::uint64_t const n : {0ull, 1000ull, 77777ull, 1000000ull})
        {
            filter_config cfg;
            cfg.fpr = eps;
            auto const f = quotient_filter::create(cfg, 56, n);
            EXPECT_EQ(quotient_filter::planned_bytes(cfg, 56, n), f.stats().bytes) << n;
        }
}

// Below 64 MiB: filled with n keys and fitted, within 15% of the model.
TEST(QuotientSizing, FittedTablesWithinFifteenPercentOfTheModel)
{
    for (std::uint64_t const n : {100000ull, 400000ull, 2000000ull})
        for (double const eps : {1e-3, 1e-4})
        {
            filter_config cfg;
            cfg.fpr = eps;
            auto f = quotient_filter::create(
                cfg, key_bits, static_cast<std::uint64_t>(1.025 * static_cast<double>(n)));
            std::mt19937_64 rng{n};
            std::vector<std::uint64_t> keys(n);
            for (auto & k : keys)
                k = rng() >> 2;
            ASSERT_EQ(f.insert_batch(keys), insert_status::ok);
            f.fit();
            double const bits =
                8.0 * static_cast<double>(f.stats().bytes) / static_cast<double>(f.distinct());
            EXPECT_LE(bits, 1.15 * model_bits(eps, 0.9)) << n << " " << eps;
            EXPECT_LE(f.stats().load, 0.9);
        }
}

// A table designed for n keys takes them without growing, ends near max_load, answers every
// inserted key and keeps the FPR: for sizes that are and are not a power of two.
TEST(QuotientSizing, FilledToTheDesignWithoutGrowth)
{
    for (std::uint64_t const n : {60000ull, 65536ull, 100000ull, 300000ull})
    {
        filter_config cfg;
        cfg.fpr = 1e-3;
        auto f = quotient_filter::create(cfg, 56, n);
        std::uint64_t const slots = f.slots();
        std::mt19937_64 rng{n};
        std::vector<std::uint64_t> keys(n);
        for (auto & k : keys)
            k = rng() >> 8;
        ASSERT_EQ(f.insert_batch(keys), insert_status::ok);
        EXPECT_EQ(f.slots(), slots) << n;
        EXPECT_GT(f.stats().load, 0.85) << n;
        std::vector<std::uint64_t> out(n);
        f.count_batch(keys, out.data());
        EXPECT_EQ(std::count(out.begin(), out.end(), 0u), 0) << n;
        std::size_t false_hits = 0;
        for (std::size_t i = 0; i < n; ++i)
            false_hits += f.count(rng() >> 8) != 0;
        EXPECT_LE(static_cast<double>(false_hits) / static_cast<double>(n), 1.5e-3) << n;
        // fitted, it keeps every key and count
        std::map<std::uint64_t, std::uint64_t> before;
        f.for_each([&](std::uint64_t const v, std::uint64_t const c) { before[v] += c; });
        f.fit();
        std::map<std::uint64_t, std::uint64_t> after;
        f.for_each([&](std::uint64_t const v, std::uint64_t const c) { after[v] += c; });
        EXPECT_EQ(before, after) << n;
        EXPECT_LE(f.stats().load, f.max_load()) << n;
    }
}
