// Unit tests of early_classifier (early-decision classify) against a naive classifier over exact
// k-mer counts (std::unordered_map of the naive canonical k-mers of the filters' genomes; exact
// quotient filters): every unit's class and k-mer count equal the naive ones, and its hits are a
// lower bound of the naive hits that decides it by the rule. Batches mix short reads, noisy long
// reads (several rounds of lookups), many chunks, and records of more than window_kmers k-mers
// (windows), on one thread and three.
#include <ksieve/engine/early_classify.hpp>
#include <ksieve/engine/read_classifier.hpp>

#include "naive_kmers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace
{

using ksieve::unit_result;
using ksieve_test::naive_keys;
using ksieve_test::random_dna;

constexpr unsigned k = 25;
constexpr std::size_t long_bases = ksieve::early_classifier::window_kmers + 9000;

using count_map = std::unordered_map<std::uint64_t, std::uint64_t>;

class early_classify_test : public ::testing::Test
{
protected:
    void SetUp() override
    {
        std::mt19937_64 rng{23};
        genomes_ = {random_dna(rng, long_bases + 20000), random_dna(rng, 40000)};
        genomes_[1].replace(30000, 5000, genomes_[1].substr(1000, 5000)); // counts of 2
        for (std::size_t g = 0; g < genomes_.size(); ++g)
        {
            for (std::uint64_t const key : naive_keys(genomes_[g], k))
                ++counts_[g][key];
            ksieve::filter_config cfg;
            cfg.kmer.k = k;
            cfg.fpr = 0; // exact
            cfg.shard_bits = 3;
            filters_[g] = ksieve::make_filter(cfg);
            for (auto const & [key, count] : counts_[g])
                ASSERT_EQ(filters_[g]->insert(key, count), ksieve::insert_status::ok);
        }
        kmer_.k = k;
    }

    // The naive hits of a unit (largest count over the first `nf` filters, >= min_count).
    std::uint32_t naive_hits(std::vector<std::uint64_t> const & keys, std::size_t const nf,
                             std::uint64_t const min_count) const
    {
        std::uint32_t hits = 0;
        for (std::uint64_t const key : keys)
        {
            std::uint64_t most = 0;
            for (std::size_t f = 0; f < nf; ++f)
                if (auto const it = counts_[f].find(key); it != counts_[f].end())
                    most = std::max(most, it->second);
            hits += most >= min_count;
        }
        return hits;
    }

    // Short reads (0 to 250 bases, 0 to 12 substitutions), random reads, noisy long reads (2 to
    // 12 kbp, 4 to 16% substitutions), and with `long_records` three records of more than
    // window_kmers k-mers: a genome's piece with few errors, a random one, and one half each.
    std::vector<std::string> reads(std::mt19937_64 & rng, std::size_t const n,
                                   bool const long_records) const
    {
        std::vector<std::string> out;
        for (std::size_t i = 0; i < n; ++i)
        {
            bool const noisy = i % 40 == 3;
            std::size_t const len =
                noisy ? 2000 + rng() % 10000 : (i % 50 == 0 ? rng() % (k + 1) : 30 + rng() % 221);
            std::string r;
            if (i % 8 == 7)
                r = random_dna(rng, len);
            else
            {
                std::string const & g = genomes_[rng() % 2];
                r = g.substr(rng() % (g.size() - len), len);
                ksieve_test::substitute(rng, r, noisy ? len * (4 + rng() % 13) / 100 : rng() % 13);
            }
            if (i % 9 == 4 && !r.empty())
                r[rng() % r.size()] = 'N';
            out.push_back(std::move(r));
        }
        if (long_records)
        {
            std::string near = genomes_[0].substr(rng() % 20000, long_bases);
            ksieve_test::substitute(rng, near, 3000);
            std::string half = genomes_[0].substr(0, long_bases / 2) +
                               random_dna(rng, long_bases - long_bases / 2);
            out[1] = std::move(near);
            out[n / 2] = random_dna(rng, long_bases);
            out[n - 1] = std::move(half);
        }
        return out;
    }

    std::vector<std::string> genomes_;
    std::array<count_map, 2> counts_;
    std::array<std::unique_ptr<ksieve::any_filter>, 2> filters_;
    ksieve::kmer_params kmer_;
};

TEST_F(early_classify_test, classes_equal_the_naive_classifier)
{
    std::mt19937_64 rng{8};
    std::array const rules{ksieve::decision_rule{1, 0.5, 0},  ksieve::decision_rule{2, 0.3, 0},
                           ksieve::decision_rule{1, 0.8, 30}, ksieve::decision_rule{1, 1e-9, 2},
                           ksieve::decision_rule{1, 1.0, 0},  ksieve::decision_rule{1, 0.45, 0}};
    std::size_t known = 0, novel = 0, stopped_early = 0, long_known = 0, long_novel = 0;
    for (unsigned const threads : {1u, 3u})
    {
        ksieve::batch_engine const engine{kmer_, threads};
        ksieve::early_classifier classifier{engine};
        std::vector<unit_result> results(5000, unit_result{7, 7, true}); // stale: overwritten
        for (int batch = 0; batch < 6; ++batch)
        {
            ksieve::decision_rule const & rule = rules[static_cast<std::size_t>(batch)];
            bool const pairs = batch % 2 == 1;
            bool const long_records = batch >= 4;
            std::size_t const nf = batch % 3 == 2 ? 1 : 2;
            std::vector<ksieve::any_filter const *> filters;
            for (std::size_t f = 0; f < nf; ++f)
                filters.push_back(filters_[f].get());
            std::size_t const n = 600 + rng() % 1200; // several chunks
            std::vector<std::string> const r1 = reads(rng, n, long_records);
            std::vector<std::string> const r2 = reads(rng, n, false);
            ksieve::io::record_batch b1, b2;
            ksieve_test::fill(b1, r1);
            if (pairs)
                ksieve_test::fill(b2, r2);
            classifier.classify(b1, &b2, filters, rule, results);
            ASSERT_EQ(results.size(), n);
            for (std::size_t u = 0; u < n; ++u)
            {
                std::vector<std::uint64_t> keys = naive_keys(r1[u], k);
                if (pairs)
                {
                    std::vector<std::uint64_t> const more = naive_keys(r2[u], k);
                    keys.insert(keys.end(), more.begin(), more.end());
                }
                auto const kmers = static_cast<std::uint32_t>(keys.size());
                std::uint32_t const hits = naive_hits(keys, nf, rule.min_count);
                bool const expect = rule.known(hits, kmers);
                unit_result const & got = results[u];
                ASSERT_EQ(got.kmers, kmers) << "unit " << u << " batch " << batch;
                ASSERT_EQ(got.known, expect)
                    << "unit " << u << " batch " << batch << " threads " << threads << " hits "
                    << hits << " of " << kmers << ", found " << got.hits;
                ASSERT_LE(got.hits, hits) << "unit " << u << " batch " << batch;
                ASSERT_EQ(rule.known(got.hits, got.kmers), got.known)
                    << "the hits found decide the unit: unit " << u;
                ASSERT_FALSE(got.rescued);
                (expect ? known : novel) += 1;
                stopped_early += got.hits < hits;
                if (kmers > ksieve::early_classifier::window_kmers)
                    (expect ? long_known : long_novel) += 1;
            }
        }
    }
    EXPECT_GT(known, 2000u);
    EXPECT_GT(novel, 1000u);
    EXPECT_GT(stopped_early, 1000u) << "lookups stopped once units were decided";
    EXPECT_GE(long_known, 2u);
    EXPECT_GE(long_novel, 2u);
}

// read_classifier, the entry point: without exact hits it gives the results of an early_classifier
// of its own, with them the exact counts; both the classes of query() + decide().
TEST_F(early_classify_test, the_read_classifier_equals_query_and_decide)
{
    std::mt19937_64 rng{9};
    ksieve::batch_engine const engine{kmer_, 2};
    ksieve::early_classifier classifier{engine};
    std::vector<ksieve::any_filter const *> const filters{filters_[0].get(), filters_[1].get()};
    ksieve::decision_rule const rule{1, 0.6, 0};
    ksieve::read_classifier early{filters, rule, false, 2};
    ksieve::read_classifier exact{filters, rule, true, 2};
    ASSERT_FALSE(early.exact_hits());
    ASSERT_TRUE(exact.exact_hits());
    for (int batch = 0; batch < 3; ++batch)
    {
        std::vector<std::string> const r1 = reads(rng, 700, false);
        ksieve::work_item item, item_exact;
        ksieve_test::fill(item.r1, r1);
        ksieve_test::fill(item_exact.r1, r1);
        std::vector<unit_result> mine, decided;
        classifier.classify(item.r1, nullptr, filters, rule, mine);
        early.decide(item);
        exact.decide(item_exact);
        ksieve::batch_keys keys;
        engine.extract(item.r1, nullptr, keys);
        engine.query(filters, keys);
        engine.decide(keys, rule, decided);
        ASSERT_EQ(mine.size(), r1.size());
        ASSERT_EQ(item.results.size(), r1.size());
        ASSERT_EQ(item_exact.results.size(), r1.size());
        for (std::size_t u = 0; u < r1.size(); ++u)
        {
            ASSERT_EQ(item.results[u].known, mine[u].known) << "unit " << u;
            ASSERT_EQ(item.results[u].hits, mine[u].hits) << "unit " << u;
            ASSERT_EQ(mine[u].known, decided[u].known) << "unit " << u;
            ASSERT_EQ(mine[u].kmers, decided[u].kmers) << "unit " << u;
            ASSERT_LE(mine[u].hits, decided[u].hits) << "unit " << u;
            ASSERT_EQ(item_exact.results[u].known, decided[u].known) << "unit " << u;
            ASSERT_EQ(item_exact.results[u].hits, decided[u].hits) << "unit " << u;
            ASSERT_EQ(item_exact.results[u].kmers, decided[u].kmers) << "unit " << u;
        }
    }
}

} // namespace
