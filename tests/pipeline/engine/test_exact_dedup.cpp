// Unit tests of exact duplicates (exact_dedup.hpp) against string oracles: a read's identity is its
// upper-case form, with both strands the smaller of that form and its reverse complement (IUPAC
// codes complemented); a pair's is its mates' forms in order, with both strands as an unordered
// pair. exact_deduplicator must call a unit known iff an earlier unit (any batch) had the same
// identity (std::set of identities), on one thread and three.
#include <ksieve/engine/exact_dedup.hpp>

#include "naive_kmers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace
{

using ksieve_test::random_dna;

std::string upper(std::string s)
{
    for (char & c : s)
        if (c >= 'a' && c <= 'z')
            c = static_cast<char>(c - 'a' + 'A');
    return s;
}

// The reverse complement of an upper-case form: A/T, C/G, R/Y, K/M, B/V, D/H swapped; every other
// byte its own complement.
std::string reverse_complement(std::string s)
{
    std::reverse(s.begin(), s.end());
    std::string const from = "ATCGRYKMBVDH", to = "TAGCYRMKVBHD";
    for (char & c : s)
        if (auto const at = from.find(c); at != std::string::npos)
            c = to[at];
    return s;
}

// Reads drawn from a small pool (repeats), each copy in mixed case, reverse complemented or not,
// with IUPAC codes and N.
std::vector<std::string> pool(std::mt19937_64 & rng, std::size_t const n)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i)
    {
        std::string s = random_dna(rng, rng() % 8 == 0 ? rng() % 20 : 20 + rng() % 40);
        if (i % 3 == 0 && !s.empty())
            s[rng() % s.size()] = "NRYKMBVDHSW-"[rng() % 12];
        out.push_back(std::move(s));
    }
    return out;
}

std::string copy_of(std::string s, std::mt19937_64 & rng)
{
    if (rng() % 3 == 0)
        s = reverse_complement(s);
    for (char & c : s)
        if (rng() % 4 == 0 && c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return s;
}

TEST(exact_dedup, the_hash_of_the_reverse_is_the_hash_of_the_reverse_complement)
{
    std::mt19937_64 rng{71};
    for (std::string const & s : pool(rng, 2000))
        for (std::uint64_t const seed : {ksieve::default_hash_seed, std::uint64_t{5}})
        {
            std::string const form = upper(s);
            ASSERT_EQ(ksieve::sequence_hash(s, seed, true),
                      ksieve::sequence_hash(reverse_complement(form), seed, false))
                << s;
            ASSERT_EQ(ksieve::sequence_hash(s, seed, false),
                      ksieve::sequence_hash(form, seed, false));
            ksieve::sequence_key_options const both{true, seed}, one{false, seed};
            ASSERT_EQ(ksieve::read_key(s, both), ksieve::read_key(reverse_complement(form), both));
            ASSERT_EQ(ksieve::read_key(s, one), ksieve::sequence_hash(s, seed, false));
        }
    // different forms: different hashes (a collision has probability about 2^-64)
    EXPECT_NE(ksieve::sequence_hash("ACGT", 1, false), ksieve::sequence_hash("ACGA", 1, false));
    EXPECT_NE(ksieve::sequence_hash("", 1, false), ksieve::sequence_hash("A", 1, false));
    EXPECT_NE(ksieve::sequence_hash("AAAAAAAAAAAAAAAA", 1, false),
              ksieve::sequence_hash("AAAAAAAAAAAAAAAAA", 1, false));
}

// Batches of single reads and of pairs, on one strand and both: classes equal the oracle's.
TEST(exact_dedup, classes_equal_the_oracle)
{
    std::mt19937_64 rng{72};
    for (bool const both_strands : {false, true})
        for (bool const pairs : {false, true})
            for (unsigned const threads : {1u, 3u})
            {
                SCOPED_TRACE(testing::Message() << "both " << both_strands << " pairs " << pairs
                                                << " threads " << threads);
                ksieve::sequence_key_options const options{both_strands, 99};
                ksieve::filter_config cfg;
                cfg.kmer = ksieve::sequence_key_params(options);
                cfg.fpr = 0; // exact: keys told apart
                cfg.shard_bits = 2;
                auto const filter = ksieve::make_filter(cfg);
                ASSERT_NE(filter->growable(), nullptr);
                ksieve::exact_deduplicator dedup{options, threads, *filter, "test"};
                std::vector<std::string> const p = pool(rng, 400);
                std::set<std::pair<std::string, std::string>> seen;
                std::size_t known = 0, novel = 0;
                std::vector<ksieve::unit_result> results;
                for (int batch = 0; batch < 6; ++batch)
                {
                    std::size_t const n = 1 + rng() % 500;
                    std::vector<std::string> r1, r2;
                    for (std::size_t u = 0; u < n; ++u)
                    {
                        // a pair: mates i and i + 1 of the pool, sometimes swapped
                        std::size_t const i = rng() % (p.size() - 1);
                        bool const swap = pairs && rng() % 3 == 0;
                        r1.push_back(copy_of(p[swap ? i + 1 : i], rng));
                        if (pairs)
                            r2.push_back(copy_of(p[swap ? i : i + 1], rng));
                    }
                    ksieve::work_item item;
                    ksieve_test::fill(item.r1, r1);
                    ksieve_test::fill(item.r2, r2);
                    dedup.decide(item);
                    results = std::move(item.results);
                    ASSERT_EQ(results.size(), n);
                    for (std::size_t u = 0; u < n; ++u)
                    {
                        std::pair<std::string, std::string> id;
                        if (!pairs)
                        {
                            id.first = upper(r1[u]);
                            if (both_strands)
                                id.first = std::min(id.first, reverse_complement(id.first));
                        }
                        else
                        {
                            id = {upper(r1[u]), upper(r2[u])};
                            if (both_strands && id.second < id.first)
                                std::swap(id.first, id.second);
                        }
                        bool const expect = !seen.insert(id).second;
                        ASSERT_EQ(results[u].known, expect) << "batch " << batch << " unit " << u;
                        ASSERT_EQ(results[u].kmers, 1u);
                        ASSERT_EQ(results[u].hits, expect ? 1u : 0u);
                        (expect ? known : novel) += 1;
                    }
                }
                EXPECT_GT(known, 200u);
                EXPECT_GT(novel, 200u);
                EXPECT_EQ(filter->stats().distinct, seen.size());
            }
}

} // namespace
