// Unit tests of kmer_deduplicator (dedup by the k-mer rule, batch by batch) against the serial
// definition: reads in input order, a read (or pair) is known iff its k-mers that earlier novel
// reads added (std::unordered_map of the naive canonical k-mers, or a twin filter for filters with
// false positives) meet the rule, and a novel read adds each of its k-mers once per occurrence.
// Every path: speculation, in-batch resolution (exact hits, with and without skip_at), read by read
// (Bloom, cuckoo), a prefilter, and a memory budget (a hash sample of the k-mers).
#include <ksieve/engine/kmer_dedup.hpp>

#include "naive_kmers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace
{

using ksieve::unit_result;
using ksieve_test::naive_keys;

constexpr unsigned k = 21;

// Batches of reads of a small genome (many duplicates, some reverse complements, 0 to 3
// substitutions) and random reads; `pairs`: a mate for every read.
struct batch
{
    std::vector<std::string> r1, r2;
    ksieve::work_item item;
};

std::string reverse_complement(std::string s)
{
    std::reverse(s.begin(), s.end());
    for (char & c : s)
        c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : c;
    return s;
}

void make_batch(std::mt19937_64 & rng, std::string const & genome, std::size_t const n,
                bool const pairs, batch & b)
{
    auto one = [&]
    {
        std::size_t const len = rng() % 30 == 0 ? rng() % 25 : 60 + rng() % 90;
        if (rng() % 10 == 0)
            return ksieve_test::random_dna(rng, len);
        std::string r = genome.substr(rng() % (genome.size() - len), len);
        ksieve_test::substitute(rng, r, rng() % 4 == 0 ? rng() % 4 : 0);
        return rng() % 3 == 0 ? reverse_complement(r) : r;
    };
    b.r1.clear();
    b.r2.clear();
    for (std::size_t i = 0; i < n; ++i)
    {
        b.r1.push_back(one());
        if (pairs)
            b.r2.push_back(one());
    }
    b.item.r1.clear();
    b.item.r2.clear();
    ksieve_test::fill(b.item.r1, b.r1);
    ksieve_test::fill(b.item.r2, b.r2);
}

std::vector<std::uint64_t> unit_keys(batch const & b, std::size_t const u)
{
    std::vector<std::uint64_t> keys = naive_keys(b.r1[u], k);
    if (!b.r2.empty())
    {
        std::vector<std::uint64_t> const more = naive_keys(b.r2[u], k);
        keys.insert(keys.end(), more.begin(), more.end());
    }
    return keys;
}

// The serial definition over exact counts.
struct serial_oracle
{
    std::unordered_map<std::uint64_t, std::uint64_t> counts;

    unit_result decide(std::vector<std::uint64_t> const & keys, ksieve::decision_rule const & rule)
    {
        std::uint32_t hits = 0;
        for (std::uint64_t const key : keys)
            if (auto const it = counts.find(key); it != counts.end())
                hits += it->second >= rule.min_count;
        auto const kmers = static_cast<std::uint32_t>(keys.size());
        bool const known = rule.known(hits, kmers);
        if (!known)
            for (std::uint64_t const key : keys)
                ++counts[key];
        return unit_result{kmers, hits, known};
    }
};

ksieve::filter_config exact_config()
{
    ksieve::filter_config cfg;
    cfg.kmer.k = k;
    cfg.fpr = 0; // exact: collision keys are the keys, no false positive
    cfg.shard_bits = 2;
    return cfg;
}

// Quotient filters: speculation (exact_hits off) and in-batch resolution (exact_hits on, skip_at 0
// or min_count), on one and three threads, over eight batches of single reads or pairs: classes
// equal the serial definition's, hits too where they are exact; the filter's counts equal the
// serial counts (capped at skip_at where keys at that count are not inserted again).
TEST(kmer_dedup, quotient_filter_paths_equal_the_serial_definition)
{
    std::mt19937_64 rng{61};
    std::string const genome = ksieve_test::random_dna(rng, 15000);
    for (bool const exact_hits : {false, true})
        for (std::uint64_t const min_count : {1u, 2u})
            for (bool const skip : {false, true})
                for (unsigned const threads : {1u, 3u})
                {
                    if (skip && !exact_hits)
                        continue; // skip_at is the resolution path's (insert())
                    SCOPED_TRACE(testing::Message()
                                 << "exact_hits " << exact_hits << " min_count " << min_count
                                 << " skip " << skip << " threads " << threads);
                    auto const filter = ksieve::make_filter(exact_config());
                    ksieve::decision_rule const rule{min_count, 0.5, 0};
                    std::uint64_t const skip_at = skip ? min_count : 0;
                    ksieve::kmer_deduplicator dedup{
                        *filter, filter->kmer(), threads, {rule, exact_hits, skip_at, "test", 0}};
                    ASSERT_EQ(dedup.exact_hits(), exact_hits);
                    serial_oracle oracle;
                    std::size_t known = 0, novel = 0;
                    batch b;
                    for (int i = 0; i < 8; ++i)
                    {
                        make_batch(rng, genome, 100 + rng() % 300, i % 2 == 1, b);
                        dedup.decide(b.item);
                        ASSERT_EQ(b.item.results.size(), b.r1.size());
                        for (std::size_t u = 0; u < b.r1.size(); ++u)
                        {
                            unit_result const e = oracle.decide(unit_keys(b, u), rule);
                            unit_result const & got = b.item.results[u];
                            ASSERT_EQ(got.known, e.known) << "batch " << i << " unit " << u;
                            ASSERT_EQ(got.kmers, e.kmers) << "batch " << i << " unit " << u;
                            if (exact_hits)
                            {
                                ASSERT_EQ(got.hits, e.hits) << "batch " << i << " unit " << u;
                            }
                            (e.known ? known : novel) += 1;
                        }
                        for (auto const & [key, count] : oracle.counts)
                        {
                            if (skip_at == 0)
                            {
                                ASSERT_EQ(filter->count(key), count) << "batch " << i;
                            }
                            else
                            {
                                ASSERT_EQ(std::min(filter->count(key), skip_at),
                                          std::min(count, skip_at))
                                    << "batch " << i;
                            }
                        }
                    }
                    EXPECT_GT(known, 300u);
                    EXPECT_GT(novel, 300u);
                    EXPECT_EQ(dedup.forgetting_from_unit(), 0u); // no budget
                    EXPECT_EQ(dedup.budget().level(), 0u);
                }
}

// Filters without collision keys (Bloom, cuckoo) go read by read: the classes equal those of the
// serial definition run on a twin filter of the same configuration (so that false positives are
// the same), and the twins answer alike afterwards.
TEST(kmer_dedup, read_by_read_filters_equal_the_serial_definition_on_a_twin)
{
    std::mt19937_64 rng{62};
    std::string const genome = ksieve_test::random_dna(rng, 15000);
    for (auto const type : {ksieve::filter_type::bloom, ksieve::filter_type::cuckoo})
    {
        SCOPED_TRACE(static_cast<int>(type));
        ksieve::filter_config cfg = exact_config();
        cfg.type = type;
        cfg.fpr = 0.01;
        cfg.expected = 200000;
        auto const filter = ksieve::make_filter(cfg);
        auto const twin = ksieve::make_filter(cfg);
        ASSERT_EQ(filter->growable(), nullptr);
        ksieve::decision_rule const rule{1, 0.6, 0};
        ksieve::kmer_deduplicator dedup{*filter, filter->kmer(), 2, {rule, false, 0, "test", 0}};
        std::vector<std::uint64_t> seen;
        std::size_t known = 0, novel = 0;
        batch b;
        for (int i = 0; i < 6; ++i)
        {
            make_batch(rng, genome, 100 + rng() % 300, i % 2 == 1, b);
            dedup.decide(b.item);
            for (std::size_t u = 0; u < b.r1.size(); ++u)
            {
                std::vector<std::uint64_t> const keys = unit_keys(b, u);
                std::uint32_t hits = 0;
                for (std::uint64_t const key : keys)
                    hits += twin->count(key) > 0;
                bool const expect = rule.known(hits, static_cast<std::uint32_t>(keys.size()));
                if (!expect)
                    for (std::uint64_t const key : keys)
                    {
                        ASSERT_EQ(twin->insert(key), ksieve::insert_status::ok);
                        seen.push_back(key);
                    }
                ASSERT_EQ(b.item.results[u].known, expect) << "batch " << i << " unit " << u;
                ASSERT_EQ(b.item.results[u].hits, hits) << "batch " << i << " unit " << u;
                (expect ? known : novel) += 1;
            }
        }
        for (std::uint64_t const key : seen)
            ASSERT_EQ(filter->count(key) > 0, twin->count(key) > 0);
        for (int j = 0; j < 10000; ++j)
        {
            std::uint64_t const key = rng() & ksieve::kmer_mask(k);
            ASSERT_EQ(filter->count(key) > 0, twin->count(key) > 0);
        }
        EXPECT_GT(known, 300u);
        EXPECT_GT(novel, 300u);
    }
}

// With a prefilter (prefiltered_filter, committed after every batch), both quotient-filter paths
// give the serial definition's classes; a prefilter large enough to have no false positive makes
// the serial counts exact, and every count afterwards equals them.
TEST(kmer_dedup, a_prefiltered_filter_equals_the_serial_definition)
{
    std::mt19937_64 rng{63};
    std::string const genome = ksieve_test::random_dna(rng, 15000);
    for (bool const exact_hits : {false, true})
    {
        ksieve::prefiltered_filter filter{ksieve::make_filter(exact_config()),
                                          std::uint64_t{1} << 24};
        ksieve::decision_rule const rule{2, 0.5, 0};
        ksieve::kmer_deduplicator dedup{filter, filter.kmer(), 2, {rule, exact_hits, 0, "test", 0}};
        serial_oracle oracle;
        std::size_t known = 0;
        batch b;
        for (int i = 0; i < 6; ++i)
        {
            make_batch(rng, genome, 100 + rng() % 300, false, b);
            dedup.decide(b.item);
            for (std::size_t u = 0; u < b.r1.size(); ++u)
            {
                unit_result const e = oracle.decide(unit_keys(b, u), rule);
                ASSERT_EQ(b.item.results[u].known, e.known)
                    << "exact_hits " << exact_hits << " batch " << i << " unit " << u;
                known += e.known;
            }
            for (auto const & [key, count] : oracle.counts)
                ASSERT_EQ(filter.count(key), count) << "batch " << i;
        }
        EXPECT_GT(known, 300u);
        EXPECT_GT(filter.prefiltered(), filter.main().stats().distinct); // the prefilter held some
    }
}

} // namespace
