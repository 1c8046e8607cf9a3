// Unit tests of label_vote against a naive vote: per unit, a std::map from label to the number of
// its looked-up k-mers whose class holds the label; a known unit gets the label of the most hits,
// or ambiguous where several share the most, and a novel unit (or a known unit without any labeled
// hit) no label.
#include <ksieve/engine/label_vote.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace
{

using ksieve::unit_result;

// A table of `labels` labels and `classes` classes, each a random non-empty increasing label set.
ksieve::label_table random_table(std::mt19937_64 & rng, std::uint32_t const labels,
                                 std::uint32_t const classes)
{
    ksieve::label_table t;
    for (std::uint32_t l = 0; l < labels; ++l)
    {
        std::string name = "l";
        name += std::to_string(l);
        t.names.push_back(std::move(name));
    }
    for (std::uint32_t c = 0; c < classes; ++c)
    {
        std::set<std::uint32_t> set;
        std::uint32_t const size = 1 + static_cast<std::uint32_t>(rng() % std::min(labels, 3u));
        while (set.size() < size)
            set.insert(static_cast<std::uint32_t>(rng() % labels));
        t.classes.emplace_back(set.begin(), set.end());
        t.class_kmers.push_back(1);
    }
    return t;
}

// The naive vote over (unit, count) hits (count = class id + 1; 0 ignored).
std::vector<std::uint32_t>
naive_labels(ksieve::label_table const & t,
             std::vector<std::pair<std::uint32_t, std::uint64_t>> const & hits,
             std::vector<unit_result> const & results)
{
    std::vector<std::map<std::uint32_t, std::uint32_t>> tally(results.size());
    for (auto const & [unit, count] : hits)
        if (count != 0)
            for (std::uint32_t const l : t.classes[count - 1])
                ++tally[unit][l];
    std::vector<std::uint32_t> out(results.size(), unit_result::no_label);
    for (std::size_t u = 0; u < results.size(); ++u)
    {
        if (!results[u].known || tally[u].empty())
            continue;
        std::uint32_t most = 0;
        for (auto const & [l, n] : tally[u])
            most = std::max(most, n);
        std::vector<std::uint32_t> top;
        for (auto const & [l, n] : tally[u])
            if (n == most)
                top.push_back(l);
        out[u] = top.size() == 1 ? top.front() : unit_result::ambiguous;
    }
    return out;
}

// Random batches through one vote (its tallies must reset between units and batches): hits added
// unit by unit or interleaved, some units dropped (their hits forgotten), results reused with stale
// labels from the batch before.
TEST(label_vote, labels_equal_the_naive_vote)
{
    std::mt19937_64 rng{42};
    std::size_t labelled = 0, ambiguous = 0, unlabelled_known = 0;
    for (std::uint32_t const labels : {1u, 2u, 5u, 40u})
    {
        ksieve::label_table const table = random_table(rng, labels, labels == 1 ? 1 : 3 * labels);
        ksieve::label_vote vote{table};
        std::vector<unit_result> results;
        for (int batch = 0; batch < 60; ++batch)
        {
            std::size_t const units = 1 + rng() % 200;
            results.resize(units); // stale labels of the batch before stay until decide()
            for (auto & r : results)
                r.known = rng() % 4 != 0;
            std::vector<std::pair<std::uint32_t, std::uint64_t>> hits;
            for (std::uint32_t u = 0; u < units; ++u)
                for (std::size_t j = rng() % 12; j > 0; --j)
                {
                    // count 0: a k-mer not found (no vote); two classes in a unit make ties common
                    std::uint64_t const classes =
                        u % 3 == 0 ? std::min<std::uint64_t>(2, table.classes.size())
                                   : table.classes.size();
                    hits.emplace_back(u, rng() % 5 == 0 ? 0 : 1 + rng() % classes);
                }
            if (batch % 3 == 1)
                std::shuffle(hits.begin(), hits.end(), rng); // units interleaved
            for (auto const & [unit, count] : hits)
                vote.add(unit, count);
            std::vector<std::uint32_t> dropped;
            if (batch % 2 == 0)
                for (std::uint32_t u = 0; u < units; ++u)
                    if (rng() % 5 == 0)
                        dropped.push_back(u);
            vote.drop(dropped);
            std::erase_if(hits, [&](auto const & h)
                          { return std::binary_search(dropped.begin(), dropped.end(), h.first); });
            std::vector<std::uint32_t> const expect = naive_labels(table, hits, results);
            vote.decide(results);
            vote.clear();
            for (std::size_t u = 0; u < units; ++u)
            {
                ASSERT_EQ(results[u].label, expect[u])
                    << labels << " labels, batch " << batch << " unit " << u;
                labelled += expect[u] < unit_result::ambiguous;
                ambiguous += expect[u] == unit_result::ambiguous;
                unlabelled_known += results[u].known && expect[u] == unit_result::no_label;
            }
        }
    }
    // every outcome was reached
    EXPECT_GT(labelled, 1000u);
    EXPECT_GT(ambiguous, 100u);
    EXPECT_GT(unlabelled_known, 10u);
}

// A hand-made case: a k-mer of a class of two labels counts for both; the label of the most hits
// wins, a tie is ambiguous, a novel unit gets no label whatever its hits.
TEST(label_vote, a_shared_class_counts_for_each_of_its_labels)
{
    ksieve::label_table table;
    table.names = {"a", "b", "c"};
    table.classes = {{0}, {1}, {0, 1}, {2}};
    table.class_kmers = {1, 1, 1, 1};
    ksieve::label_vote vote{table};
    std::vector<unit_result> results(4);
    for (auto & r : results)
        r.known = true;
    results[3].known = false;
    // unit 0: {a} + {a,b} + {b} + {b}: a 2, b 3 -> b
    for (std::uint64_t const count : {1, 3, 2, 2})
        vote.add(0, count);
    // unit 1: {a,b} + {c} + {c}: a 1, b 1, c 2 -> c
    for (std::uint64_t const count : {3, 4, 4})
        vote.add(1, count);
    // unit 2: {a} + {b}: a tie -> ambiguous
    for (std::uint64_t const count : {1, 2})
        vote.add(2, count);
    // unit 3: novel
    vote.add(3, 1);
    vote.decide(results);
    EXPECT_EQ(results[0].label, 1u);
    EXPECT_EQ(results[1].label, 2u);
    EXPECT_EQ(results[2].label, unit_result::ambiguous);
    EXPECT_EQ(results[3].label, unit_result::no_label);
    // after clear(), nothing of the batch before is left
    vote.clear();
    vote.add(2, 1);
    vote.decide(results);
    EXPECT_EQ(results[0].label, unit_result::no_label);
    EXPECT_EQ(results[2].label, 0u);
}

} // namespace
