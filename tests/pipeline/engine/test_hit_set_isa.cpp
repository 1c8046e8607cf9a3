// hit_set::lookup, each copy the CPU runs (the build's target, the x86-64-v3 copy, the aarch64 NEON
// copy), against an exact set: random keys, the key 0, and clusters of keys sharing a
// home bucket (full buckets, where the lookup falls back to contains()).
#include <gtest/gtest.h>

#include <ksieve/engine/hit_set.hpp>

#include "../../../pipeline/engine/src/hit_set_kernels.hpp"
#include "../../filters/simd_fixture.hpp"

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

INSTANTIATE_TEST_SUITE_P(Isa, hit_set_isa, ::testing::ValuesIn(ksieve::test::all_simd_levels),
                         ksieve::test::simd_level_name);

} // namespace
