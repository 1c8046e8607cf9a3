// hit_set::lookup, each copy the CPU runs (the build's target, the x86-64-v3 copy, the aarch64 NEON
// copy), against an exact set: random keys, the key 0, and clusters of keys sharing a home bucket
// (full buckets, where the lookup walks on to the next buckets, also around the table's end).
#include <gtest/gtest.h>

#include <ksieve/engine/hit_set.hpp>

#include "../../../pipeline/engine/src/hit_set_kernels.hpp"
#include "../../filters/simd_fixture.hpp"

#include <bit>
#include <cstdint>
#include <random>
#include <unordered_set>
#include <vector>

namespace
{

class hit_set_isa : public ksieve::test::simd_copy_fixture<ksieve::detail::hit_set_kernel_tables>
{
};

// Keys whose home bucket (multiply-shift by 0x9E3779B97F4A7C15) is the same for every table size:
// the high bits of key * multiplier are those of `top`, built with the multiplier's inverse mod
// 2^64.
std::uint64_t key_with_product(std::uint64_t const product)
{
    constexpr std::uint64_t multiplier = 0x9E3779B97F4A7C15ull;
    std::uint64_t inv = multiplier;
    for (int i = 0; i < 6; ++i)
        inv *= 2 - multiplier * inv;
    return product * inv;
}

TEST_P(hit_set_isa, lookup_equals_an_exact_set)
{
    std::mt19937_64 rng{11};
    ksieve::hit_set set;
    std::unordered_set<std::uint64_t> oracle;
    std::vector<std::uint64_t> keys;
    for (int i = 0; i < 20000; ++i)
        keys.push_back(rng() >> (i % 3 == 0 ? 40 : 0));
    for (std::uint64_t j = 0; j < 40; ++j) // 40 keys of one home bucket: 5 buckets' worth
        keys.push_back(key_with_product((std::uint64_t{0x1234} << 48) | j));
    keys.push_back(0);
    ASSERT_TRUE(set.reserve(keys.size(), std::size_t{1} << 30));
    for (auto const k : keys)
    {
        set.insert(k);
        oracle.insert(k);
    }
    std::vector<std::uint64_t> queries = keys;
    for (int i = 0; i < 20000; ++i)
        queries.push_back(rng() >> (i % 3 == 0 ? 40 : 0));
    for (std::uint64_t j = 40; j < 80; ++j) // absent keys of the crowded bucket
        queries.push_back(key_with_product((std::uint64_t{0x1234} << 48) | j));
    std::vector<std::uint64_t> out(queries.size(), 99);
    set.lookup(queries.data(), queries.size(), out.data(), 5);
    for (std::size_t i = 0; i < queries.size(); ++i)
        ASSERT_EQ(out[i], oracle.contains(queries[i]) ? 5u : 0u)
            << "query " << i << " key " << queries[i];
}

// Keys homed at the last bucket, more than three buckets' worth: they overflow around the table's
// end into the first buckets. The lookup finds each of them and none of the absent keys homed at
// the last and the first buckets, as contains() does.
TEST_P(hit_set_isa, lookup_walks_full_buckets_around_the_end)
{
    ksieve::hit_set set;
    ASSERT_TRUE(set.reserve(1, std::size_t{1} << 30));
    std::size_t const buckets = set.bytes() / 64;
    auto const shift = 64 - static_cast<unsigned>(std::countr_zero(buckets));
    std::vector<std::uint64_t> present, absent;
    for (std::uint64_t j = 1; j <= 3 * ksieve::hit_set::bucket_keys + 3; ++j)
        present.push_back(key_with_product(((buckets - 1) << shift) + j));
    set.insert(present.data(), present.size());
    for (std::uint64_t const b : {buckets - 1, std::size_t{0}, std::size_t{1}, std::size_t{2}})
        for (std::uint64_t j = 1000; j < 1010; ++j)
            absent.push_back(key_with_product((b << shift) + j));
    std::vector<std::uint64_t> queries = present;
    queries.insert(queries.end(), absent.begin(), absent.end());
    std::vector<std::uint64_t> out(queries.size(), 99);
    set.lookup(queries.data(), queries.size(), out.data(), 3);
    for (std::size_t i = 0; i < queries.size(); ++i)
    {
        ASSERT_EQ(out[i], i < present.size() ? 3u : 0u) << "query " << i;
        ASSERT_EQ(set.contains(queries[i]), i < present.size()) << "query " << i;
    }
}

INSTANTIATE_TEST_SUITE_P(Isa, hit_set_isa, ::testing::ValuesIn(ksieve::test::all_simd_levels),
                         ksieve::test::simd_level_name);

} // namespace
