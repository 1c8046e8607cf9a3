// End-to-end tests of ksieve merge (and the checks of filters combined) through the ksieve binary,
// on real data generated from Debian packages (tests/data/generate.sh).
#include "test_helpers.hpp"

#include <algorithm>
#include <random>

using namespace ksieve::test;

TEST_F(commands, sharded_builds_merged_equal_the_full_build)
{
    // Sized from --expected's default (quotient filter), from a first pass over the FULL input
    // (--expected auto; a Bloom filter without --expected): every job gets the same parameters.
    std::string const ref = data("HS11286.fa").string();
    std::string const reads =
        "'" + data("hs_R1.fq").string() + "' '" + data("lambda_reads.fq").string() + "'";
    int setting = 0;
    for (std::string const opts : {"-k 25", "-k 25 --expected auto", "-k 25 --type bloom"})
    {
        SCOPED_TRACE(opts);
        std::string const tag = std::to_string(setting++);
        std::string const full = tmp / ("full" + tag + ".ksf");
        auto r =
            run_ksieve("build -q --sampling all " + opts + " -o '" + full + "' '" + ref + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        std::vector<std::string> parts;
        for (int i = 0; i < 3; ++i)
        {
            parts.push_back(tmp / ("part" + tag + "_" + std::to_string(i) + ".ksf"));
            r = run_ksieve("build -q --sampling all " + opts + " --part " + std::to_string(i) +
                               "/3 -o '" + parts.back() + "' '" + ref + "'",
                           tmp);
            ASSERT_EQ(r.status, 0) << r.err;
        }
        std::string const merged = tmp / ("merged" + tag + ".ksf");
        r = run_ksieve("merge -q -o '" + merged + "' '" + parts[0] + "' '" + parts[1] + "' '" +
                           parts[2] + "'",
                       tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        auto report_of = [&](std::string const & filters, std::string const & name)
        {
            std::string const rep = tmp / (name + tag + ".tsv");
            auto const rr = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 " +
                                           filters + " --report '" + rep + "' " + reads,
                                       tmp);
            EXPECT_EQ(rr.status, 0) << rr.err;
            return read_file(rep);
        };
        std::string const expected = report_of("-f '" + full + "'", "full");
        EXPECT_EQ(report_of("-f '" + merged + "'", "merged"), expected);
        // The parts as several -f: exact for quotient filters (a key's fingerprint is only in the
        // part of its range). A Bloom part also answers keys of other ranges with its own false
        // positives, so only its merge (the OR of equal-sized parts) equals the full build.
        if (opts.find("bloom") == std::string::npos)
        {
            EXPECT_EQ(report_of("-f '" + parts[0] + "' -f '" + parts[1] + "' -f '" + parts[2] + "'",
                                "parts"),
                      expected);
        }
        // info reports the same distinct k-mer count for the merged and the full filter
        auto const a = run_ksieve("info --json '" + full + "'", tmp);
        auto const b = run_ksieve("info --json '" + merged + "'", tmp);
        ASSERT_EQ(a.status, 0) << a.err;
        ASSERT_EQ(b.status, 0) << b.err;
        auto field = [](std::string const & json, std::string const & key)
        {
            auto const p = json.find("\"" + key + "\":");
            return json.substr(p, json.find(',', p) - p);
        };
        EXPECT_EQ(field(a.out, "distinct_kmers"), field(b.out, "distinct_kmers"));
        EXPECT_EQ(field(a.out, "expected"), field(b.out, "expected"));
    }
}

// --shards is a performance choice: quotient filters built with different --shards merge (into the
// first input's layout) exactly as one build of all samples with that layout. Oracle: that build,
// compared through classify reports with counts (--min-count 2) and info's distinct k-mers and
// total count. Filters sized for different inputs (build's default) merge at the narrowest
// fingerprint width: exactly as one build of all inputs at that width (its --expected and
// --shards), with no false negatives.
TEST_F(commands, merge_of_filters_sized_apart_equals_one_build_at_the_narrowest_width)
{
    std::string const samples[] = {data("hs_R1.fq").string(), data("lambda_reads.fq").string(),
                                   data("hs_R2.fq").string()};
    std::string const shards[] = {"16", "4", "64"};
    std::vector<std::string> parts;
    double narrow_expected = 0;
    std::string narrow_shards;
    for (int i = 0; i < 3; ++i)
    {
        parts.push_back(tmp / ("p" + std::to_string(i) + ".ksf"));
        auto const r = run_ksieve("build -q --sampling all -k 25 --shards " + shards[i] + " -o '" +
                                      parts.back() + "' '" + samples[i] + "'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        double const e =
            json_number(run_ksieve("info --json '" + parts.back() + "'", tmp).out, "expected");
        if (i == 0 || e < narrow_expected)
        {
            narrow_expected = e;
            narrow_shards = shards[i];
        }
    }
    std::string const merged = tmp / "merged.ksf", full = tmp / "full.ksf";
    auto r = run_ksieve("merge -q -o '" + merged + "' '" + parts[0] + "' '" + parts[1] + "' '" +
                            parts[2] + "'",
                        tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    r = run_ksieve("build -q --sampling all -k 25 --expected " +
                       std::to_string(static_cast<std::uint64_t>(narrow_expected)) + " --shards " +
                       narrow_shards + " -o '" + full + "' '" + samples[0] + "' '" + samples[1] +
                       "' '" + samples[2] + "'",
                   tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    std::string const reads = "'" + data("hs_R1.fq").string() + "' '" +
                              data("lambda_reads.fq").string() + "' '" +
                              data("sra.fq.gz").string() + "'";
    auto report_of = [&](std::string const & f)
    {
        std::string const rep = f + ".tsv";
        auto const rr = run_ksieve(
            "classify -q --min-count 2 -f '" + f + "' --report '" + rep + "' " + reads, tmp);
        EXPECT_EQ(rr.status, 0) << rr.err;
        return read_file(rep);
    };
    EXPECT_EQ(report_of(merged), report_of(full));
    auto const a =
        json_number(run_ksieve("info --json '" + merged + "'", tmp).out, "distinct_kmers");
    auto const b = json_number(run_ksieve("info --json '" + full + "'", tmp).out, "distinct_kmers");
    EXPECT_EQ(a, b);
    // no false negatives: every k-mer of every sample is found in the merge
    for (auto const & sample : samples)
    {
        std::string const rep = tmp / "fn.tsv";
        ASSERT_EQ(
            run_ksieve("classify -q -f '" + merged + "' --report '" + rep + "' '" + sample + "'",
                       tmp)
                .status,
            0);
        for (auto const & row : read_report(rep))
            ASSERT_EQ(row.hits, row.kmers) << row.id;
    }
}

TEST_F(commands, merge_of_quotient_filters_with_different_shards_equals_one_build)
{
    std::string const samples[] = {data("hs_R1.fq").string(), data("lambda_reads.fq").string(),
                                   data("hs_R2.fq").string()};
    std::string const shards[] = {"4", "16", "64"};
    std::string const reads =
        "'" + data("hs_R1.fq").string() + "' '" + data("lambda_reads.fq").string() + "'";
    int setting = 0;
    for (std::string const opts : {"-k 25 --expected 3000000", "-k 25 --fpr 0"})
    {
        SCOPED_TRACE(opts);
        std::string const tag = std::to_string(setting++);
        std::vector<std::string> parts;
        for (int i = 0; i < 3; ++i)
        {
            parts.push_back(tmp / ("s" + tag + "_" + std::to_string(i) + ".ksf"));
            auto const r = run_ksieve("build -q --sampling all " + opts + " --shards " + shards[i] +
                                          " -o '" + parts.back() + "' '" + samples[i] + "'",
                                      tmp);
            ASSERT_EQ(r.status, 0) << r.err;
        }
        auto field = [](std::string const & json, std::string const & key)
        {
            auto const p = json.find("\"" + key + "\":");
            return json.substr(p, json.find(',', p) - p);
        };
        // first input with 4 shards, then with 64: the merge keeps the narrowest fingerprints (here
        // all are equally wide) in the most shards an input has that keep that width: 64, either
        // way
        for (int const first : {0, 2})
        {
            std::string const full = tmp / ("full" + tag + "_" + std::to_string(first) + ".ksf");
            auto r = run_ksieve("build -q --sampling all " + opts + " --shards " + shards[2] +
                                    " -o '" + full + "' '" + samples[0] + "' '" + samples[1] +
                                    "' '" + samples[2] + "'",
                                tmp);
            ASSERT_EQ(r.status, 0) << r.err;
            std::string const merged =
                tmp / ("merged" + tag + "_" + std::to_string(first) + ".ksf");
            std::string const order =
                first == 0 ? "'" + parts[0] + "' '" + parts[1] + "' '" + parts[2] + "'"
                           : "'" + parts[2] + "' '" + parts[0] + "' '" + parts[1] + "'";
            r = run_ksieve("merge -q -o '" + merged + "' " + order, tmp);
            ASSERT_EQ(r.status, 0) << r.err;
            auto report_of = [&](std::string const & f)
            {
                std::string const rep = f + ".tsv";
                auto const rr = run_ksieve(
                    "classify -q --min-hits 0 --min-hit-fraction 0.5 --min-count 2 -f '" + f +
                        "' --report '" + rep + "' " + reads,
                    tmp);
                EXPECT_EQ(rr.status, 0) << rr.err;
                return read_file(rep);
            };
            EXPECT_EQ(report_of(merged), report_of(full));
            auto const a = run_ksieve("info --json '" + full + "'", tmp);
            auto const b = run_ksieve("info --json '" + merged + "'", tmp);
            ASSERT_EQ(a.status, 0) << a.err;
            ASSERT_EQ(b.status, 0) << b.err;
            for (char const * key : {"shards", "distinct_kmers", "total_count"})
                EXPECT_EQ(field(a.out, key), field(b.out, key)) << key;
        }
    }
    // Bloom filters are not re-sharded: a clear error naming --shards
    std::string const b4 = tmp / "b4.ksf", b16 = tmp / "b16.ksf";
    ASSERT_EQ(run_ksieve("build -q --sampling all --type bloom --expected 100000 --shards 4 -o '" +
                             b4 + "' '" + samples[1] + "'",
                         tmp)
                  .status,
              0);
    ASSERT_EQ(run_ksieve("build -q --sampling all --type bloom --expected 100000 --shards 16 -o '" +
                             b16 + "' '" + samples[1] + "'",
                         tmp)
                  .status,
              0);
    auto const r =
        run_ksieve("merge -q -o '" + (tmp / "bm.ksf") + "' '" + b4 + "' '" + b16 + "'", tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("--shards"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp / "bm.ksf"));
}

TEST_F(commands, corrupted_filter_and_incompatible_merges_are_refused)
{
    std::string const f = build_hs("-k 21");
    std::string bytes = read_file(f);
    bytes[bytes.size() / 2] ^= 0x40;
    std::string const broken = tmp / "broken.ksf";
    write_file(broken, bytes);
    auto r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + broken + "' '" +
                            data("lambda_reads.fq").string() + "'",
                        tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("broken.ksf"), std::string::npos) << r.err;
    r = run_ksieve("info '" + (tmp / "missing.ksf") + "'", tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("missing.ksf"), std::string::npos) << r.err;

    std::string const other = tmp / "k25.ksf";
    r = run_ksieve("build -q --sampling all -k 25 -o '" + other + "' '" +
                       data("lambda.fa").string() + "'",
                   tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    r = run_ksieve("merge -q -o '" + (tmp / "m.ksf") + "' '" + f + "' '" + other + "'", tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("k25.ksf"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp / "m.ksf"));
    r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f + "' -f '" + other +
                       "' '" + data("lambda_reads.fq").string() + "'",
                   tmp);
    EXPECT_EQ(r.status, 1);

    std::string const cuckoo = tmp / "c.ksf";
    r = run_ksieve("build -q --sampling all --type cuckoo -k 21 -o '" + cuckoo + "' '" +
                       data("lambda.fa").string() + "'",
                   tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    r = run_ksieve("merge -q -o '" + (tmp / "m.ksf") + "' '" + cuckoo + "' '" + cuckoo + "'", tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("cuckoo"), std::string::npos) << r.err;

    // Two filters that each fit their small design size (--expected 1000 at --fpr 0.1: 14-bit
    // fingerprints, at most 2^12 slots) but whose union does not: one clear line naming the inputs,
    // no output.
    std::mt19937_64 rng{21};
    std::vector<std::string> small;
    for (int i = 0; i < 2; ++i)
    {
        std::string seq(2500, 'A');
        for (auto & c : seq)
            c = "ACGT"[rng() % 4];
        std::string const fa = tmp / ("rand" + std::to_string(i) + ".fa");
        write_file(fa, ">r\n" + seq + "\n");
        small.push_back(tmp / ("small" + std::to_string(i) + ".ksf"));
        r = run_ksieve("build -q --sampling all -k 21 --fpr 0.1 --expected 1000 --shards 1 -o '" +
                           small.back() + "' '" + fa + "'",
                       tmp);
        ASSERT_EQ(r.status, 0) << r.err;
    }
    r = run_ksieve("merge -q -o '" + (tmp / "m.ksf") + "' '" + small[0] + "' '" + small[1] + "'",
                   tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("ksieve: error: cannot merge ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("small0.ksf"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("small1.ksf"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp / "m.ksf"));
}
