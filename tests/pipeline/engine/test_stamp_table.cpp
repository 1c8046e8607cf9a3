// Unit tests of detail::stamp_table, dedup's counting hash table, against std::unordered_map: the
// counts of random keys (colliding home slots included) across many resets of different sizes, the
// capacity rule of reset(), and the hash overloads.
#include <ksieve/engine/stamp_table.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

namespace
{

using ksieve::detail::stamp_table;

// One table through 400 epochs of random sizes (growing, shrinking, empty), each filled to its
// reset() bound with counts added through both overloads of at(), and read through both of find():
// every key the map holds has its count, and keys of earlier epochs and never-seen keys read 0.
TEST(stamp_table, counts_equal_a_map_across_resets)
{
    std::mt19937_64 rng{1234};
    stamp_table t;
    std::vector<std::uint64_t> previous; // keys of the epoch before
    std::size_t found_stale = 0;
    for (int epoch = 0; epoch < 400; ++epoch)
    {
        std::size_t const need = epoch % 50 == 49 ? 0 : rng() % (epoch % 7 == 0 ? 5000 : 200);
        t.reset(need);
        std::unordered_map<std::uint64_t, std::uint32_t> oracle;
        // a small universe (keys repeat), key 0 included: it must not read as the empty slot
        std::uint64_t const universe = 1 + need + need / 2;
        std::vector<std::uint64_t> pool;
        for (std::uint64_t i = 0; i < universe; ++i)
            pool.push_back(i == 0 ? 0 : rng());
        std::size_t distinct = 0;
        for (std::size_t op = 0; op < 4 * need; ++op)
        {
            std::uint64_t const key = pool[rng() % pool.size()];
            if (!oracle.contains(key))
            {
                if (distinct == need)
                    continue; // the precondition: room for `need` keys
                ++distinct;
            }
            std::uint32_t const add = 1 + static_cast<std::uint32_t>(rng() % 3);
            if (op % 2 == 0)
                t.at(key) += add;
            else
                t.at(key, stamp_table::hash_of(key)) += add;
            oracle[key] += add;
        }
        for (auto const & [key, count] : oracle)
        {
            ASSERT_EQ(t.find(key), count) << "epoch " << epoch;
            ASSERT_EQ(t.find(key, stamp_table::hash_of(key)), count);
        }
        for (std::uint64_t const key : previous)
            if (!oracle.contains(key))
            {
                ASSERT_EQ(t.find(key), 0u) << "a key of the epoch before, epoch " << epoch;
                ++found_stale;
            }
        for (int i = 0; i < 100; ++i)
        {
            std::uint64_t const key = rng();
            if (!oracle.contains(key))
            {
                ASSERT_EQ(t.find(key), 0u);
            }
        }
        // at() of a key that is present returns its count, without inserting a copy
        if (!oracle.empty())
        {
            std::uint64_t const key = oracle.begin()->first;
            ASSERT_EQ(t.at(key), oracle.begin()->second);
            ASSERT_EQ(t.find(key), oracle.begin()->second);
        }
        previous.clear();
        for (auto const & entry : oracle)
            previous.push_back(entry.first);
    }
    EXPECT_GT(found_stale, 10000u) << "stale entries were asked for";
}

// Keys that all share one home slot (found by search at the table's capacity) probe past each
// other: each keeps its own count, wrapping around the end of the table.
TEST(stamp_table, keys_of_one_home_slot_keep_their_own_counts)
{
    stamp_table t;
    t.reset(32); // capacity 64
    ASSERT_EQ(t.capacity(), 64u);
    std::size_t const mask = t.capacity() - 1;
    // the last slot as home: the probes wrap to slot 0 and on
    std::vector<std::uint64_t> keys;
    for (std::uint64_t key = 0; keys.size() < 32; ++key)
        if ((stamp_table::hash_of(key) & mask) == mask)
            keys.push_back(key);
    for (std::size_t i = 0; i < keys.size(); ++i)
        t.at(keys[i]) += static_cast<std::uint32_t>(i + 1);
    for (std::size_t i = 0; i < keys.size(); ++i)
        EXPECT_EQ(t.find(keys[i]), i + 1) << "key " << i;
    // a key of the same home slot that was never added reads 0 (its probe passes all 32)
    std::uint64_t other = keys.back() + 1;
    while ((stamp_table::hash_of(other) & mask) != mask)
        ++other;
    EXPECT_EQ(t.find(other), 0u);
    t.reset(32);
    for (std::uint64_t const key : keys)
        EXPECT_EQ(t.find(key), 0u);
}

// reset(need, min_capacity): the smallest power of two that is at least min_capacity and 2 x need
// (oracle: a loop over the powers of two), smaller again after a larger reset.
TEST(stamp_table, capacity_is_the_smallest_power_of_two_of_the_bound)
{
    stamp_table t;
    // (minimums that are not powers of two round up: a capacity of 48 would leave slots that no
    // probe reaches)
    for (std::size_t const min_capacity : {std::size_t{1}, std::size_t{5}, std::size_t{48},
                                           std::size_t{64}, std::size_t{100}, std::size_t{1024}})
        for (std::size_t const need :
             {std::size_t{0}, std::size_t{1}, std::size_t{31}, std::size_t{32}, std::size_t{33},
              std::size_t{600}, std::size_t{100000}, std::size_t{5}})
        {
            t.reset(need, min_capacity);
            std::size_t expect = 1;
            while (expect < min_capacity || expect < 2 * need)
                expect *= 2;
            EXPECT_EQ(t.capacity(), expect) << "need " << need << " min " << min_capacity;
            EXPECT_TRUE(std::has_single_bit(t.capacity()));
        }
}

} // namespace
