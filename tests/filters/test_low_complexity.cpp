// The low-complexity mask against its definition computed naively from the k-mer's letters: counts
// of its overlapping trinucleotides, the DUST sum, the score against the threshold; the same answer
// for a k-mer and its reverse complement; the names `--mask` and `info` print.
#include <ksieve/filters/kmers/kmer.hpp>
#include <ksieve/filters/kmers/low_complexity.hpp>

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace
{

// DUST sum of a k-mer's letters: sum c (c - 1) / 2 over its overlapping trinucleotides.
std::uint64_t naive_pairs(std::string const & s)
{
    std::map<std::string, std::uint64_t> counts;
    for (std::size_t i = 0; i + 3 <= s.size(); ++i)
        ++counts[s.substr(i, 3)];
    std::uint64_t pairs = 0;
    for (auto const & [t, c] : counts)
        pairs += c * (c - 1) / 2;
    return pairs;
}

std::string revcomp(std::string const & s)
{
    std::string r(s.rbegin(), s.rend());
    for (auto & c : r)
        c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
    return r;
}

std::uint64_t code_of(std::string const & s)
{
    std::uint64_t code = 0;
    EXPECT_TRUE(ksieve::encode_kmer(s, code));
    return code;
}

// k-mers of every kind the mask sees: uniform, GC-skewed, tandem repeats of units of 1 to 6 with
// and without point changes.
std::vector<std::string> sample_kmers(unsigned const k, std::mt19937_64 & rng)
{
    std::vector<std::string> out;
    std::string const acgt = "ACGT";
    auto base = [&](double const gc)
    {
        std::uniform_real_distribution<double> u{0, 1};
        double const x = u(rng);
        return x < gc / 2 ? 'C' : x < gc ? 'G' : x < gc + (1 - gc) / 2 ? 'A' : 'T';
    };
    for (double const gc : {0.5, 0.2, 0.05})
        for (int i = 0; i < 2000; ++i)
        {
            std::string s;
            for (unsigned j = 0; j < k; ++j)
                s += base(gc);
            out.push_back(s);
        }
    for (unsigned unit = 1; unit <= 6; ++unit)
        for (int changes = 0; changes <= 3; ++changes)
            for (int i = 0; i < 50; ++i)
            {
                std::string u, s;
                for (unsigned j = 0; j < unit; ++j)
                    u += acgt[rng() % 4];
                while (s.size() < k)
                    s += u;
                s.resize(k);
                for (int c = 0; c < changes; ++c)
                    s[rng() % k] = acgt[rng() % 4];
                out.push_back(s);
            }
    return out;
}

} // namespace

TEST(LowComplexity, EqualsTheNaiveScoreForEveryKAndThreshold)
{
    std::mt19937_64 rng{7};
    std::size_t masked = 0, checked = 0;
    for (unsigned const k : {8u, 12u, 21u, 31u, 32u})
        for (auto const & s : sample_kmers(k, rng))
        {
            std::uint64_t const pairs = naive_pairs(s);
            std::uint64_t const fw = code_of(s), rc = code_of(revcomp(s));
            for (std::uint32_t const t : {0u, 1u, 100u, 150u, 200u, 725u, 1450u, 1500u})
            {
                // score = pairs / (k - 3) > t / 100
                bool const want = t != 0 && pairs * 100 > std::uint64_t{t} * (k - 3);
                ASSERT_EQ(ksieve::low_complexity(fw, k, t), want) << s << " t " << t;
                ASSERT_EQ(ksieve::low_complexity(rc, k, t), want) << revcomp(s) << " t " << t;
                masked += want;
                ++checked;
            }
        }
    // the sample holds both answers at the thresholds tested
    EXPECT_GT(masked, checked / 20);
    EXPECT_LT(masked, checked / 2);
}

TEST(LowComplexity, DefaultThresholdMasksShortUnitsAndAlmostNoRandomKmers)
{
    std::mt19937_64 rng{11};
    std::string const acgt = "ACGT";
    // perfect repeats of units of 1 to 5 bases score 14.5, 7, 4.5, 3.25 and 2.5
    for (std::string const unit : {"A", "CA", "GTC", "AATG", "ACGTT"})
    {
        std::string s;
        while (s.size() < 31)
            s += unit;
        s.resize(31);
        EXPECT_GT(naive_pairs(s) * 100, 150u * 28) << s;
        EXPECT_TRUE(ksieve::low_complexity(code_of(s), 31, ksieve::default_dust_threshold)) << s;
        EXPECT_TRUE(ksieve::low_complexity(code_of(revcomp(s)), 31, 150)) << s;
    }
    EXPECT_TRUE(ksieve::low_complexity(code_of(std::string(31, 'A')), 31, 150));
    EXPECT_TRUE(ksieve::low_complexity(code_of("CACACACACACACACACACACACACACACAC"), 31, 150));
    int masked = 0;
    for (int i = 0; i < 100000; ++i)
    {
        std::string s;
        for (int j = 0; j < 31; ++j)
            s += acgt[rng() % 4];
        masked += ksieve::low_complexity(code_of(s), 31, 150) ? 1 : 0;
    }
    EXPECT_LT(masked, 100); // about 1e-4 of uniform random 31-mers
}

TEST(LowComplexity, NamesPrintTheThresholdWithTwoDecimals)
{
    ksieve::kmer_params p;
    EXPECT_EQ(ksieve::mask_name(p), "none");
    p.window = 11;
    p.dust_threshold = 150;
    EXPECT_EQ(ksieve::mask_name(p), "dust:1.50");
    p.dust_threshold = 1205;
    EXPECT_EQ(ksieve::mask_name(p), "dust:12.05");
    p.dust_threshold = 7;
    EXPECT_EQ(ksieve::mask_name(p), "dust:0.07");
}
