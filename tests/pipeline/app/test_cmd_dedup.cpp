// End-to-end tests of ksieve dedup through the ksieve binary against its serial definition, on real
// data generated from Debian packages (tests/data/generate.sh).
#include "test_helpers.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <unordered_map>

using namespace ksieve::test;

TEST_F(commands, dedup_of_a_file_followed_by_itself_marks_the_second_copy_known)
{
    std::string const input = data("hs_reads.fq.gz").string();
    for (int const t : {1, 2, 4})
    {
        std::string const d = tmp / ("d" + std::to_string(t));
        std::filesystem::create_directories(d);
        auto const r =
            run_ksieve("dedup -q -t " + std::to_string(t) + " --known '" + d + "/k.fq' --novel '" +
                           d + "/n.fq' --report '" + d + "/r.tsv' '" + input + "' '" + input + "'",
                       tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        auto const rows = read_report(d + "/r.tsv");
        ASSERT_EQ(rows.size() % 2, 0u);
        std::size_t const half = rows.size() / 2;
        for (std::size_t i = half; i < rows.size(); ++i)
        {
            if (rows[i].kmers == 0)
                EXPECT_EQ(rows[i].cls, "novel");
            else
                ASSERT_EQ(rows[i].cls, "known") << "second copy read " << i - half;
        }
        std::string const original = gunzip(input, tmp);
        EXPECT_EQ(merge_back(rows, split_fastq(read_file(d + "/k.fq")),
                             split_fastq(read_file(d + "/n.fq"))),
                  original + original);
        if (t > 1)
        {
            EXPECT_EQ(read_file(d + "/k.fq"), read_file(tmp / "d1/k.fq"));
            EXPECT_EQ(read_file(d + "/r.tsv"), read_file(tmp / "d1/r.tsv"));
        }
    }
}

TEST_F(commands, dedup_equals_its_serial_definition_with_an_exact_filter)
{
    // Oracle: dedup's serial definition computed naively with an exact multiset of k-mers.
    std::string const input = data("hs_R1.fq").string();
    // The input three times (one batch per copy): later copies have units that are known from the
    // counts before their batch, and hits added inside their batch.
    auto const copy = split_fastq(read_file(input));
    std::vector<std::string> records;
    for (int c = 0; c < 3; ++c)
        records.insert(records.end(), copy.begin(), copy.end());
    unsigned const k = 21;
    std::uint64_t const min_count = 2;
    double const fraction = 0.6;
    std::unordered_map<std::string, std::uint64_t> counts;
    std::vector<std::string> expected_class;
    std::vector<std::uint64_t> expected_hits;
    for (auto const & rec : records)
    {
        std::size_t const a = rec.find('\n') + 1;
        std::string const seq = rec.substr(a, rec.find('\n', a) - a);
        std::vector<std::string> kmers;
        for (std::size_t i = 0; i + k <= seq.size(); ++i)
        {
            std::string const s = seq.substr(i, k);
            if (s.find_first_not_of("ACGT") == std::string::npos)
                kmers.push_back(std::min(s, revcomp(s)));
        }
        std::uint64_t hits = 0;
        for (auto const & km : kmers)
        {
            auto const it = counts.find(km);
            hits += it != counts.end() && it->second >= min_count;
        }
        bool const known = !kmers.empty() && static_cast<double>(hits) >=
                                                 fraction * static_cast<double>(kmers.size());
        expected_class.push_back(known ? "known" : "novel");
        expected_hits.push_back(hits);
        if (!known)
            for (auto const & km : kmers)
                ++counts[km];
    }
    for (int const t : {1, 3})
    {
        std::string const report = tmp / ("r" + std::to_string(t) + ".tsv");
        auto const r = run_ksieve(
            "dedup -q --fpr 0 -k 21 --min-count 2 --min-hit-fraction 0.6 -t " + std::to_string(t) +
                " --report '" + report + "' '" + input + "' '" + input + "' '" + input + "'",
            tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        auto const rows = read_report(report);
        ASSERT_EQ(rows.size(), expected_class.size());
        for (std::size_t i = 0; i < rows.size(); ++i)
        {
            ASSERT_EQ(rows[i].cls, expected_class[i]) << "read " << i << " threads " << t;
            ASSERT_EQ(rows[i].hits, expected_hits[i]) << "read " << i << " threads " << t;
        }
    }
}

// Without --report / --stats dedup speculates (dedup_speculator: sampled prediction, fetch-and-add,
// rollback), and without --save-filter either it does not count keys already at min_count again.
// The outputs must equal those of the exact run (query + resolver + insert), and so must the saved
// filter.
TEST_F(commands, dedup_shortcuts_give_the_outputs_of_the_exact_run)
{
    std::string const input = data("hs_reads.fq.gz").string();
    for (std::string const options :
         {"--min-count 1 --min-hit-fraction 0.5", "--min-count 3 --min-hit-fraction 0.3",
          "--min-count 2 --min-hit-fraction 0.000001"})
    {
        std::string const d = tmp / ("o" + std::to_string(options.size()));
        std::filesystem::create_directories(d);
        auto const exact =
            run_ksieve("dedup -q -k 25 -t 2 " + options + " --report '" + d +
                           "/r.tsv' --save-filter '" + d + "/f.ksf' --known '" + d +
                           "/k.fq' --novel '" + d + "/n.fq' '" + input + "' '" + input + "'",
                       tmp);
        ASSERT_EQ(exact.status, 0) << exact.err;
        auto const rows = read_report(d + "/r.tsv");
        std::size_t known = 0;
        for (auto const & row : rows)
            known += row.cls == "known";
        EXPECT_GT(known, rows.size() / 10) << options; // both classes are well represented
        EXPECT_LT(known, rows.size() - rows.size() / 10) << options;
        for (int const t : {1, 3})
        {
            auto const fast = run_ksieve("dedup -q -k 25 -t " + std::to_string(t) + " " + options +
                                             " --known '" + d + "/kf.fq' --novel '" + d +
                                             "/nf.fq' '" + input + "' '" + input + "'",
                                         tmp);
            ASSERT_EQ(fast.status, 0) << fast.err;
            EXPECT_EQ(read_file(d + "/kf.fq"), read_file(d + "/k.fq")) << options << " t " << t;
            EXPECT_EQ(read_file(d + "/nf.fq"), read_file(d + "/n.fq")) << options << " t " << t;
            // speculation with the filter saved: the same filter (here even the same bytes:
            // speculative additions did not make it grow earlier)
            auto const saved = run_ksieve("dedup -q -k 25 -t " + std::to_string(t) + " " + options +
                                              " --save-filter '" + d + "/ff.ksf' --novel '" + d +
                                              "/ns.fq' '" + input + "' '" + input + "'",
                                          tmp);
            ASSERT_EQ(saved.status, 0) << saved.err;
            EXPECT_EQ(read_file(d + "/ns.fq"), read_file(d + "/n.fq")) << options << " t " << t;
            EXPECT_EQ(read_file(d + "/ff.ksf"), read_file(d + "/f.ksf")) << options << " t " << t;
        }
    }
}

// dedup with the prefilter (normalization, --min-count 3): the same bytes for any thread count, on
// both the speculating path and the path with exact hits (--report); with a prefilter large enough
// to have no false positives on this input, the classes of the run without it; with the default
// one, within 1% of them.
TEST_F(commands, dedup_prefilter_is_deterministic_and_equals_the_run_without_it)
{
    std::string const input = data("hs_reads.fq.gz").string();
    std::string const rule = "dedup -q -k 25 --min-count 3 --min-hit-fraction 0.5 ";
    auto run = [&](std::string const & name, std::string const & opts)
    {
        auto const r =
            run_ksieve(rule + opts + " --known '" + (tmp / (name + ".k.fq")) + "' --novel '" +
                           (tmp / (name + ".n.fq")) + "' '" + input + "' '" + input + "'",
                       tmp);
        EXPECT_EQ(r.status, 0) << r.err;
        return read_file(tmp / (name + ".k.fq"));
    };
    auto const exact = run("exact", "-t 2");
    auto const big = run("big", "-t 2 --prefilter --prefilter-size 64M");
    EXPECT_EQ(big, exact);
    EXPECT_EQ(read_file(tmp / "big.n.fq"), read_file(tmp / "exact.n.fq"));
    auto const one = run("one", "-t 1 --prefilter");
    auto const three = run("three", "-t 3 --prefilter");
    EXPECT_EQ(one, three);
    EXPECT_EQ(read_file(tmp / "one.n.fq"), read_file(tmp / "three.n.fq"));
    auto const reported = run("reported", "-t 3 --prefilter --report '" + (tmp / "r3.tsv") + "'");
    auto const reported1 = run("reported1", "-t 1 --prefilter --report '" + (tmp / "r1.tsv") + "'");
    EXPECT_EQ(reported, one); // the path with exact hits decides the same classes
    EXPECT_EQ(read_file(tmp / "r3.tsv"), read_file(tmp / "r1.tsv"));
    auto const records = [](std::string const & fq)
    { return std::count(fq.begin(), fq.end(), '\n') / 4; };
    EXPECT_GT(records(exact), 1000);
    EXPECT_NEAR(static_cast<double>(records(one)), static_cast<double>(records(exact)),
                0.01 * static_cast<double>(records(exact)));
}

// Speculative additions that are rolled back can make a quotient filter grow where a read-by-read
// run would not; dedup --save-filter halves such shards back, so the file is the exact run's, byte
// for byte. Random reads over a tiny k-mer space (k = 5) and a huge one (k = 32, 256 shards) made
// that growth happen.
TEST_F(commands, dedup_save_filter_after_rollbacks_equals_the_exact_run)
{
    std::mt19937_64 rng{13};
    std::string text;
    for (int i = 0; i < 2000; ++i)
    {
        std::size_t const len = std::array<std::size_t, 4>{50, 100, 150, 250}[rng() % 4];
        std::string seq(len, 'A');
        for (auto & c : seq)
            c = "ACGT"[rng() % 4];
        text += "@r" + std::to_string(i) + "\n" + seq + "\n+\n" + std::string(len, 'I') + "\n";
    }
    std::string const in = tmp / "rand.fq";
    write_file(in, text);
    int setting = 0;
    for (std::string const opts : {"-k 5 --min-count 1 --min-hit-fraction 0.8",
                                   "-k 32 --shards 256 --min-count 2 --min-hit-fraction 0.8"})
    {
        SCOPED_TRACE(opts);
        std::string const d = tmp / ("s" + std::to_string(setting++));
        std::filesystem::create_directories(d);
        auto const exact =
            run_ksieve("dedup -q -t 1 " + opts + " --report '" + d + "/r.tsv' --save-filter '" + d +
                           "/exact.ksf' --novel '" + d + "/n1.fq' '" + in + "'",
                       tmp);
        ASSERT_EQ(exact.status, 0) << exact.err;
        auto const fast = run_ksieve("dedup -q -t 2 " + opts + " --save-filter '" + d +
                                         "/fast.ksf' --novel '" + d + "/n2.fq' '" + in + "'",
                                     tmp);
        ASSERT_EQ(fast.status, 0) << fast.err;
        EXPECT_EQ(read_file(d + "/n2.fq"), read_file(d + "/n1.fq"));
        EXPECT_EQ(read_file(d + "/fast.ksf"), read_file(d + "/exact.ksf"));
    }
}

TEST_F(commands, dedup_sizes_bloom_and_cuckoo_filters_from_a_first_pass)
{
    // Without --expected a Bloom or cuckoo dedup filter is sized from the input's distinct k-mers
    // (as in build); from stdin that takes --expected. The exact quotient filter (--fpr 0) is the
    // oracle.
    std::string const in = data("mixed.fq").string();
    auto const exact = run_ksieve("dedup -q --fpr 0 --stats - '" + in + "'", tmp);
    ASSERT_EQ(exact.status, 0) << exact.err;
    double const known = json_number(exact.out, "known");
    ASSERT_GT(known, 100.0);
    for (std::string const type : {"bloom", "cuckoo"})
    {
        for (int const t : {1, 2})
        {
            auto const r = run_ksieve(
                "dedup -q -t " + std::to_string(t) + " --type " + type + " --stats - --novel '" +
                    (tmp / (type + std::to_string(t) + ".fq")) + "' '" + in + "'",
                tmp);
            ASSERT_EQ(r.status, 0) << type << ": " << r.err;
            EXPECT_EQ(r.err, "") << type; // sized for its input: no over-fill warning
            double const k = json_number(r.out, "known");
            // A false positive can turn a read known (and then not inserted), which can change
            // later decisions either way; at --fpr 0.001 with the 0.5 rule that stays rare.
            EXPECT_LE(std::abs(k - known), 0.01 * known)
                << type << ": " << k << " known, exact " << known;
        }
        EXPECT_EQ(read_file(tmp / (type + "1.fq")), read_file(tmp / (type + "2.fq"))) << type;
        auto const s = run_ksieve("dedup -q --type " + type + " - < '" + in + "'", tmp);
        EXPECT_EQ(s.status, 2) << s.err;
        EXPECT_NE(s.err.find("needs --expected N"), std::string::npos) << s.err;
    }
}
