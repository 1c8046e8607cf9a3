// Unit tests of dedup within a memory budget (dedup_budget through kmer_deduplicator) against the
// serial definition on a hash sample: once the budget samples the key space at level L, the oracle
// (std::unordered_map of the naive canonical k-mers) keeps only keys with L zero bits at the
// filter's sample_shift(), drops the others from its counts, and decides each read on its sampled
// k-mers by the rule with kmer_deduplicator::sample_margin. Until dedup forgets beyond the deepest
// sample (more fingerprints forgotten than the sample dropped), classes and counts must be the
// oracle's; throughout, the filter's tables take at most half the budget.
#include <ksieve/engine/kmer_dedup.hpp>

#include "naive_kmers.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace
{

using ksieve_test::naive_keys;

constexpr unsigned k = 21;

TEST(dedup_sampling, decisions_equal_the_serial_definition_on_the_sample)
{
    std::mt19937_64 rng{81};
    std::string const genome = ksieve_test::random_dna(rng, 60000);
    std::size_t exact_batches = 0, sampled_batches = 0, beyond = 0;
    for (std::uint64_t const budget :
         {std::uint64_t{4} << 20, std::uint64_t{256} << 10, std::uint64_t{64} << 10})
        for (bool const exact_hits : {false, true})
        {
            SCOPED_TRACE(testing::Message() << "budget " << budget << " exact_hits " << exact_hits);
            ksieve::filter_config cfg;
            cfg.kmer.k = k;
            cfg.fpr = 0;
            cfg.shard_bits = 2;
            auto const filter = ksieve::make_filter(cfg);
            ASSERT_NE(filter->growable(), nullptr);
            unsigned const shift = filter->growable()->sample_shift();
            ksieve::decision_rule const rule{1, 0.5, 0};
            ksieve::kmer_deduplicator dedup{
                *filter, filter->kmer(), 2, {rule, exact_hits, 0, "test", budget}};
            ASSERT_TRUE(dedup.budget().limited());
            std::unordered_map<std::uint64_t, std::uint64_t> counts;
            unsigned level = 0;
            std::uint64_t dropped = 0, units = 0, first_sampled = 0;
            auto sampled = [&](std::uint64_t const key)
            { return ((key >> shift) & ((std::uint64_t{1} << level) - 1)) == 0; };
            for (int batch = 0; batch < 11; ++batch)
            {
                std::vector<std::string> reads;
                for (int i = 0; i < 400; ++i)
                {
                    // mostly new sequence (the filter fills), some repeats
                    std::string r = rng() % 4 == 0
                                        ? genome.substr(rng() % (genome.size() - 150), 150)
                                        : ksieve_test::random_dna(rng, 150);
                    ksieve_test::substitute(rng, r, rng() % 3);
                    reads.push_back(std::move(r));
                }
                ksieve::work_item item;
                ksieve_test::fill(item.r1, reads);
                dedup.decide(item);
                // each shard within half its share of the budget
                ASSERT_LE(filter->stats().bytes, budget / 2) << "batch " << batch;
                ASSERT_GE(dedup.budget().level(), level) << "a sample only ever deepens";
                if (dedup.budget().level() > level)
                {
                    level = dedup.budget().level();
                    std::erase_if(counts,
                                  [&](auto const & entry)
                                  {
                                      bool const out = !sampled(entry.first);
                                      dropped += out;
                                      return out;
                                  });
                }
                if (level > 0 && first_sampled == 0)
                    first_sampled = units + 1;
                units += reads.size();
                if (dedup.budget().forgotten() != dropped)
                { // forgetting the lowest counts: the oracle no longer applies
                    ASSERT_GT(dedup.budget().forgotten(), dropped);
                    EXPECT_EQ(dedup.budget().level(), ksieve::dedup_budget::max_level);
                    EXPECT_NE(dedup.forgetting_from_unit(), 0u);
                    ++beyond;
                    break;
                }
                EXPECT_EQ(dedup.forgetting_from_unit(), first_sampled) << "batch " << batch;
                ksieve::decision_rule sample_rule = rule;
                sample_rule.sample_margin =
                    level > 0 ? ksieve::kmer_deduplicator::sample_margin : 0;
                for (std::size_t u = 0; u < reads.size(); ++u)
                {
                    std::uint32_t n = 0, hits = 0;
                    std::vector<std::uint64_t> mine;
                    for (std::uint64_t const key : naive_keys(reads[u], k))
                        if (sampled(key))
                        {
                            ++n;
                            mine.push_back(key);
                            auto const it = counts.find(key);
                            hits += it != counts.end() && it->second >= rule.min_count;
                        }
                    bool const known = sample_rule.known(hits, n);
                    if (!known)
                        for (std::uint64_t const key : mine)
                            ++counts[key];
                    ASSERT_EQ(item.results[u].kmers, n) << "batch " << batch << " unit " << u;
                    ASSERT_EQ(item.results[u].known, known) << "batch " << batch << " unit " << u;
                }
                for (auto const & [key, count] : counts)
                    ASSERT_EQ(filter->count(key), count) << "batch " << batch;
                (level > 0 ? sampled_batches : exact_batches) += 1;
            }
        }
    EXPECT_GT(exact_batches, 2u);
    EXPECT_GT(sampled_batches, 4u);
    EXPECT_GE(beyond, 1u);
}

} // namespace
