// The blocked Bloom filter's batch kernels, each copy (generic, x86-64-v3) forced through the
// filter library's dispatcher: against the scalar single-key operations for every k, and against
// the generic copy (byte-identical tables, identical answers) for serial and concurrent inserts.
#include <ksieve/filters/bloom/bloom.hpp>

#include "../../filters/src/bloom/bloom_blocked_kernels.hpp"
#include "simd_fixture.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <thread>
#include <vector>

using ksieve::blocked_bloom_filter;
using ksieve::detail::simd_level;

namespace
{

std::vector<std::uint64_t> random_keys(std::size_t const n, std::uint64_t const seed)
{
    std::mt19937_64 rng{seed};
    std::vector<std::uint64_t> keys(n);
    for (auto & k : keys)
        k = rng();
    return keys;
}

// The table and the batch answers of a filter of `blocks` blocks and k bits per key built from
// `keys` (batches of uneven size, so that the pipeline's head and tail are exercised) with the
// active kernels.
struct built
{
    std::vector<std::uint64_t> words;
    std::vector<std::uint64_t> answers;
};

built build(std::uint64_t const blocks, unsigned const k, std::span<std::uint64_t const> const keys,
            std::span<std::uint64_t const> const queries, bool const concurrent)
{
    blocked_bloom_filter f{blocks, k};
    for (std::size_t i = 0, step = 1; i < keys.size(); i += step, step = step * 3 % 1000 + 1)
    {
        auto const part = keys.subspan(i, std::min(step, keys.size() - i));
        if (concurrent)
            f.insert_batch_concurrent(part);
        else
            f.insert_batch(part);
    }
    built b;
    b.words.assign(f.words().begin(), f.words().end());
    b.answers.resize(queries.size());
    f.count_batch(queries, b.answers.data());
    return b;
}

class BloomIsaPath : public ksieve::test::simd_copy_fixture<ksieve::detail::bloom_kernel_tables>
{
};

} // namespace

INSTANTIATE_TEST_SUITE_P(Isa, BloomIsaPath, ::testing::ValuesIn(ksieve::test::all_simd_levels),
                         ksieve::test::simd_level_name);

// Every k (the unrolled kernels up to 16, the runtime-k kernel above): the batch operations of the
// forced copy agree with the scalar single-key insert and contains, which no copy changes.
TEST_P(BloomIsaPath, BatchesMatchSingleKeyOperationsForEveryK)
{
    auto const keys = random_keys(3000, 7);
    auto const queries = random_keys(6000, 8);
    for (unsigned k = 1; k <= blocked_bloom_filter::max_hashes; ++k)
    {
        blocked_bloom_filter single{64, k};
        for (std::uint64_t const key : keys)
            single.insert(key);
        auto const batch = build(64, k, keys, queries, false);
        auto const atomic = build(64, k, keys, queries, true);
        ASSERT_TRUE(std::equal(batch.words.begin(), batch.words.end(), single.words().begin()))
            << "k " << k;
        ASSERT_EQ(batch.words, atomic.words) << "k " << k;
        for (std::size_t i = 0; i < queries.size(); ++i)
            ASSERT_EQ(batch.answers[i], single.count(queries[i])) << "k " << k << " query " << i;
        for (std::uint64_t const key : keys)
            ASSERT_EQ(single.count(key), 1u);
        blocked_bloom_filter one_by_one{64, k};
        for (std::uint64_t const key : keys)
            one_by_one.insert_concurrent(key);
        ASSERT_TRUE(std::equal(batch.words.begin(), batch.words.end(), one_by_one.words().begin()));
    }
}

// Lookups of whole keys across the shards of a sharded filter (count_sharded, one pipeline) give
// each shard's own answer for the key's local part: shard counts 1 to 64 of different sizes, key
// widths with and without a full 64-bit key, k across the unrolled and vector paths; and shards of
// different k (one key at a time). Half the queries were inserted (answer 1 whatever the false
// positives).
TEST_P(BloomIsaPath, LookupsAcrossShardsEqualEachShardsAnswers)
{
    std::mt19937_64 rng{21};
    for (unsigned const key_bits : {40u, 62u, 64u})
        for (unsigned const shard_bits : {0u, 1u, 3u, 6u})
            for (unsigned const k : {1u, 7u, 16u, 17u, 25u, 0u}) // 0: k differs between shards
            {
                std::vector<blocked_bloom_filter> shards;
                for (std::size_t s = 0; s < (std::size_t{1} << shard_bits); ++s)
                    shards.emplace_back(std::uint64_t{20 + 7 * s},
                                        k != 0 ? k : 3 + static_cast<unsigned>(s % 5));
                unsigned const local_bits = key_bits - shard_bits;
                auto const whole = [&](std::uint64_t const x)
                { return key_bits == 64 ? x : x >> (64 - key_bits); };
                auto const local = [&](std::uint64_t const key)
                { return local_bits == 64 ? key : key & ((std::uint64_t{1} << local_bits) - 1); };
                auto const shard = [&](std::uint64_t const key) {
                    return shard_bits == 0 ? std::size_t{0}
                                           : static_cast<std::size_t>(key >> local_bits);
                };
                std::vector<std::uint64_t> queries;
                for (int i = 0; i < 4000; ++i)
                {
                    std::uint64_t const key = whole(rng());
                    if (i % 2 == 0)
                        shards[shard(key)].insert(local(key));
                    queries.push_back(key);
                }
                std::vector<std::uint64_t> got(queries.size(), 7);
                blocked_bloom_filter::count_sharded(shards, key_bits, shard_bits, queries,
                                                    got.data());
                for (std::size_t i = 0; i < queries.size(); ++i)
                {
                    ASSERT_EQ(got[i], shards[shard(queries[i])].count(local(queries[i])))
                        << "key bits " << key_bits << " shard bits " << shard_bits << " k " << k
                        << " query " << i;
                    if (i % 2 == 0)
                    {
                        ASSERT_EQ(got[i], 1u);
                    }
                }
            }
}

// Every copy builds the generic copy's tables and gives its answers, also with concurrent
// inserters.
TEST(BloomIsa, CopiesBuildIdenticalTables)
{
    auto const levels = ksieve::test::distinct_copies(ksieve::detail::bloom_kernel_tables);
    if (levels.size() < 2)
        GTEST_SKIP() << "one copy only";
    auto const keys = random_keys(200000, 11);
    auto const queries = random_keys(100000, 12);
    for (unsigned const k : {1u, 6u, 9u, 12u, 17u, 32u})
    {
        std::vector<built> copies;
        for (simd_level const level : levels)
        {
            ksieve::detail::force_simd_level(level);
            copies.push_back(build(4099, k, keys, queries, false));
            blocked_bloom_filter shared{4099, k};
            std::vector<std::thread> threads;
            for (std::size_t t = 0; t < 4; ++t)
                threads.emplace_back(
                    [&, t]
                    {
                        std::span<std::uint64_t const> const all{keys};
                        shared.insert_batch_concurrent(
                            all.subspan(t * keys.size() / 4, keys.size() / 4));
                    });
            for (auto & th : threads)
                th.join();
            EXPECT_TRUE(std::equal(copies.back().words.begin(), copies.back().words.end(),
                                   shared.words().begin()))
                << "k " << k << ", concurrent inserts differ from serial ones";
        }
        ksieve::detail::reset_simd_level();
        for (std::size_t i = 1; i < copies.size(); ++i)
        {
            EXPECT_TRUE(copies[0].words == copies[i].words)
                << "k " << k << ": tables differ between the generic and the "
                << ksieve::test::simd_level_label(levels[i]) << " copy";
            EXPECT_TRUE(copies[0].answers == copies[i].answers) << "k " << k;
        }
    }
}
