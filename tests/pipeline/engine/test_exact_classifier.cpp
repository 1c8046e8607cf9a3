// Unit tests of exact_classifier against a naive classifier over exact k-mer counts: each unit's
// k-mers are the naive canonical k-mers of its sequences (both mates of a pair), a k-mer's count is
// the largest count over the filters (std::unordered_map per filter), its hits those of count >=
// min_count, and its class the rule's; against a labeled filter, a known unit's label is the naive
// vote over its k-mers' label sets. Exact quotient filters (--fpr 0) make every count exact.
#include <ksieve/engine/exact_classifier.hpp>
#include <ksieve/engine/key_pieces.hpp>

#include "naive_kmers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace
{

using ksieve::unit_result;
using ksieve_test::naive_keys;
using ksieve_test::random_dna;

constexpr unsigned k = 21;

using count_map = std::unordered_map<std::uint64_t, std::uint64_t>;

std::unique_ptr<ksieve::any_filter> exact_filter(count_map const & counts)
{
    ksieve::filter_config cfg;
    cfg.kmer.k = k;
    cfg.fpr = 0; // exact: a count is the key's own
    cfg.shard_bits = 2;
    auto f = ksieve::make_filter(cfg);
    for (auto const & [key, count] : counts)
        EXPECT_EQ(f->insert(key, count), ksieve::insert_status::ok);
    return f;
}

struct expected_unit
{
    std::uint32_t kmers{0}, hits{0};
    bool known{false};
};

expected_unit naive(std::vector<count_map const *> const & filters, std::string const & a,
                    std::string const * b, ksieve::decision_rule const & rule)
{
    std::vector<std::uint64_t> keys = naive_keys(a, k);
    if (b != nullptr)
    {
        std::vector<std::uint64_t> const more = naive_keys(*b, k);
        keys.insert(keys.end(), more.begin(), more.end());
    }
    expected_unit e;
    e.kmers = static_cast<std::uint32_t>(keys.size());
    for (std::uint64_t const key : keys)
    {
        std::uint64_t most = 0;
        for (count_map const * m : filters)
            if (auto const it = m->find(key); it != m->end())
                most = std::max(most, it->second);
        e.hits += most >= rule.min_count;
    }
    e.known = rule.known(e.hits, e.kmers);
    return e;
}

// Reads of 0 to 250 bases: pieces of `genomes` with 0 to 12 substitutions, random reads, a few with
// N or lower-case bases; with `long_record`, one record of more than long_record_window_bases, half
// a genome's sequence, half random (windows of the long path).
std::vector<std::string> reads(std::mt19937_64 & rng, std::vector<std::string> const & genomes,
                               std::size_t const n, bool const long_record)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i)
    {
        std::size_t const len = i % 50 == 0 ? rng() % (k + 1) : 30 + rng() % 221;
        std::string r;
        if (i % 8 == 7)
            r = random_dna(rng, len);
        else
        {
            std::string const & g = genomes[rng() % genomes.size()];
            r = g.substr(rng() % (g.size() - len), len);
            ksieve_test::substitute(rng, r, rng() % 13);
        }
        if (i % 9 == 4 && !r.empty())
            r[rng() % r.size()] = 'N';
        if (i % 11 == 5)
            std::transform(r.begin(), r.end(), r.begin(),
                           [](char c) { return static_cast<char>(c - 'A' + 'a'); });
        out.push_back(std::move(r));
    }
    if (long_record)
    {
        std::string big;
        while (big.size() < ksieve::long_record_window_bases + 40000)
        {
            big += genomes[0].substr(rng() % 10000, 2000);
            big += random_dna(rng, 2000);
        }
        out[n / 2] = std::move(big);
    }
    return out;
}

class exact_classifier_test : public ::testing::Test
{
protected:
    void SetUp() override
    {
        std::mt19937_64 rng{17};
        genomes_ = {random_dna(rng, 30000), random_dna(rng, 30000)};
        genomes_[0].replace(20000, 3000, genomes_[0].substr(5000, 3000)); // counts of 2
        genomes_[0].replace(25000, 1000, genomes_[0].substr(5000, 1000)); // and 3
        for (std::size_t g = 0; g < genomes_.size(); ++g)
            for (std::uint64_t const key : naive_keys(genomes_[g], k))
                ++counts_[g][key];
        for (std::size_t g = 0; g < genomes_.size(); ++g)
            filters_[g] = exact_filter(counts_[g]);
        kmer_.k = k;
    }

    std::vector<std::string> genomes_;
    std::array<count_map, 2> counts_;
    std::array<std::unique_ptr<ksieve::any_filter>, 2> filters_;
    ksieve::kmer_params kmer_;
};

// Single reads and pairs, one filter and two, several rules, short batches and one with a long
// record, on one and three threads: kmers, hits and classes equal the naive classifier's.
TEST_F(exact_classifier_test, results_equal_the_naive_classifier)
{
    std::mt19937_64 rng{3};
    std::array const rules{ksieve::decision_rule{1, 0.5, 0}, ksieve::decision_rule{2, 0.3, 0},
                           ksieve::decision_rule{1, 0.9, 20}, ksieve::decision_rule{3, 1e-9, 0},
                           ksieve::decision_rule{1, 1.0, 0}};
    std::size_t known = 0, novel = 0, long_units = 0;
    for (unsigned const threads : {1u, 3u})
    {
        ksieve::batch_engine const engine{kmer_, threads};
        for (std::size_t const nf : {std::size_t{1}, std::size_t{2}})
        {
            std::vector<ksieve::any_filter const *> filters;
            std::vector<count_map const *> maps;
            for (std::size_t f = 0; f < nf; ++f)
            {
                filters.push_back(filters_[f].get());
                maps.push_back(&counts_[f]);
            }
            for (auto const & rule : rules)
            {
                ksieve::exact_classifier classifier{engine, filters, rule};
                ksieve::work_item item; // reused: results of the batch before must go
                for (int batch = 0; batch < 4; ++batch)
                {
                    bool const pairs = batch % 2 == 1;
                    bool const long_record = batch == 2 && threads == 3;
                    std::size_t const n = 50 + rng() % 400;
                    std::vector<std::string> const r1 = reads(rng, genomes_, n, long_record);
                    std::vector<std::string> const r2 = reads(rng, genomes_, n, false);
                    item.r1.clear();
                    item.r2.clear();
                    ksieve_test::fill(item.r1, r1);
                    if (pairs)
                        ksieve_test::fill(item.r2, r2);
                    classifier.classify(item);
                    ASSERT_EQ(item.results.size(), n);
                    for (std::size_t u = 0; u < n; ++u)
                    {
                        expected_unit const e = naive(maps, r1[u], pairs ? &r2[u] : nullptr, rule);
                        unit_result const & got = item.results[u];
                        ASSERT_EQ(got.kmers, e.kmers) << "unit " << u << " batch " << batch;
                        ASSERT_EQ(got.hits, e.hits) << "unit " << u << " batch " << batch;
                        ASSERT_EQ(got.known, e.known) << "unit " << u << " batch " << batch;
                        ASSERT_FALSE(got.rescued);
                        ASSERT_EQ(got.label, unit_result::no_label);
                        (e.known ? known : novel) += 1;
                        long_units += r1[u].size() > ksieve::long_record_window_bases;
                    }
                }
            }
        }
    }
    EXPECT_GT(known, 1000u);
    EXPECT_GT(novel, 2000u);
    EXPECT_GE(long_units, 10u);
}

// A labeled filter of three genomes (the second shares half the first, so k-mers carry label sets
// of one or two labels): every count is the class id + 1 of the k-mer's label set. Reads of one
// genome, of the shared part, and chimeras of two genomes (equal halves tie): labels equal the
// naive vote, for single reads and pairs.
TEST_F(exact_classifier_test, labels_equal_the_naive_vote)
{
    std::mt19937_64 rng{5};
    std::vector<std::string> g{random_dna(rng, 20000), "", random_dna(rng, 20000)};
    g[1] = g[0].substr(0, 10000) + random_dna(rng, 10000);
    std::unordered_map<std::uint64_t, std::set<std::uint32_t>> label_sets;
    for (std::uint32_t l = 0; l < g.size(); ++l)
        for (std::uint64_t const key : naive_keys(g[l], k))
            label_sets[key].insert(l);
    auto table = std::make_shared<ksieve::label_table>();
    table->names = {"a", "b", "c"};
    std::map<std::set<std::uint32_t>, std::uint32_t> class_of;
    count_map counts;
    for (auto const & [key, set] : label_sets)
    {
        auto [it, added] = class_of.emplace(set, static_cast<std::uint32_t>(class_of.size()));
        if (added)
        {
            table->classes.emplace_back(set.begin(), set.end());
            table->class_kmers.push_back(0);
        }
        ++table->class_kmers[it->second];
        counts[key] = it->second + 1;
    }
    auto const filter = exact_filter(counts);
    filter->set_labels(table);
    ksieve::any_filter const * const fp = filter.get();
    std::span<ksieve::any_filter const * const> const filters{&fp, 1};
    ksieve::decision_rule const rule{1, 0.3, 0};
    ksieve::batch_engine const engine{kmer_, 2};
    ksieve::exact_classifier classifier{engine, filters, rule};
    auto piece = [&](std::string const & s, std::size_t const len)
    { return s.substr(rng() % (s.size() - len), len); };
    std::size_t labelled = 0, ambiguous = 0;
    for (bool const pairs : {false, true})
    {
        std::vector<std::string> r1, r2;
        for (std::size_t i = 0; i < 600; ++i)
        {
            for (auto * r : {&r1, &r2})
                switch (i % 5)
                {
                case 0: // one genome
                    r->push_back(piece(g[rng() % 3], 150));
                    break;
                case 1: // the shared half: labels a and b tie
                    r->push_back(piece(g[0].substr(0, 10000), 150));
                    break;
                case 2: // a chimera of equal halves
                    r->push_back(piece(g[0], 75) + piece(g[2], 75));
                    break;
                case 3: // unequal halves
                    r->push_back(piece(g[rng() % 3], 60 + rng() % 80) + piece(g[2], 70));
                    break;
                default: // random: novel
                    r->push_back(random_dna(rng, 150));
                }
            ksieve_test::substitute(rng, r1.back(), rng() % 4);
        }
        ksieve::work_item item;
        ksieve_test::fill(item.r1, r1);
        if (pairs)
            ksieve_test::fill(item.r2, r2);
        classifier.classify(item);
        for (std::size_t u = 0; u < r1.size(); ++u)
        {
            std::vector<std::uint64_t> keys = naive_keys(r1[u], k);
            if (pairs)
            {
                std::vector<std::uint64_t> const more = naive_keys(r2[u], k);
                keys.insert(keys.end(), more.begin(), more.end());
            }
            std::map<std::uint32_t, std::uint32_t> tally;
            std::uint32_t hits = 0;
            for (std::uint64_t const key : keys)
                if (auto const it = label_sets.find(key); it != label_sets.end())
                {
                    ++hits;
                    for (std::uint32_t const l : it->second)
                        ++tally[l];
                }
            bool const known = rule.known(hits, static_cast<std::uint32_t>(keys.size()));
            std::uint32_t expect = unit_result::no_label;
            if (known)
            {
                std::uint32_t most = 0, top = 0;
                for (auto const & [l, n] : tally)
                    most = std::max(most, n);
                for (auto const & [l, n] : tally)
                    if (n == most)
                    {
                        ++top;
                        expect = l;
                    }
                expect = top == 1 ? expect : unit_result::ambiguous;
            }
            ASSERT_EQ(item.results[u].known, known) << "unit " << u << " pairs " << pairs;
            ASSERT_EQ(item.results[u].hits, hits) << "unit " << u;
            ASSERT_EQ(item.results[u].label, expect) << "unit " << u << " pairs " << pairs;
            labelled += expect < unit_result::ambiguous;
            ambiguous += expect == unit_result::ambiguous;
        }
    }
    EXPECT_GT(labelled, 300u);
    EXPECT_GT(ambiguous, 100u);
}

} // namespace
