// build with no sizing flags gives a quotient filter within 15% of the model's bytes per k-mer,
// (ceil(log2(1 / eps)) + 2.125 metadata bits) / 0.9, at the requested FPR; merge and dedup
// --save-filter write fitted tables too.
#include "test_helpers.hpp"

#include <cmath>
#include <random>
#include <string>

using namespace ksieve::test;

namespace
{

double model_bits(double const eps)
{
    return (std::ceil(std::log2(1.0 / eps)) + 2.125) / 0.9;
}

// A random genome of n bases: about n distinct 31-mers.
std::string random_fasta(std::size_t const n, std::uint64_t const seed)
{
    std::mt19937_64 rng{seed};
    std::string s(n + 4, '\n');
    s[0] = '>';
    s[1] = 'g';
    for (std::size_t i = 0; i < n; ++i)
        s[3 + i] = "ACGT"[rng() % 4];
    return s;
}

} // namespace

TEST(sizing, build_without_sizing_flags_is_within_fifteen_percent_of_the_model)
{
    temp_dir tmp;
    for (std::size_t const n : {100000u, 1000000u})
    {
        std::string const fa = tmp / std::to_string(n).append(".fa");
        write_file(fa, random_fasta(n, n));
        for (double const eps : {1e-3, 1e-4})
        {
            std::string const f = tmp / "f.ksf";
            auto const b = run_ksieve("build -q --sampling all --fpr " + std::to_string(eps) +
                                          " -o '" + f + "' '" + fa + "'",
                                      tmp);
            ASSERT_EQ(b.status, 0) << b.err;
            auto const info = run_ksieve("info --json '" + f + "'", tmp);
            ASSERT_EQ(info.status, 0) << info.err;
            double const distinct = json_number(info.out, "distinct_kmers");
            EXPECT_GT(distinct, 0.99 * static_cast<double>(n - 30));
            double const bits = 8.0 * json_number(info.out, "file_bytes") / distinct;
            EXPECT_LE(bits, 1.15 * model_bits(eps)) << n << " k-mers, eps " << eps;
            EXPECT_LE(json_number(info.out, "estimated_fpr"), eps);
            EXPECT_LE(json_number(info.out, "load"), 0.9);
        }
    }
}

// merge sizes its result to fit: the union of two halves takes about the bytes of a build of the
// whole.
TEST(sizing, merge_of_halves_is_about_the_size_of_the_whole)
{
    temp_dir tmp;
    std::string const a = tmp / "a.fa", b = tmp / "b.fa", ab = tmp / "ab.fa";
    std::string const ta = random_fasta(400000, 1), tb = random_fasta(400000, 2);
    write_file(a, ta);
    write_file(b, tb);
    write_file(ab, ta + tb);
    for (auto const & [out, args] : std::vector<std::pair<std::string, std::string>>{
             {"a.ksf", "'" + a + "'"}, {"b.ksf", "'" + b + "'"}, {"whole.ksf", "'" + ab + "'"}})
    {
        auto const r = run_ksieve("build -q --sampling all --fpr 0.001 --expected 800000 -o '" +
                                      (tmp / out) + "' " + args,
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
    }
    auto const m = run_ksieve("merge -q -o '" + (tmp / "m.ksf") + "' '" + (tmp / "a.ksf") + "' '" +
                                  (tmp / "b.ksf") + "'",
                              tmp);
    ASSERT_EQ(m.status, 0) << m.err;
    auto const whole = run_ksieve("info --json '" + (tmp / "whole.ksf") + "'", tmp);
    auto const merged = run_ksieve("info --json '" + (tmp / "m.ksf") + "'", tmp);
    EXPECT_EQ(json_number(merged.out, "distinct_kmers"), json_number(whole.out, "distinct_kmers"));
    EXPECT_LE(json_number(merged.out, "file_bytes"), 1.05 * json_number(whole.out, "file_bytes"));
    EXPECT_LE(json_number(merged.out, "load"), 0.9);
    EXPECT_GT(json_number(merged.out, "load"), 0.8);
}

// Per-sample filters sized for their own k-mers (no --expected) merge at the narrowest
// fingerprints, whose false-positive rate grows with the k-mers merged: merge warns when the
// result's estimate is above 1.5x the target, and says nothing when every input was sized for the
// union.
TEST(sizing, merge_warns_when_its_inputs_were_sized_for_fewer_kmers_than_the_result)
{
    temp_dir tmp;
    std::string const small = tmp / "small.fa", big = tmp / "big.fa";
    write_file(small, random_fasta(2000, 7));
    write_file(big, random_fasta(200000, 8));
    for (std::string const sizing : {"", "--expected 300000 "})
    {
        SCOPED_TRACE(sizing.empty() ? "each sized for itself" : sizing);
        for (std::string const name : {"small", "big"})
        {
            auto const r =
                run_ksieve("build -q --sampling all --fpr 0.001 " + sizing + "-o '" +
                               (tmp / (name + ".ksf")) + "' '" + (tmp / (name + ".fa")) + "'",
                           tmp);
            ASSERT_EQ(r.status, 0) << r.err;
        }
        std::string const out = tmp / "m.ksf";
        auto const m = run_ksieve("merge -q -o '" + out + "' '" + (tmp / "small.ksf") + "' '" +
                                      (tmp / "big.ksf") + "'",
                                  tmp);
        ASSERT_EQ(m.status, 0) << m.err;
        auto const info = run_ksieve("info --json '" + out + "'", tmp);
        ASSERT_EQ(info.status, 0) << info.err;
        double const estimate = json_number(info.out, "estimated_fpr");
        if (sizing.empty())
        {
            EXPECT_GT(estimate, 0.0015);
            EXPECT_EQ(m.err.rfind("ksieve: warning: '" + out + "' holds ", 0), 0u) << m.err;
        }
        else
        {
            EXPECT_LE(estimate, 0.0015);
            EXPECT_EQ(m.err, "");
        }
    }
}
