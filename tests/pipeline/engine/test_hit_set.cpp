#include <gtest/gtest.h>

#include <ksieve/engine/hit_set.hpp>

#include <bit>
#include <cstdint>
#include <random>
#include <unordered_set>
#include <vector>

namespace
{

// The multiplicative inverse of the odd hash multiplier mod 2^64 (Newton's iteration), to build
// keys with a chosen home bucket.
constexpr std::uint64_t multiplier = 0x9E3779B97F4A7C15ull;
std::uint64_t inverse(std::uint64_t const a)
{
    std::uint64_t x = a; // correct to 3 bits
    for (int i = 0; i < 6; ++i)
        x *= 2 - a * x;
    return x;
}

// Membership, lookup() and growth against std::unordered_set: random keys, the key 0, repeats.
TEST(hit_set, equals_an_exact_set)
{
    std::mt19937_64 rng{7};
    ksieve::hit_set set;
    std::unordered_set<std::uint64_t> oracle;
    std::vector<std::uint64_t> batch, queries, out;
    for (int round = 0; round < 40; ++round)
    {
        batch.clear();
        std::size_t const n = 1 + rng() % 5000;
        for (std::size_t i = 0; i < n; ++i)
            batch.push_back(rng() % 3 == 0 && !oracle.empty() ? *oracle.begin()
                                                              : (rng() % 50 == 0 ? 0 : rng()));
        ASSERT_TRUE(set.reserve(batch.size(), std::size_t{1} << 30));
        set.insert(batch.data(), batch.size());
        oracle.insert(batch.begin(), batch.end());
        ASSERT_EQ(set.size(), oracle.size());
        EXPECT_LE(static_cast<double>(set.size()),
                  ksieve::hit_set::max_load * static_cast<double>(set.bytes() / 8) + 1);
        queries.clear();
        for (std::size_t i = 0; i < 3000; ++i)
            queries.push_back(i % 2 == 0 ? batch[rng() % batch.size()]
                                         : (i % 301 == 1 ? 0 : rng()));
        out.assign(queries.size(), 99);
        set.lookup(queries.data(), queries.size(), out.data(), 7);
        for (std::size_t i = 0; i < queries.size(); ++i)
        {
            bool const in = oracle.count(queries[i]) != 0;
            ASSERT_EQ(set.contains(queries[i]), in) << queries[i];
            ASSERT_EQ(out[i], in ? 7u : 0u) << queries[i];
        }
    }
}

// Keys that all have the same home bucket fill it and overflow into the next ones, wrapping around
// from the last bucket to the first; every one stays found, and keys of other buckets are not
// confused with them.
TEST(hit_set, full_buckets_overflow_and_wrap_around)
{
    ksieve::hit_set set;
    ASSERT_TRUE(set.reserve(1, std::size_t{1} << 30));
    std::size_t const buckets = set.bytes() / 64;
    unsigned const shift = 64 - static_cast<unsigned>(std::countr_zero(buckets));
    std::uint64_t const inv = inverse(multiplier);
    ASSERT_EQ(inv * multiplier, 1u);
    // home(key) = (key * multiplier) >> shift = last bucket, for hashes (last << shift) + j
    std::vector<std::uint64_t> same_home;
    for (std::uint64_t j = 1; j <= 3 * ksieve::hit_set::bucket_keys + 3; ++j)
        same_home.push_back((((buckets - 1) << shift) + j) * inv);
    set.insert(same_home.data(), same_home.size());
    for (std::uint64_t const key : same_home)
        EXPECT_TRUE(set.contains(key));
    // absent keys homed at the last bucket and at the first ones (where the overflow landed)
    for (std::uint64_t b : {buckets - 1, std::size_t{0}, std::size_t{1}, std::size_t{2}})
        for (std::uint64_t j = 1000; j < 1010; ++j)
            EXPECT_FALSE(set.contains(((b << shift) + j) * inv));
    std::vector<std::uint64_t> out(same_home.size());
    set.lookup(same_home.data(), same_home.size(), out.data(), 1);
    for (std::uint64_t const v : out)
        EXPECT_EQ(v, 1u);
    // growth re-homes them; still all found
    ASSERT_TRUE(set.reserve(buckets * ksieve::hit_set::bucket_keys, std::size_t{1} << 30));
    EXPECT_GT(set.bytes() / 64, buckets);
    for (std::uint64_t const key : same_home)
        EXPECT_TRUE(set.contains(key));
    EXPECT_EQ(set.size(), same_home.size());
}

// reserve() beyond the memory cap refuses and changes nothing.
TEST(hit_set, reserve_beyond_the_cap_changes_nothing)
{
    ksieve::hit_set set;
    ASSERT_TRUE(set.reserve(100, std::size_t{1} << 20));
    std::size_t const bytes = set.bytes();
    std::vector<std::uint64_t> keys{1, 2, 3, 0};
    set.insert(keys.data(), keys.size());
    EXPECT_FALSE(set.reserve(std::size_t{1} << 20, bytes));
    EXPECT_EQ(set.bytes(), bytes);
    EXPECT_EQ(set.size(), 4u);
    for (std::uint64_t const key : keys)
        EXPECT_TRUE(set.contains(key));
    EXPECT_FALSE(set.contains(4));
    EXPECT_TRUE(set.reserve(std::size_t{1} << 10, bytes)); // fits: no growth needed
    EXPECT_EQ(set.bytes(), bytes);
    // a doubling needs the old and the new table at once: 3 x bytes, not 2 x
    std::size_t const twice_the_keys =
        static_cast<std::size_t>(ksieve::hit_set::max_load * static_cast<double>(bytes / 8));
    EXPECT_FALSE(set.reserve(twice_the_keys, 2 * bytes));
    EXPECT_EQ(set.bytes(), bytes);
    EXPECT_TRUE(set.reserve(twice_the_keys, 3 * bytes));
    EXPECT_EQ(set.bytes(), 2 * bytes);
    for (std::uint64_t const key : keys)
        EXPECT_TRUE(set.contains(key));
}

// An empty set answers no for every key, the key 0 included.
TEST(hit_set, empty_set_holds_nothing)
{
    ksieve::hit_set const set;
    std::vector<std::uint64_t> keys{0, 1, ~std::uint64_t{0}}, out(3, 5);
    set.lookup(keys.data(), keys.size(), out.data(), 9);
    for (std::size_t i = 0; i < keys.size(); ++i)
    {
        EXPECT_FALSE(set.contains(keys[i]));
        EXPECT_EQ(out[i], 0u);
    }
}

} // namespace
