#include <ksieve/filters/kmers/kmer.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace
{

// Naive oracle: string reverse complement and lexicographic min.
std::string revcomp(std::string const & s)
{
    std::string r(s.rbegin(), s.rend());
    for (auto & c : r)
    {
        switch (c)
        {
        case 'A':
            c = 'T';
            break;
        case 'C':
            c = 'G';
            break;
        case 'G':
            c = 'C';
            break;
        case 'T':
            c = 'A';
            break;
        }
    }
    return r;
}

std::string upper(std::string s)
{
    for (auto & c : s)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

bool all_acgt(std::string const & s)
{
    return s.find_first_not_of("ACGTacgt") == std::string::npos;
}

std::string random_sequence(std::mt19937_64 & rng, std::size_t const n)
{
    static std::string const alphabet = "ACGTACGTACGTACGTacgtNnRYKMSWBDHV-";
    std::string s(n, 'A');
    for (auto & c : s)
        c = alphabet[rng() % alphabet.size()];
    return s;
}

} // namespace

TEST(kmer, encoding_table_accepts_only_acgt_in_both_cases)
{
    for (int c = 0; c < 256; ++c)
    {
        bool const valid = std::string{"ACGTacgt"}.find(static_cast<char>(c)) != std::string::npos;
        EXPECT_EQ(ksieve::dna_code_table[c] < 4, valid && c != 0) << c;
    }
}

TEST(kmer, reverse_complement_matches_string_oracle_for_every_k)
{
    std::mt19937_64 rng{1};
    for (unsigned k = 1; k <= 32; ++k)
    {
        for (int rep = 0; rep < 200; ++rep)
        {
            std::string s(k, 'A');
            for (auto & c : s)
                c = "ACGT"[rng() % 4];
            std::uint64_t code = 0, rc = 0;
            ASSERT_TRUE(ksieve::encode_kmer(s, code));
            ASSERT_TRUE(ksieve::encode_kmer(revcomp(s), rc));
            EXPECT_EQ(ksieve::reverse_complement(code, k), rc) << s;
            EXPECT_EQ(ksieve::canonical_kmer(code, k), std::min(code, rc));
            // numeric order equals lexicographic order of the strings
            EXPECT_EQ(code < rc, s < revcomp(s));
        }
    }
}

TEST(kmer, scanner_matches_naive_on_random_sequences_with_n_iupac_and_lower_case)
{
    std::mt19937_64 rng{42};
    for (unsigned k : {1u, 2u, 5u, 15u, 16u, 21u, 27u, 31u, 32u})
    {
        for (bool const canonical : {true, false})
        {
            ksieve::kmer_scanner const scan{k, canonical};
            for (int rep = 0; rep < 50; ++rep)
            {
                std::string const seq = random_sequence(rng, 20 + rng() % 300);
                std::vector<std::pair<std::size_t, std::uint64_t>> expected;
                for (std::size_t i = 0; i + k <= seq.size(); ++i)
                {
                    std::string const sub = seq.substr(i, k);
                    if (!all_acgt(sub))
                        continue;
                    std::string const fw = upper(sub);
                    std::string const chosen = canonical ? std::min(fw, revcomp(fw)) : fw;
                    std::uint64_t code = 0;
                    ASSERT_TRUE(ksieve::encode_kmer(chosen, code));
                    expected.emplace_back(i, code);
                }
                std::vector<std::pair<std::size_t, std::uint64_t>> got;
                scan.for_each(seq, [&](std::size_t pos, std::uint64_t code)
                              { got.emplace_back(pos, code); });
                ASSERT_EQ(got, expected) << "k=" << k << " seq=" << seq;
                EXPECT_EQ(scan.count(seq), expected.size());
            }
        }
    }
}

TEST(kmer, hasher_is_a_bijection_on_2k_bits)
{
    // Exhaustive for small k: every value is hit exactly once.
    for (unsigned k = 1; k <= 8; ++k)
    {
        ksieve::kmer_hasher const h{k, 0x1234567};
        std::vector<bool> seen(std::size_t{1} << (2 * k));
        for (std::uint64_t x = 0; x < seen.size(); ++x)
        {
            std::uint64_t const y = h(x);
            ASSERT_LT(y, seen.size());
            ASSERT_FALSE(seen[y]) << "collision at k=" << k;
            seen[y] = true;
            ASSERT_EQ(h.inverse(y), x);
        }
    }
    // Random round trips for large k.
    std::mt19937_64 rng{7};
    for (unsigned k = 9; k <= 32; ++k)
    {
        ksieve::kmer_hasher const h{k};
        for (int i = 0; i < 10000; ++i)
        {
            std::uint64_t const x = rng() & ksieve::kmer_mask(k);
            std::uint64_t const y = h(x);
            ASSERT_LE(y, ksieve::kmer_mask(k));
            ASSERT_EQ(h.inverse(y), x);
        }
    }
}

TEST(kmer, hasher_spreads_consecutive_codes_over_the_top_bits)
{
    // Sharding and quotienting use the top bits: consecutive k-mer codes must land evenly in 16
    // buckets.
    ksieve::kmer_hasher const h{31};
    std::vector<int> buckets(16);
    int const n = 160000;
    for (int x = 0; x < n; ++x)
        ++buckets[h(static_cast<std::uint64_t>(x)) >> (62 - 4)];
    for (int const b : buckets)
        EXPECT_NEAR(b, n / 16, n / 16 / 10);
}

TEST(kmer, different_seeds_give_different_hashes)
{
    ksieve::kmer_hasher const a{31, 1}, b{31, 2};
    int same = 0;
    for (std::uint64_t x = 0; x < 1000; ++x)
        same += a(x) == b(x);
    EXPECT_LT(same, 5);
}

// Spaced k-mers against strings: each strand with its ignored positions read as A, the smaller one
// (canonical); a k-mer that differs only at ignored positions gets the same code.
TEST(kmer, spaced_scanner_matches_naive_masked_strings)
{
    std::mt19937_64 rng{7};
    for (unsigned const k : {9u, 21u, 31u, 32u})
    {
        // ignored: every fifth position from the sixth, mirrored (symmetric)
        std::uint32_t pattern = k >= 32 ? ~0u : (1u << k) - 1;
        for (unsigned j = 5; j + 1 < k; j += 5)
            pattern &= ~(1u << j) & ~(1u << (k - 1 - j));
        auto masked = [&](std::string s)
        {
            for (unsigned j = 0; j < k; ++j)
                if (((pattern >> j) & 1u) == 0)
                    s[j] = 'A';
            return s;
        };
        for (bool const canonical : {true, false})
        {
            ksieve::kmer_scanner const scan{k, canonical, ksieve::spaced_code_mask(k, pattern)};
            for (int rep = 0; rep < 50; ++rep)
            {
                std::string const seq = random_sequence(rng, 20 + rng() % 300);
                std::vector<std::pair<std::size_t, std::uint64_t>> expected;
                for (std::size_t i = 0; i + k <= seq.size(); ++i)
                {
                    std::string const sub = seq.substr(i, k);
                    if (!all_acgt(sub))
                        continue;
                    std::string const fw = masked(upper(sub));
                    std::string const rc = masked(revcomp(upper(sub)));
                    std::uint64_t code = 0;
                    ASSERT_TRUE(ksieve::encode_kmer(canonical ? std::min(fw, rc) : fw, code));
                    expected.emplace_back(i, code);
                }
                std::vector<std::pair<std::size_t, std::uint64_t>> got;
                scan.for_each(seq, [&](std::size_t pos, std::uint64_t code)
                              { got.emplace_back(pos, code); });
                ASSERT_EQ(got, expected) << "k=" << k << " seq=" << seq;
            }
            // a substitution at an ignored position leaves the code as it was
            std::string s(k, 'A');
            for (auto & c : s)
                c = "ACGT"[rng() % 4];
            std::string t = s;
            t[5] = t[5] == 'C' ? 'G' : 'C';
            std::vector<std::uint64_t> a, b;
            scan.for_each(s, [&](std::size_t, std::uint64_t c) { a.push_back(c); });
            scan.for_each(t, [&](std::size_t, std::uint64_t c) { b.push_back(c); });
            EXPECT_EQ(a, b) << "k=" << k;
        }
    }
}
