// End-to-end tests of ksieve build through the ksieve binary: sizing, key-space parts, determinism
// and full or overgrown filters, on real data generated from Debian packages
// (tests/data/generate.sh).
#include "test_helpers.hpp"

#include <algorithm>
#include <sstream>

using namespace ksieve::test;

TEST_F(commands, expected_auto_sizes_a_quotient_filter_to_its_input_and_keeps_every_promise)
{
    std::string const ref = data("HS11286.fa").string();
    // From stdin (read once) a quotient filter is designed for a fixed number of k-mers instead.
    std::string const fixed = tmp / "fixed.ksf";
    ASSERT_EQ(
        run_ksieve("build -q --sampling all -o '" + fixed + "' - < '" + ref + "'", tmp).status, 0);
    auto const number = json_number;
    std::string first;
    for (int const t : {1, 2})
    {
        std::string const f = tmp / ("auto" + std::to_string(t) + ".ksf");
        auto const b = run_ksieve("build -q --sampling all -t " + std::to_string(t) +
                                      " --expected auto -o '" + f + "' '" + ref + "'",
                                  tmp);
        ASSERT_EQ(b.status, 0) << b.err;
        if (t == 1)
            first = read_file(f);
        else
            EXPECT_EQ(read_file(f), first) << "--expected auto, threads " << t;
    }
    std::string const f = tmp / "auto1.ksf";
    // Smaller than the data-independent default, sized from a count close to the exact one.
    EXPECT_LT(first.size() * 10, read_file(fixed).size() * 8);
    auto const info = run_ksieve("info --json '" + f + "'", tmp);
    ASSERT_EQ(info.status, 0) << info.err;
    double const distinct = static_cast<double>(kmer_set_of_fasta(ref, 31).size());
    EXPECT_GE(number(info.out, "expected"), distinct); // 5% margin over the estimate
    EXPECT_LE(number(info.out, "expected"), 1.15 * distinct);
    EXPECT_LE(number(info.out, "estimated_fpr"), 0.001);
    // No false negatives, and the measured FPR as asked.
    for (auto const & [input, expect_known] : std::vector<std::pair<std::string, bool>>{
             {"hs_errfree.fq", true}, {"lambda_reads.fq", false}, {"sra.fq.gz", false}})
    {
        std::string const report = tmp / (input + ".auto.tsv");
        auto const r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f +
                                      "' --report '" + report + "' '" + data(input).string() + "'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        std::uint64_t kmers = 0, hits = 0, known = 0;
        auto const rows = read_report(report);
        for (auto const & row : rows)
        {
            kmers += row.kmers;
            hits += row.hits;
            known += row.cls == "known";
        }
        if (expect_known)
        {
            EXPECT_EQ(hits, kmers) << input;
            EXPECT_EQ(known, rows.size()) << input;
        }
        else
            EXPECT_LE(static_cast<double>(hits), 1.5 * 0.001 * static_cast<double>(kmers)) << input;
    }
    // Where a first pass is impossible: usage errors, nothing written.
    for (std::string const & args :
         {std::string{"dedup -q --expected auto '"} + ref + "'",
          "build -q --sampling all --expected 0 -o '" + (tmp / "z.ksf") + "' '" + ref + "'",
          "build -q --sampling all --expected lots -o '" + (tmp / "z.ksf") + "' '" + ref + "'"})
    {
        auto const r = run_ksieve(args, tmp);
        EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
        EXPECT_NE(r.err.find("--expected"), std::string::npos) << r.err;
    }
    EXPECT_FALSE(std::filesystem::exists(tmp / "z.ksf"));
}

// A --part I/S part records which part it holds: info shows it, classify refuses a split with a
// part missing (its k-mers would all be misses), merge keeps the union (whole once every part is
// in) and refuses to hide missing parts behind whole filters. Oracle: the full build's report.
TEST_F(commands, shard_parts_are_recorded_and_checked)
{
    std::string const ref = data("HS11286.fa").string();
    std::string const reads =
        "'" + data("hs_R1.fq").string() + "' '" + data("lambda_reads.fq").string() + "'";
    for (std::string const opts : {"-k 25", "-k 25 --type bloom"})
    {
        SCOPED_TRACE(opts);
        std::string const tag = opts.find("bloom") == std::string::npos ? "q" : "b";
        std::string const full = tmp / ("full_" + tag + ".ksf");
        ASSERT_EQ(
            run_ksieve("build -q --sampling all " + opts + " -o '" + full + "' '" + ref + "'", tmp)
                .status,
            0);
        std::vector<std::string> part;
        for (int i = 0; i < 3; ++i)
        {
            part.push_back(tmp / ("p_" + tag + std::to_string(i) + ".ksf"));
            auto const r =
                run_ksieve("build -q --sampling all " + opts + " --part " + std::to_string(i) +
                               "/3 -o '" + part.back() + "' '" + ref + "'",
                           tmp);
            ASSERT_EQ(r.status, 0) << r.err;
        }
        auto info = [&](std::string const & f)
        {
            auto const r = run_ksieve("info --json '" + f + "'", tmp);
            EXPECT_EQ(r.status, 0) << r.err;
            return r.out;
        };
        EXPECT_NE(info(part[1]).find("\"key_parts\": \"part 1 of 3\""), std::string::npos)
            << info(part[1]);
        EXPECT_NE(info(part[1]).find("\"key_split\": 3"), std::string::npos) << info(part[1]);
        EXPECT_NE(info(full).find("\"key_parts\": \"all\""), std::string::npos) << info(full);
        EXPECT_NE(info(full).find("\"format_version\": 3"), std::string::npos) << info(full);

        auto classify = [&](std::string const & filters, std::string const & name)
        {
            std::string const rep = tmp / (name + tag + ".tsv");
            auto r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 " + filters +
                                    " --report '" + rep + "' " + reads,
                                tmp);
            r.out = r.status == 0 ? read_file(rep) : std::string{};
            EXPECT_FALSE(r.status != 0 && fs::exists(rep)) << "no partial output";
            return r;
        };
        std::string const expected = classify("-f '" + full + "'", "full").out;
        ASSERT_FALSE(expected.empty());

        // classify with a part missing: a clear error naming a part's file and the missing part
        for (auto const & filters :
             {"-f '" + part[0] + "' -f '" + part[1] + "'", "-f '" + part[2] + "'",
              "-f '" + full + "' -f '" + part[0] + "' -f '" + part[2] + "'"})
        {
            SCOPED_TRACE(filters);
            auto const r = classify(filters, "missing");
            EXPECT_EQ(r.status, 1) << r.err;
            EXPECT_EQ(r.err.rfind("ksieve: error: ", 0), 0u) << r.err;
            EXPECT_NE(r.err.find(".ksf'"), std::string::npos) << r.err;
            EXPECT_NE(r.err.find("of 3"), std::string::npos) << r.err;
        }

        // merge of two parts: still a part (parts 0, 1 of 3), then completed by the third
        std::string const m01 = tmp / ("m01_" + tag + ".ksf");
        auto r = run_ksieve("merge -q -o '" + m01 + "' '" + part[0] + "' '" + part[1] + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_NE(info(m01).find("\"key_parts\": \"parts 0, 1 of 3\""), std::string::npos)
            << info(m01);
        EXPECT_EQ(classify("-f '" + m01 + "'", "m01").status, 1);
        std::string const all = tmp / ("all_" + tag + ".ksf");
        r = run_ksieve("merge -q -o '" + all + "' '" + m01 + "' '" + part[2] + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_NE(info(all).find("\"key_parts\": \"all\""), std::string::npos) << info(all);
        EXPECT_EQ(classify("-f '" + all + "'", "all").out, expected);
        if (tag == "q") // quotient filter parts as several -f answer exactly as the full build
        {
            EXPECT_EQ(classify("-f '" + m01 + "' -f '" + part[2] + "'", "m01_p2").out, expected);
        }

        // merge of a part with a whole filter would hide the missing parts: refused, nothing
        // written
        std::string const bad = tmp / ("bad_" + tag + ".ksf");
        r = run_ksieve("merge -q -o '" + bad + "' '" + full + "' '" + part[0] + "'", tmp);
        EXPECT_EQ(r.status, 1) << r.err;
        EXPECT_NE(r.err.find(part[0]), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("parts 1, 2 of 3"), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(bad));
    }
    // Lossy quotient filter parts whose fingerprints collide across parts (a small --expected, a
    // high --fpr, 40 parts): as several -f they still answer as the full build, hit for hit, also
    // with --min-count above 1 (a fingerprint that keys of several parts share counts their summed
    // count, as in the full build), with exact hit counts and with early decisions.
    std::string const lam = data("lambda.fa").string();
    std::string const opts = "-k 25 --fpr 0.2 --expected 48000";
    std::string const full = tmp / "lossy_full.ksf";
    ASSERT_EQ(
        run_ksieve("build -q --sampling all " + opts + " -o '" + full + "' '" + lam + "'", tmp)
            .status,
        0);
    std::string several;
    for (int i = 0; i < 40; ++i)
    {
        std::string const part = tmp / ("lossy_" + std::to_string(i) + ".ksf");
        auto const r = run_ksieve("build -q --sampling all " + opts + " --part " +
                                      std::to_string(i) + "/40 -o '" + part + "' '" + lam + "'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        several += " -f '" + part + "'";
    }
    for (std::string const min_count : {"1", "2", "3"})
    {
        SCOPED_TRACE("--min-count " + min_count);
        for (auto const & [filters, name] : std::vector<std::pair<std::string, std::string>>{
                 {"-f '" + full + "'", "lossy_full"}, {several, "lossy_parts"}})
        {
            std::string const rule =
                "classify -q --min-hits 0 --min-hit-fraction 0.5 --min-count " + min_count + " ";
            auto r = run_ksieve(
                rule + filters + " --report '" + tmp / (name + ".tsv") + "' " + reads, tmp);
            ASSERT_EQ(r.status, 0) << r.err;
            r = run_ksieve(rule + filters + " --novel '" + tmp / (name + ".fa") + "' " + reads,
                           tmp);
            ASSERT_EQ(r.status, 0) << r.err;
        }
        EXPECT_EQ(read_file(tmp / "lossy_parts.tsv"), read_file(tmp / "lossy_full.tsv"));
        EXPECT_EQ(read_file(tmp / "lossy_parts.fa"), read_file(tmp / "lossy_full.fa"));
    }
}

TEST_F(commands, filter_files_are_byte_identical_for_any_thread_count)
{
    std::string const reads = "'" + data("hs_reads.fq.gz").string() + "'";
    for (std::string const type : {"qf", "bloom", "cuckoo"})
    {
        std::string first;
        for (int const t : {1, 2, 4})
        {
            std::string const f = tmp / (type + std::to_string(t) + ".ksf");
            auto const r = run_ksieve("build -q --sampling all -t " + std::to_string(t) +
                                          " --type " + type + " -o '" + f + "' " + reads,
                                      tmp);
            ASSERT_EQ(r.status, 0) << type << ": " << r.err;
            if (t == 1)
                first = read_file(f);
            else
                EXPECT_EQ(read_file(f), first) << type << " threads " << t;
        }
    }
    std::string first;
    for (int const t : {1, 3})
    {
        std::string const f = tmp / ("dedup" + std::to_string(t) + ".ksf");
        auto const r = run_ksieve(
            "dedup -q -t " + std::to_string(t) + " --save-filter '" + f + "' " + reads, tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        if (t == 1)
            first = read_file(f);
        else
            EXPECT_EQ(read_file(f), first) << "dedup --save-filter, threads " << t;
    }
    auto const info = run_ksieve("info --json '" + (tmp / "dedup1.ksf") + "'", tmp);
    ASSERT_EQ(info.status, 0) << info.err;
    EXPECT_NE(info.out.find("\"type\": \"qf\""), std::string::npos);
}

TEST_F(commands, a_full_filter_is_a_clear_error)
{
    // A cuckoo filter sized for 1000 k-mers cannot take a genome; nothing is written.
    auto const r =
        run_ksieve("build -q --sampling all --type cuckoo --expected 1000 --shards 1 -o '" +
                       (tmp / "c.ksf") + "' '" + data("lambda.fa").string() + "'",
                   tmp);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("full"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("ksieve: error: ", 0), 0u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp / "c.ksf"));

    // A quotient filter grows, but not past the remainder bits its --expected leaves: the error
    // says so.
    auto const q = run_ksieve("build -q --sampling all --expected 1000 -o '" + (tmp / "q.ksf") +
                                  "' '" + data("HS11286.fa").string() + "'",
                              tmp);
    EXPECT_EQ(q.status, 1) << q.err;
    EXPECT_EQ(q.err.rfind("ksieve: error: filter '" + (tmp / "q.ksf") + "' is full", 0), 0u)
        << q.err;
    EXPECT_NE(q.err.find("raise --expected"), std::string::npos) << q.err;
    EXPECT_EQ(q.err.find("--type qf"), std::string::npos)
        << q.err; // the advice for Bloom/cuckoo only
    EXPECT_FALSE(std::filesystem::exists(tmp / "q.ksf"));
}

TEST_F(commands, a_filter_filled_past_its_expected_size_warns_with_its_estimated_fpr)
{
    // Sized for 1000 k-mers, given lambda's 48,000: a quotient filter grows with its fingerprint
    // width fixed, a Bloom filter fills up. Both still answer without false negatives, with a
    // warning naming the FPR.
    auto const e = run_ksieve("build -q --sampling all --fpr 0 -o '" + (tmp / "exact.ksf") + "' '" +
                                  data("lambda.fa").string() + "'",
                              tmp);
    ASSERT_EQ(e.status, 0) << e.err;
    auto const er = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" +
                                   (tmp / "exact.ksf") + "' --report '" + (tmp / "exact.tsv") +
                                   "' '" + data("lambda_reads.fq").string() + "'",
                               tmp);
    ASSERT_EQ(er.status, 0) << er.err;
    for (std::string const type : {"qf", "bloom"})
    {
        std::string const f = tmp / (type + ".ksf");
        auto const b =
            run_ksieve("build -q --sampling all --type " + type + " --expected 1000 -o '" + f +
                           "' '" + data("lambda.fa").string() + "'",
                       tmp);
        ASSERT_EQ(b.status, 0) << b.err;
        EXPECT_EQ(b.err.rfind("ksieve: warning: filter '" + f + "' holds ", 0), 0u) << b.err;
        EXPECT_NE(b.err.find("estimated false-positive rate is"), std::string::npos) << b.err;
        // build's default --fpr: 0.0001 for a quotient filter, 0.001 for a Bloom filter
        EXPECT_NE(b.err.find(type == "qf" ? "instead of 0.0001" : "instead of 0.001"),
                  std::string::npos)
            << b.err;
        auto const info = run_ksieve("info --json '" + f + "'", tmp);
        ASSERT_EQ(info.status, 0) << info.err;
        EXPECT_GT(json_number(info.out, "estimated_fpr"), 0.0015) << type;
        // No false negatives: every read has at least the hits of an exact k-mer set.
        auto const c =
            run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f + "' --report '" +
                           (tmp / "over.tsv") + "' '" + data("lambda_reads.fq").string() + "'",
                       tmp);
        ASSERT_EQ(c.status, 0) << c.err;
        auto const over = read_report(tmp / "over.tsv");
        auto const exact = read_report(tmp / "exact.tsv");
        ASSERT_EQ(over.size(), exact.size());
        for (std::size_t i = 0; i < over.size(); ++i)
            EXPECT_GE(over[i].hits, exact[i].hits) << type << " " << over[i].id;
    }
    // A filter sized for its input says nothing; info explains a default quotient filter's design
    // size.
    for (std::string const sizing : {"", "--expected auto", "--type bloom"})
    {
        auto const b = run_ksieve("build -q --sampling all " + sizing + " -o '" + (tmp / "ok.ksf") +
                                      "' '" + data("lambda.fa").string() + "'",
                                  tmp);
        ASSERT_EQ(b.status, 0) << b.err;
        EXPECT_EQ(b.err, "") << sizing;
        auto const info = run_ksieve("info '" + (tmp / "ok.ksf") + "'", tmp);
        ASSERT_EQ(info.status, 0) << info.err;
        EXPECT_EQ(info.out.find("expected\t0 (not given"), std::string::npos) << sizing << "\n"
                                                                              << info.out;
    }
    // From stdin a quotient filter is designed for 2^30 k-mers, and info says so.
    auto const b = run_ksieve("build -q --sampling all -o '" + (tmp / "stdin.ksf") + "' - < '" +
                                  data("lambda.fa").string() + "'",
                              tmp);
    ASSERT_EQ(b.status, 0) << b.err;
    auto const info = run_ksieve("info '" + (tmp / "stdin.ksf") + "'", tmp);
    EXPECT_NE(info.out.find("expected\t0 (not given: fingerprints sized for up to 2^30 k-mers"),
              std::string::npos)
        << info.out;
    // dedup's own filter too.
    auto const d = run_ksieve(
        "dedup -q --type bloom --expected 1000 '" + data("mixed.fq").string() + "'", tmp);
    ASSERT_EQ(d.status, 0) << d.err;
    EXPECT_EQ(d.err.rfind("ksieve: warning: the dedup filter holds ", 0), 0u) << d.err;
}

// --shard I/S is the older name of --part I/S: the same file, byte for byte; both at once, or a bad
// value under either name, are usage errors; --help lists --part (the older name is not listed as
// an option).
TEST_F(commands, shard_is_the_older_name_of_part)
{
    std::string const ref = data("HS11286.fa").string();
    std::string const by_part = tmp / "part.ksf";
    std::string const by_shard = tmp / "shard.ksf";
    auto r = run_ksieve("build -q -k 25 --part 1/3 -o '" + by_part + "' '" + ref + "'", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    r = run_ksieve("build -q -k 25 --shard 1/3 -o '" + by_shard + "' '" + ref + "'", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(by_part), read_file(by_shard));
    EXPECT_NE(read_file(by_part), "");
    for (std::string const args : {"--part 1/3 --shard 1/3", "--shard 3/3", "--part 3/3"})
    {
        r = run_ksieve("build -q -k 25 " + args + " -o '" + (tmp / "x.ksf") + "' '" + ref + "'",
                       tmp);
        EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    }
    r = run_ksieve("build --help", tmp);
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("--part"), std::string::npos) << r.out;
    std::istringstream lines{r.out};
    for (std::string line; std::getline(lines, line);)
        EXPECT_NE(
            line.substr(std::min(line.find_first_not_of(' '), line.size())).rfind("--shard ", 0),
            0u)
            << line;
}

// build --no-counts of a reference given three times (every k-mer a repeat): the same k-mers as the
// counted build (exact filters: the oracle is the counted one's answers), every count 1, one slot
// each (a smaller file), classify answers equal at --min-count 1 and no hit at --min-count 2; the
// same bytes for any thread count; refused for types that keep no counts.
TEST_F(commands, no_counts_keeps_the_kmers_with_count_one)
{
    std::string const ref = data("lambda.fa").string();
    std::string const reads = data("lambda_reads.fq").string();
    std::string const three = "'" + ref + "' '" + ref + "' '" + ref + "'";
    std::string const counted = tmp / "counted.ksf";
    ASSERT_EQ(run_ksieve("build -q --fpr 0 -o '" + counted + "' " + three, tmp).status, 0);
    std::string first;
    for (int const t : {1, 3})
    {
        std::string const f = tmp / ("nc" + std::to_string(t) + ".ksf");
        auto const b = run_ksieve("build -q --fpr 0 --no-counts -t " + std::to_string(t) + " -o '" +
                                      f + "' " + three,
                                  tmp);
        ASSERT_EQ(b.status, 0) << b.err;
        if (t == 1)
            first = read_file(f);
        else
            EXPECT_EQ(read_file(f), first) << "threads " << t;
    }
    std::string const nc = tmp / "nc1.ksf";
    auto const ic = run_ksieve("info --json '" + counted + "'", tmp).out;
    auto const in = run_ksieve("info --json '" + nc + "'", tmp).out;
    EXPECT_EQ(json_number(in, "distinct_kmers"), json_number(ic, "distinct_kmers"));
    EXPECT_EQ(json_number(in, "total_count"), json_number(in, "distinct_kmers"));
    EXPECT_GE(json_number(ic, "total_count"), 3 * json_number(ic, "distinct_kmers"));
    EXPECT_LT(json_number(in, "file_bytes"), json_number(ic, "file_bytes"));
    for (std::string const min_count : {"1", "2"})
    {
        auto report = [&](std::string const & f)
        {
            std::string const r = tmp / "r.tsv";
            EXPECT_EQ(run_ksieve("classify -q --min-count " + min_count + " -f '" + f +
                                     "' --report '" + r + "' '" + reads + "'",
                                 tmp)
                          .status,
                      0);
            return read_report(r);
        };
        auto const a = report(counted), b = report(nc);
        ASSERT_EQ(a.size(), b.size());
        std::uint64_t hits = 0;
        for (std::size_t i = 0; i < a.size(); ++i)
        {
            EXPECT_EQ(b[i].kmers, a[i].kmers);
            EXPECT_EQ(b[i].hits, min_count == "1" ? a[i].hits : 0u) << i;
            hits += a[i].hits;
        }
        EXPECT_GT(hits, 0u); // the counted filter has every k-mer three times
    }
    auto const bad =
        run_ksieve("build -q --type bloom --no-counts -o '" + (tmp / "b.ksf") + "' " + three, tmp);
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("--no-counts"), std::string::npos) << bad.err;
}
