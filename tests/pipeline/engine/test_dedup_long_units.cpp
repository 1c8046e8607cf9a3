// dedup_speculator on units longer than its per-thread tables (a contig, a chromosome): the copies
// of a key inside such a unit are counted by sorting; the classes and the filter's counts must
// still be those of the read-by-read definition run on a second filter.
#include <ksieve/engine/dedup.hpp>

#include <ksieve/filters/common/sharded_filter.hpp>

#include <random>

#include <gtest/gtest.h>

namespace
{

constexpr std::uint32_t long_unit = 70000; // more k-mers than the speculator's tables take

struct batch_builder
{
    ksieve::batch_keys keys;
    void add_unit(std::vector<std::uint64_t> const & unit)
    {
        if (keys.offset.empty())
            keys.offset.push_back(0);
        keys.keys.insert(keys.keys.end(), unit.begin(), unit.end());
        keys.count.push_back(static_cast<std::uint32_t>(unit.size()));
        keys.offset.push_back(keys.keys.size());
    }
};

TEST(dedup_long_units, speculation_equals_the_serial_definition)
{
    for (unsigned const threads : {1u, 3u})
    {
        ksieve::filter_config cfg;
        cfg.kmer.k = 15;
        cfg.expected = std::size_t{1} << 20;
        cfg.shard_bits = 2;
        auto const fast = ksieve::make_filter(cfg);
        auto const slow = ksieve::make_filter(cfg);
        ASSERT_NE(fast->growable(), nullptr);
        std::mt19937_64 rng{77 + threads};
        auto fresh = [&] { return rng() & ((std::uint64_t{1} << 30) - 1); };
        std::vector<std::uint64_t> all; // every key used, for the comparison of counts
        auto take = [&](std::uint64_t const key)
        {
            all.push_back(key);
            return key;
        };
        ksieve::decision_rule const rule{1, 0.4, 0};
        for (int batch = 0; batch < 3; ++batch)
        {
            batch_builder b;
            // a novel long unit
            std::vector<std::uint64_t> first(long_unit);
            for (auto & key : first)
                key = take(fresh());
            b.add_unit(first);
            // the same k-mers but at the sampled positions (every 16th): predicted novel, known by
            // its counts, rolled back
            std::vector<std::uint64_t> again = first;
            for (std::size_t j = 0; j < again.size(); j += 16)
                again[j] = take(fresh());
            b.add_unit(again);
            // a unit that repeats its own first half (but at the sampled positions): its own copies
            // make it look known (47% > 40%); without them it is novel
            std::vector<std::uint64_t> twice(long_unit);
            for (std::size_t j = 0; j < long_unit / 2; ++j)
                twice[j] = twice[j + long_unit / 2] = take(fresh());
            for (std::size_t j = long_unit / 2; j < long_unit; j += 16)
                twice[j] = take(fresh());
            b.add_unit(twice);
            // short units in between: some copies of the long ones' k-mers
            for (int s = 0; s < 40; ++s)
            {
                std::vector<std::uint64_t> unit(100);
                for (auto & key : unit)
                    key = rng() % 2 == 0 ? first[rng() % first.size()] : take(fresh());
                b.add_unit(unit);
            }
            std::size_t const units = b.keys.units();
            std::vector<bool> expect(units);
            for (std::size_t u = 0; u < units; ++u)
            {
                std::uint32_t hits = 0;
                for (std::uint64_t p = b.keys.offset[u]; p < b.keys.offset[u + 1]; ++p)
                    hits += slow->count(b.keys.keys[p]) >= 1;
                expect[u] = rule.known(hits, b.keys.count[u]);
                if (!expect[u])
                {
                    for (std::uint64_t p = b.keys.offset[u]; p < b.keys.offset[u + 1]; ++p)
                        ASSERT_EQ(slow->insert(b.keys.keys[p]), ksieve::insert_status::ok);
                }
            }
            ASSERT_FALSE(expect[0]);
            ASSERT_TRUE(expect[1]);
            ASSERT_FALSE(expect[2]);
            ksieve::dedup_speculator speculator{threads};
            std::vector<ksieve::unit_result> got;
            speculator.run(*fast, b.keys, rule, got, "test");
            ASSERT_EQ(got.size(), units);
            for (std::size_t u = 0; u < units; ++u)
                ASSERT_EQ(got[u].known, expect[u]) << "batch " << batch << " unit " << u;
            EXPECT_GE(speculator.work().rolled_back_units, 1u);
            for (std::uint64_t const key : all)
                ASSERT_EQ(fast->count(key), slow->count(key)) << "batch " << batch;
            ASSERT_EQ(fast->stats().total_count, slow->stats().total_count);
        }
    }
}

} // namespace
