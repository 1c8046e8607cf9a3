// prefiltered_filter against an exact multiset: a k-mer enters the main filter on its second
// sighting, so its main count is its occurrences minus one, and the combined count is its
// occurrences (plus one when the prefilter wrongly held it before its first sighting).
#include <ksieve/filters/quotient/prefiltered_filter.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>

#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

namespace
{

std::unique_ptr<ksieve::prefiltered_filter> make_prefiltered(double const fpr,
                                                             std::uint64_t const prefilter_bytes,
                                                             unsigned const shard_bits = 2)
{
    ksieve::filter_config cfg;
    cfg.kmer.k = 15;
    cfg.fpr = fpr;
    cfg.expected = 4096;
    cfg.shard_bits = shard_bits;
    return std::make_unique<ksieve::prefiltered_filter>(ksieve::make_filter(cfg), prefilter_bytes);
}

// Rounds of additions (batched, in order, and single), removals of some of them, and commits; after
// every round each key's counts equal the model's. Exact main filter (fpr 0: collision keys are the
// keys), so the model is a plain multiset; a small prefilter makes false positives happen, and the
// model learns them from prefilter_holds() before each key's first sighting (the prefilter only
// changes in commits).
TEST(prefiltered_filter, counts_equal_an_exact_multiset_with_the_prefilters_false_positives)
{
    for (std::uint64_t const prefilter_bytes : {std::uint64_t{1024}, std::uint64_t{1} << 22})
    {
        // the small prefilter: one shard of 1 KiB for 5000 keys
        auto f = make_prefiltered(0.0, prefilter_bytes, prefilter_bytes == 1024 ? 0 : 2);
        std::mt19937_64 rng{7};
        std::vector<std::uint64_t> pool(5000);
        for (auto & k : pool)
            k = rng() & ((std::uint64_t{1} << 30) - 1);
        std::map<std::uint64_t, std::uint64_t> occurrences,
            bonus; // bonus: 1 if held before first sighting
        std::uint64_t false_positives = 0, once = 0;
        for (int round = 0; round < 60; ++round)
        {
            // the keys of this round, partitioned by shard, in order
            std::vector<std::vector<std::uint64_t>> by_shard(f->num_shards());
            std::set<std::uint64_t> in_round;
            std::size_t const n = 1 + rng() % 400;
            for (std::size_t i = 0; i < n; ++i)
            {
                std::uint64_t const key = pool[rng() % (round < 30 ? pool.size() : 300)];
                if (occurrences[key] == 0 && in_round.insert(key).second)
                {
                    bonus[key] = f->prefilter_holds(key) ? 1 : 0;
                    false_positives += bonus[key];
                }
                by_shard[f->shard_of(key)].push_back(key);
            }
            for (std::size_t s = 0; s < by_shard.size(); ++s)
            {
                std::vector<std::uint64_t> local, old(by_shard[s].size());
                for (std::uint64_t const key : by_shard[s])
                    local.push_back(f->local_key(key));
                ASSERT_EQ(f->add_batch(s, local, old.data()), ksieve::insert_status::ok);
                for (std::size_t i = 0; i < by_shard[s].size(); ++i)
                {
                    std::uint64_t const key = by_shard[s][i];
                    ASSERT_EQ(old[i], occurrences[key] + bonus[key]) << "round " << round;
                    ++occurrences[key];
                }
            }
            // a few removals of keys added in this round, then single insertions back
            for (std::size_t s = 0; s < by_shard.size(); ++s)
                for (std::size_t i = 0; i < by_shard[s].size(); i += 7)
                {
                    std::uint64_t const key = by_shard[s][i];
                    ASSERT_TRUE(f->remove(key));
                    --occurrences[key];
                    if (i % 14 == 0)
                    {
                        ASSERT_EQ(f->insert(key), ksieve::insert_status::ok);
                        ++occurrences[key];
                    }
                }
            for (std::size_t s = 0; s < f->num_shards(); ++s)
                f->commit_shard(s);
            for (auto const & [key, c] : occurrences)
            {
                std::uint64_t const expect = c + bonus[key];
                ASSERT_EQ(f->count(key), c == 0 ? (f->prefilter_holds(key) ? 1u : 0u) : expect)
                    << key;
                // the main filter: the occurrences after the first (from the first with a false
                // positive)
                ASSERT_EQ(f->main().count(key), c == 0 ? 0u : expect - 1) << key;
            }
        }
        for (auto const & [key, c] : occurrences)
            once += c == 1;
        EXPECT_GT(once, 500u); // k-mers seen once stayed out of the main filter
        if (prefilter_bytes == 1024)
        {
            EXPECT_GT(false_positives, 100u); // the small prefilter: false positives were exercised
        }
        else
        {
            EXPECT_LT(false_positives, 5u);
        }
        // count_keys (one pass across shards) agrees with count()
        std::vector<std::uint64_t> keys, out;
        for (auto const & [key, c] : occurrences)
            keys.push_back(key);
        out.resize(keys.size());
        ASSERT_TRUE(f->count_keys(keys, out.data()));
        for (std::size_t i = 0; i < keys.size(); ++i)
            ASSERT_EQ(out[i], f->count(keys[i]));
    }
}

// Inside a round: the first sighting of a key the prefilter does not hold is pending, the others
// are in the main filter; removals take both; a removal of more than was added fails.
TEST(prefiltered_filter, pending_counts_and_failed_removals)
{
    auto f = make_prefiltered(0.0, std::uint64_t{1} << 20, 0);
    std::uint64_t const a = 12345, b = 67890;
    EXPECT_EQ(f->count(a), 0u);
    EXPECT_FALSE(f->remove(a));
    ASSERT_EQ(f->insert(a), ksieve::insert_status::ok);
    ASSERT_EQ(f->insert(a), ksieve::insert_status::ok);
    EXPECT_EQ(f->count(a), 2u);
    EXPECT_EQ(f->main().count(a), 1u); // the second sighting; the first is pending
    EXPECT_FALSE(f->remove(a, 3));
    EXPECT_TRUE(f->remove(a, 2)); // both, in one round
    EXPECT_EQ(f->count(a), 0u);
    ASSERT_EQ(f->insert(a, 2), ksieve::insert_status::ok);
    f->commit_shard(0);
    EXPECT_EQ(f->count(a), 2u);
    EXPECT_EQ(f->main().count(a), 1u);
    ASSERT_EQ(f->insert(b), ksieve::insert_status::ok);
    f->commit_shard(0);
    EXPECT_EQ(f->count(b), 1u);
    EXPECT_EQ(f->main().count(b), 0u); // seen once: only in the prefilter
    EXPECT_EQ(f->prefiltered(), 2u);
    EXPECT_TRUE(f->remove(a));
    EXPECT_EQ(f->count(a), 1u);
    EXPECT_THROW(f->save("unused.ksf"), ksieve::error);
}

} // namespace
