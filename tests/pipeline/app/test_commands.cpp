// End-to-end tests of build / classify / dedup / merge / info through the ksieve binary, on real data
// generated from Debian packages (tests/data/generate.sh).
#include "test_helpers.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <random>
#include <unordered_set>

using namespace ksieve::test;

namespace
{

// Exact set of canonical k-mers (as upper-case strings) of all sequences of a FASTA file: the oracle.
std::unordered_set<std::string> kmer_set_of_fasta(std::string const & path, unsigned const k)
{
    std::unordered_set<std::string> set;
    std::ifstream f{path};
    std::string line, seq;
    auto flush = [&] {
        for (auto & c : seq)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        for (std::size_t i = 0; i + k <= seq.size(); ++i)
        {
            std::string const s = seq.substr(i, k);
            if (s.find_first_not_of("ACGT") != std::string::npos)
                continue;
            std::string const rc = revcomp(s);
            set.insert(std::min(s, rc));
        }
        seq.clear();
    };
    while (std::getline(f, line))
    {
        if (!line.empty() && line[0] == '>')
            flush();
        else
            seq += line;
    }
    flush();
    return set;
}

// Hits of each FASTQ read against the oracle set.
std::vector<std::pair<std::uint64_t, std::uint64_t>> oracle_hits(std::vector<std::string> const & fastq_records,
                                                                 std::unordered_set<std::string> const & set,
                                                                 unsigned const k)
{
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    for (auto const & rec : fastq_records)
    {
        std::size_t const a = rec.find('\n') + 1;
        std::string seq = rec.substr(a, rec.find('\n', a) - a);
        for (auto & c : seq)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        std::uint64_t kmers = 0, hits = 0;
        for (std::size_t i = 0; i + k <= seq.size(); ++i)
        {
            std::string const s = seq.substr(i, k);
            if (s.find_first_not_of("ACGT") != std::string::npos)
                continue;
            ++kmers;
            hits += set.count(std::min(s, revcomp(s)));
        }
        out.emplace_back(kmers, hits);
    }
    return out;
}

class commands : public ::testing::Test
{
protected:
    void SetUp() override { KSIEVE_REQUIRE_DATA(); }
    temp_dir tmp;

    std::string build_hs(std::string const & extra = "")
    {
        std::string const path = tmp / "hs.ksf";
        auto const r = run_ksieve("build -q --sampling all -o '" + path + "' " + extra + " '" + data("HS11286.fa").string() + "'", tmp);
        EXPECT_EQ(r.status, 0) << r.err;
        return path;
    }
};

} // namespace

TEST_F(commands, version_and_help)
{
    auto r = run_ksieve("--version", tmp);
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("ksieve "), std::string::npos);
    r = run_ksieve("--help", tmp);
    EXPECT_EQ(r.status, 0);
    for (char const * cmd : {"build", "classify", "dedup", "merge", "info"})
        EXPECT_NE(r.out.find(cmd), std::string::npos) << cmd;
    r = run_ksieve("classify --help", tmp);
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("--min-hit-fraction"), std::string::npos);
}

TEST_F(commands, errorfree_reads_of_the_reference_are_all_known_and_foreign_reads_novel)
{
    std::string const f = build_hs();
    for (auto const & [input, expect_known] : std::vector<std::pair<std::string, bool>>{
             {"hs_errfree.fq", true}, {"lambda_reads.fq", false}, {"sra.fq.gz", false}})
    {
        std::string const report = tmp / (input + ".tsv");
        auto const r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f + "' --report '" + report + "' '" + data(input).string() + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        auto const rows = read_report(report);
        ASSERT_GT(rows.size(), 100u);
        std::size_t known = 0;
        std::uint64_t kmers = 0, hits = 0;
        for (auto const & row : rows)
        {
            known += row.cls == "known";
            kmers += row.kmers;
            hits += row.hits;
        }
        if (expect_known)
        {
            EXPECT_EQ(known, rows.size()) << input;
            EXPECT_EQ(hits, kmers) << input;
        }
        else
        {
            EXPECT_EQ(known, 0u) << input;
            // per-k-mer false positives stay within 1.5 x the default FPR 0.001
            EXPECT_LE(static_cast<double>(hits), 1.5 * 0.001 * static_cast<double>(kmers)) << input;
        }
    }
}

TEST_F(commands, expected_auto_sizes_a_quotient_filter_to_its_input_and_keeps_every_promise)
{
    std::string const ref = data("HS11286.fa").string();
    // From stdin (read once) a quotient filter is designed for a fixed number of k-mers instead.
    std::string const fixed = tmp / "fixed.ksf";
    ASSERT_EQ(run_ksieve("build -q --sampling all -o '" + fixed + "' - < '" + ref + "'", tmp).status, 0);
    auto const number = json_number;
    std::string first;
    for (int const t : {1, 2})
    {
        std::string const f = tmp / ("auto" + std::to_string(t) + ".ksf");
        auto const b = run_ksieve("build -q --sampling all -t " + std::to_string(t) + " --expected auto -o '" + f + "' '" + ref + "'", tmp);
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
    EXPECT_GE(number(info.out, "expected"), distinct);        // 5% margin over the estimate
    EXPECT_LE(number(info.out, "expected"), 1.15 * distinct);
    EXPECT_LE(number(info.out, "estimated_fpr"), 0.001);
    // No false negatives, and the measured FPR as asked.
    for (auto const & [input, expect_known] : std::vector<std::pair<std::string, bool>>{
             {"hs_errfree.fq", true}, {"lambda_reads.fq", false}, {"sra.fq.gz", false}})
    {
        std::string const report = tmp / (input + ".auto.tsv");
        auto const r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f + "' --report '" + report + "' '" + data(input).string() + "'", tmp);
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
    for (std::string const & args : {std::string{"dedup -q --expected auto '"} + ref + "'",
                                     "build -q --sampling all --expected 0 -o '" + (tmp / "z.ksf") + "' '" + ref + "'",
                                     "build -q --sampling all --expected lots -o '" + (tmp / "z.ksf") + "' '" + ref + "'"})
    {
        auto const r = run_ksieve(args, tmp);
        EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
        EXPECT_NE(r.err.find("--expected"), std::string::npos) << r.err;
    }
    EXPECT_FALSE(std::filesystem::exists(tmp / "z.ksf"));
}

TEST_F(commands, exact_quotient_filter_gives_exactly_the_hits_of_an_exact_kmer_set)
{
    std::string const f = tmp / "lambda.ksf";
    auto const b = run_ksieve("build -q --sampling all --fpr 0 -k 25 -o '" + f + "' '" + data("lambda.fa").string() + "'", tmp);
    ASSERT_EQ(b.status, 0) << b.err;
    std::string const report = tmp / "r.tsv";
    // Realistic lambda reads (with errors) give partial hits: the interesting case for exactness.
    auto const r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f + "' --report '" + report + "' '" +
                                  data("lambda_reads.fq").string() + "' '" + data("hs_R1.fq").string() + "'",
                              tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    auto const rows = read_report(report);
    auto records = split_fastq(read_file(data("lambda_reads.fq").string()));
    auto const hs = split_fastq(read_file(data("hs_R1.fq").string()));
    records.insert(records.end(), hs.begin(), hs.end());
    auto const oracle = oracle_hits(records, kmer_set_of_fasta(data("lambda.fa").string(), 25), 25);
    ASSERT_EQ(rows.size(), oracle.size());
    std::size_t partial = 0;
    for (std::size_t i = 0; i < rows.size(); ++i)
    {
        ASSERT_EQ(rows[i].kmers, oracle[i].first) << i;
        ASSERT_EQ(rows[i].hits, oracle[i].second) << i;
        partial += oracle[i].second > 0 && oracle[i].second < oracle[i].first;
    }
    EXPECT_GT(partial, 10u); // the data really exercises partial hits
}

TEST_F(commands, nothing_lost_fastq_fasta_gz_and_thread_counts_are_byte_identical)
{
    std::string const f = build_hs();
    std::string const mixed = data("mixed.fq").string();
    std::string const original = read_file(mixed);
    std::string reference_known, reference_novel, reference_report;
    for (int const t : {1, 2, 4})
    {
        std::string const d = tmp / ("t" + std::to_string(t));
        std::filesystem::create_directories(d);
        auto const r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -t " + std::to_string(t) + " -f '" + f + "' --known '" + d +
                                      "/k.fq' --novel '" + d + "/n.fq' --report '" + d + "/r.tsv' --stats '" + d +
                                      "/s.json' '" + mixed + "'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        std::string const known = read_file(d + "/k.fq"), novel = read_file(d + "/n.fq");
        auto const rows = read_report(d + "/r.tsv");
        EXPECT_EQ(merge_back(rows, split_fastq(known), split_fastq(novel)), original);
        // mixed.fq alternates 4000 realistic HS11286 reads (even positions) and 4000 lambda reads (odd).
        ASSERT_EQ(rows.size(), 8000u);
        std::size_t nknown = 0, hs_known = 0;
        for (std::size_t i = 0; i < rows.size(); ++i)
        {
            nknown += rows[i].cls == "known";
            if (i % 2 == 1)
                EXPECT_EQ(rows[i].cls, "novel") << "lambda read " << rows[i].id;
            else
                hs_known += rows[i].cls == "known";
        }
        EXPECT_GE(hs_known, 3900u); // reads with sequencing errors may fall below the 0.5 hit fraction
        std::string const stats = read_file(d + "/s.json");
        EXPECT_NE(stats.find("\"reads\": 8000,"), std::string::npos) << stats;
        EXPECT_NE(stats.find("\"known\": " + std::to_string(nknown) + ","), std::string::npos) << stats;
        EXPECT_NE(stats.find("\"novel\": " + std::to_string(8000 - nknown) + ","), std::string::npos) << stats;
        if (t == 1)
        {
            reference_known = known;
            reference_novel = novel;
            reference_report = read_file(d + "/r.tsv");
        }
        else
        {
            EXPECT_EQ(known, reference_known) << "threads " << t;
            EXPECT_EQ(novel, reference_novel) << "threads " << t;
            EXPECT_EQ(read_file(d + "/r.tsv"), reference_report) << "threads " << t;
        }
    }
    // gz input and gz output: same records after decompression, and the .gz output is deterministic.
    for (int const t : {1, 3})
    {
        auto const r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -t " + std::to_string(t) + " -f '" + f + "' --known '" + (tmp / "k") +
                                      std::to_string(t) + ".fq.gz' --novel '" + (tmp / "n") + std::to_string(t) +
                                      ".fq.gz' '" + mixed + "'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(gunzip(tmp / ("k" + std::to_string(t) + ".fq.gz"), tmp), reference_known);
        EXPECT_EQ(gunzip(tmp / ("n" + std::to_string(t) + ".fq.gz"), tmp), reference_novel);
    }
    EXPECT_EQ(read_file(tmp / "k1.fq.gz"), read_file(tmp / "k3.fq.gz"));
}

// Without --report / --stats classify stops looking up a read's k-mers once its class is decided. The
// classes must be exactly those of the full count (which --report forces), for any fraction, --min-count,
// several filters, pairs and thread counts: the full-count run is the oracle.
TEST_F(commands, classify_early_decision_gives_exactly_the_classes_of_the_full_count)
{
    std::string const lambda = tmp / "lambda.ksf";
    std::string const counted = tmp / "counted.ksf";
    std::string const hs = build_hs();
    // Exact lambda filter: realistic lambda reads have partial hits, so many reads lie near any threshold.
    ASSERT_EQ(run_ksieve("build -q --sampling all --fpr 0 -k 31 -o '" + lambda + "' '" + data("lambda.fa").string() + "'", tmp).status, 0);
    // Counts from reads, for --min-count.
    ASSERT_EQ(run_ksieve("build -q --sampling all -k 31 -o '" + counted + "' '" + data("lambda_reads.fq").string() + "'", tmp).status, 0);
    std::string const mixed = data("mixed.fq").string();
    std::string const r1 = data("hs_R1.fq").string(), r2 = data("hs_R2.fq").string();
    struct variant
    {
        std::string filters, options, input;
    };
    std::vector<variant> const variants{
        {"-f '" + lambda + "'", "--min-hit-fraction 0.5", "'" + mixed + "'"},
        {"-f '" + lambda + "'", "--min-hit-fraction 0.05", "'" + mixed + "'"},
        {"-f '" + lambda + "'", "--min-hit-fraction 0.77", "'" + mixed + "'"},
        {"-f '" + lambda + "'", "--min-hit-fraction 1", "'" + mixed + "'"},
        {"-f '" + counted + "'", "--min-count 3 --min-hit-fraction 0.6", "'" + mixed + "'"},
        {"-f '" + lambda + "' -f '" + hs + "'", "--min-hit-fraction 0.4", "'" + mixed + "'"},
        {"-f '" + hs + "'", "--min-hit-fraction 0.9", "--paired '" + r1 + "' '" + r2 + "'"},
    };
    std::size_t v = 0;
    for (auto const & [filters, options, input] : variants)
    {
        bool const paired = input.starts_with("--paired");
        std::string const d = tmp / ("v" + std::to_string(v++));
        std::filesystem::create_directories(d);
        auto outputs = [&](std::string const & tag) {
            return " --known '" + d + "/k" + tag + ".fq' --novel '" + d + "/n" + tag + ".fq'" +
                   (paired ? " --known2 '" + d + "/k2" + tag + ".fq' --novel2 '" + d + "/n2" + tag + ".fq'" : "");
        };
        auto const full = run_ksieve("classify -q -t 2 " + filters + " " + options + " --report '" + d + "/r.tsv' " +
                                         outputs("full") + " " + input, tmp);
        ASSERT_EQ(full.status, 0) << full.err;
        auto const rows = read_report(d + "/r.tsv");
        std::size_t known = 0, borderline = 0;
        for (auto const & row : rows)
        {
            known += row.cls == "known";
            borderline += row.hits > 0 && row.hits < row.kmers;
        }
        EXPECT_GT(known, 0u) << options;
        EXPECT_LT(known, rows.size()) << options;
        EXPECT_GT(borderline, 10u) << options; // the data exercises partial hits
        for (int const t : {1, 3})
        {
            std::string const tag = "e" + std::to_string(t);
            auto const early = run_ksieve("classify -q -t " + std::to_string(t) + " " + filters + " " + options +
                                              outputs(tag) + " " + input, tmp);
            ASSERT_EQ(early.status, 0) << early.err;
            EXPECT_EQ(read_file(d + "/k" + tag + ".fq"), read_file(d + "/kfull.fq")) << options << " t " << t;
            EXPECT_EQ(read_file(d + "/n" + tag + ".fq"), read_file(d + "/nfull.fq")) << options << " t " << t;
            if (paired)
            {
                EXPECT_EQ(read_file(d + "/k2" + tag + ".fq"), read_file(d + "/k2full.fq")) << options;
                EXPECT_EQ(read_file(d + "/n2" + tag + ".fq"), read_file(d + "/n2full.fq")) << options;
            }
        }
    }
}

TEST_F(commands, nothing_lost_multiline_fasta_input)
{
    std::string const f = build_hs("-k 21");
    // The Klebsiella genomes are multi-line FASTA; as "reads" they test verbatim multi-line output.
    std::string const input = data("klebs4.fa").string();
    auto const r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -k 21 -f '" + f + "' --known '" + (tmp / "k.fa") + "' --novel '" +
                                  (tmp / "n.fa") + "' --report '" + (tmp / "r.tsv") + "' '" + input + "'",
                              tmp);
    // -k is not a classify option: usage error, exit 2, nothing written.
    EXPECT_EQ(r.status, 2);
    EXPECT_FALSE(std::filesystem::exists(tmp / "k.fa"));
    auto const r2 = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f + "' --known '" + (tmp / "k.fa") + "' --novel '" +
                                   (tmp / "n.fa") + "' --report '" + (tmp / "r.tsv") + "' '" + input + "'",
                               tmp);
    ASSERT_EQ(r2.status, 0) << r2.err;
    auto const rows = read_report(tmp / "r.tsv");
    EXPECT_EQ(merge_back(rows, split_fasta(read_file(tmp / "k.fa")), split_fasta(read_file(tmp / "n.fa"))),
              read_file(input));
    ASSERT_FALSE(rows.empty());
    EXPECT_EQ(rows.front().cls, "known"); // HS11286 chromosome itself
}

TEST_F(commands, paired_classification_keeps_mates_together_and_is_deterministic)
{
    std::string const f = build_hs();
    std::string const r1 = data("hs_R1.fq").string(), r2 = data("hs_R2.fq").string();
    std::string ref_out;
    for (int const t : {1, 2, 4})
    {
        std::string const d = tmp / ("p" + std::to_string(t));
        std::filesystem::create_directories(d);
        auto const r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -t " + std::to_string(t) + " -f '" + f + "' --paired '" + r1 + "' '" +
                                      r2 + "' --known '" + d + "/k1.fq' --known2 '" + d + "/k2.fq' --novel '" + d +
                                      "/n1.fq' --novel2 '" + d + "/n2.fq' --report '" + d + "/r.tsv'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        auto const rows = read_report(d + "/r.tsv");
        EXPECT_EQ(merge_back(rows, split_fastq(read_file(d + "/k1.fq")), split_fastq(read_file(d + "/n1.fq"))),
                  read_file(r1));
        EXPECT_EQ(merge_back(rows, split_fastq(read_file(d + "/k2.fq")), split_fastq(read_file(d + "/n2.fq"))),
                  read_file(r2));
        std::string const all = read_file(d + "/k1.fq") + read_file(d + "/k2.fq") + read_file(d + "/n1.fq") +
                                read_file(d + "/n2.fq") + read_file(d + "/r.tsv");
        if (t == 1)
            ref_out = all;
        else
            EXPECT_EQ(all, ref_out) << "threads " << t;
    }
}

TEST_F(commands, dedup_of_a_file_followed_by_itself_marks_the_second_copy_known)
{
    std::string const input = data("hs_reads.fq.gz").string();
    for (int const t : {1, 2, 4})
    {
        std::string const d = tmp / ("d" + std::to_string(t));
        std::filesystem::create_directories(d);
        auto const r = run_ksieve("dedup -q -t " + std::to_string(t) + " --known '" + d + "/k.fq' --novel '" + d +
                                      "/n.fq' --report '" + d + "/r.tsv' '" + input + "' '" + input + "'",
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
        EXPECT_EQ(merge_back(rows, split_fastq(read_file(d + "/k.fq")), split_fastq(read_file(d + "/n.fq"))),
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
    // The input three times (one batch per copy): later copies have units that are known from the counts
    // before their batch, and hits added inside their batch.
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
        bool const known = !kmers.empty() && static_cast<double>(hits) >= fraction * static_cast<double>(kmers.size());
        expected_class.push_back(known ? "known" : "novel");
        expected_hits.push_back(hits);
        if (!known)
            for (auto const & km : kmers)
                ++counts[km];
    }
    for (int const t : {1, 3})
    {
        std::string const report = tmp / ("r" + std::to_string(t) + ".tsv");
        auto const r = run_ksieve("dedup -q --fpr 0 -k 21 --min-count 2 --min-hit-fraction 0.6 -t " +
                                      std::to_string(t) + " --report '" + report + "' '" + input + "' '" + input +
                                      "' '" + input + "'",
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
// rollback), and without --save-filter either it does not count keys already at min_count again. The outputs
// must equal those of the exact run (query + resolver + insert), and so must the saved filter.
TEST_F(commands, dedup_shortcuts_give_the_outputs_of_the_exact_run)
{
    std::string const input = data("hs_reads.fq.gz").string();
    for (std::string const options :
         {"--min-count 1 --min-hit-fraction 0.5", "--min-count 3 --min-hit-fraction 0.3",
          "--min-count 2 --min-hit-fraction 0.000001"})
    {
        std::string const d = tmp / ("o" + std::to_string(options.size()));
        std::filesystem::create_directories(d);
        auto const exact = run_ksieve("dedup -q -k 25 -t 2 " + options + " --report '" + d + "/r.tsv' --save-filter '" +
                                          d + "/f.ksf' --known '" + d + "/k.fq' --novel '" + d + "/n.fq' '" + input +
                                          "' '" + input + "'",
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
                                             " --known '" + d +
                                             "/kf.fq' --novel '" + d + "/nf.fq' '" + input + "' '" + input + "'",
                                         tmp);
            ASSERT_EQ(fast.status, 0) << fast.err;
            EXPECT_EQ(read_file(d + "/kf.fq"), read_file(d + "/k.fq")) << options << " t " << t;
            EXPECT_EQ(read_file(d + "/nf.fq"), read_file(d + "/n.fq")) << options << " t " << t;
            // speculation with the filter saved: the same filter (here even the same bytes: speculative
            // additions did not make it grow earlier)
            auto const saved =
                run_ksieve("dedup -q -k 25 -t " + std::to_string(t) + " " + options + " --save-filter '" + d +
                               "/ff.ksf' --novel '" + d + "/ns.fq' '" + input + "' '" + input + "'",
                           tmp);
            ASSERT_EQ(saved.status, 0) << saved.err;
            EXPECT_EQ(read_file(d + "/ns.fq"), read_file(d + "/n.fq")) << options << " t " << t;
            EXPECT_EQ(read_file(d + "/ff.ksf"), read_file(d + "/f.ksf")) << options << " t " << t;
        }
    }
}

// dedup with the prefilter (normalization, --min-count 3): the same bytes for any thread count, on both the
// speculating path and the path with exact hits (--report); with a prefilter large enough to have no false
// positives on this input, the classes of the run without it; with the default one, within 1% of them.
TEST_F(commands, dedup_prefilter_is_deterministic_and_equals_the_run_without_it)
{
    std::string const input = data("hs_reads.fq.gz").string();
    std::string const rule = "dedup -q -k 25 --min-count 3 --min-hit-fraction 0.5 ";
    auto run = [&](std::string const & name, std::string const & opts)
    {
        auto const r = run_ksieve(rule + opts + " --known '" + (tmp / (name + ".k.fq")) + "' --novel '" +
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
    auto const records = [](std::string const & fq) { return std::count(fq.begin(), fq.end(), '\n') / 4; };
    EXPECT_GT(records(exact), 1000);
    EXPECT_NEAR(static_cast<double>(records(one)), static_cast<double>(records(exact)),
                0.01 * static_cast<double>(records(exact)));
}

// Speculative additions that are rolled back can make a quotient filter grow where a read-by-read run would
// not; dedup --save-filter halves such shards back, so the file is the exact run's, byte for byte. Random
// reads over a tiny k-mer space (k = 5) and a huge one (k = 32, 256 shards) made that growth happen.
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

TEST_F(commands, sharded_builds_merged_equal_the_full_build)
{
    // Sized from --expected's default (quotient filter), from a first pass over the FULL input (--expected
    // auto; a Bloom filter without --expected): every job gets the same parameters.
    std::string const ref = data("HS11286.fa").string();
    std::string const reads = "'" + data("hs_R1.fq").string() + "' '" + data("lambda_reads.fq").string() + "'";
    int setting = 0;
    for (std::string const opts : {"-k 25", "-k 25 --expected auto", "-k 25 --type bloom"})
    {
        SCOPED_TRACE(opts);
        std::string const tag = std::to_string(setting++);
        std::string const full = tmp / ("full" + tag + ".ksf");
        auto r = run_ksieve("build -q --sampling all " + opts + " -o '" + full + "' '" + ref + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        std::vector<std::string> parts;
        for (int i = 0; i < 3; ++i)
        {
            parts.push_back(tmp / ("part" + tag + "_" + std::to_string(i) + ".ksf"));
            r = run_ksieve("build -q --sampling all " + opts + " --shard " + std::to_string(i) + "/3 -o '" + parts.back() + "' '" + ref + "'",
                           tmp);
            ASSERT_EQ(r.status, 0) << r.err;
        }
        std::string const merged = tmp / ("merged" + tag + ".ksf");
        r = run_ksieve("merge -q -o '" + merged + "' '" + parts[0] + "' '" + parts[1] + "' '" + parts[2] + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        auto report_of = [&](std::string const & filters, std::string const & name) {
            std::string const rep = tmp / (name + tag + ".tsv");
            auto const rr = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 " + filters + " --report '" + rep + "' " + reads, tmp);
            EXPECT_EQ(rr.status, 0) << rr.err;
            return read_file(rep);
        };
        std::string const expected = report_of("-f '" + full + "'", "full");
        EXPECT_EQ(report_of("-f '" + merged + "'", "merged"), expected);
        // The parts as several -f: exact for quotient filters (a key's fingerprint is only in the part of its
        // range). A Bloom part also answers keys of other ranges with its own false positives, so only its
        // merge (the OR of equal-sized parts) equals the full build.
        if (opts.find("bloom") == std::string::npos)
        {
            EXPECT_EQ(report_of("-f '" + parts[0] + "' -f '" + parts[1] + "' -f '" + parts[2] + "'", "parts"), expected);
        }
        // info reports the same distinct k-mer count for the merged and the full filter
        auto const a = run_ksieve("info --json '" + full + "'", tmp);
        auto const b = run_ksieve("info --json '" + merged + "'", tmp);
        ASSERT_EQ(a.status, 0) << a.err;
        ASSERT_EQ(b.status, 0) << b.err;
        auto field = [](std::string const & json, std::string const & key) {
            auto const p = json.find("\"" + key + "\":");
            return json.substr(p, json.find(',', p) - p);
        };
        EXPECT_EQ(field(a.out, "distinct_kmers"), field(b.out, "distinct_kmers"));
        EXPECT_EQ(field(a.out, "expected"), field(b.out, "expected"));
    }
}

// --shards is a performance choice: quotient filters built with different --shards merge (into the first
// input's layout) exactly as one build of all samples with that layout. Oracle: that build, compared through
// classify reports with counts (--min-count 2) and info's distinct k-mers and total count.
// Filters sized for different inputs (build's default) merge at the narrowest fingerprint width: exactly as
// one build of all inputs at that width (its --expected and --shards), with no false negatives.
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
        auto const r = run_ksieve("build -q --sampling all -k 25 --shards " + shards[i] + " -o '" + parts.back() +
                                      "' '" + samples[i] + "'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        double const e = json_number(run_ksieve("info --json '" + parts.back() + "'", tmp).out, "expected");
        if (i == 0 || e < narrow_expected)
        {
            narrow_expected = e;
            narrow_shards = shards[i];
        }
    }
    std::string const merged = tmp / "merged.ksf", full = tmp / "full.ksf";
    auto r = run_ksieve("merge -q -o '" + merged + "' '" + parts[0] + "' '" + parts[1] + "' '" + parts[2] + "'", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    r = run_ksieve("build -q --sampling all -k 25 --expected " + std::to_string(static_cast<std::uint64_t>(narrow_expected)) +
                       " --shards " + narrow_shards + " -o '" + full + "' '" + samples[0] + "' '" + samples[1] + "' '" +
                       samples[2] + "'",
                   tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    std::string const reads = "'" + data("hs_R1.fq").string() + "' '" + data("lambda_reads.fq").string() + "' '" +
                              data("sra.fq.gz").string() + "'";
    auto report_of = [&](std::string const & f)
    {
        std::string const rep = f + ".tsv";
        auto const rr = run_ksieve("classify -q --min-count 2 -f '" + f + "' --report '" + rep + "' " + reads, tmp);
        EXPECT_EQ(rr.status, 0) << rr.err;
        return read_file(rep);
    };
    EXPECT_EQ(report_of(merged), report_of(full));
    auto const a = json_number(run_ksieve("info --json '" + merged + "'", tmp).out, "distinct_kmers");
    auto const b = json_number(run_ksieve("info --json '" + full + "'", tmp).out, "distinct_kmers");
    EXPECT_EQ(a, b);
    // no false negatives: every k-mer of every sample is found in the merge
    for (auto const & sample : samples)
    {
        std::string const rep = tmp / "fn.tsv";
        ASSERT_EQ(run_ksieve("classify -q -f '" + merged + "' --report '" + rep + "' '" + sample + "'", tmp).status, 0);
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
            auto const r = run_ksieve("build -q --sampling all " + opts + " --shards " + shards[i] + " -o '" + parts.back() +
                                          "' '" + samples[i] + "'",
                                      tmp);
            ASSERT_EQ(r.status, 0) << r.err;
        }
        auto field = [](std::string const & json, std::string const & key)
        {
            auto const p = json.find("\"" + key + "\":");
            return json.substr(p, json.find(',', p) - p);
        };
        // first input with 4 shards, then with 64: the merge takes the layout of the first input of the
        // narrowest fingerprints (here all are equally wide: the first's)
        for (int const first : {0, 2})
        {
            std::string const full = tmp / ("full" + tag + "_" + std::to_string(first) + ".ksf");
            auto r = run_ksieve("build -q --sampling all " + opts + " --shards " + shards[first] + " -o '" + full + "' '" +
                                    samples[0] + "' '" + samples[1] + "' '" + samples[2] + "'",
                                tmp);
            ASSERT_EQ(r.status, 0) << r.err;
            std::string const merged = tmp / ("merged" + tag + "_" + std::to_string(first) + ".ksf");
            std::string const order = first == 0 ? "'" + parts[0] + "' '" + parts[1] + "' '" + parts[2] + "'"
                                                 : "'" + parts[2] + "' '" + parts[0] + "' '" + parts[1] + "'";
            r = run_ksieve("merge -q -o '" + merged + "' " + order, tmp);
            ASSERT_EQ(r.status, 0) << r.err;
            auto report_of = [&](std::string const & f)
            {
                std::string const rep = f + ".tsv";
                auto const rr = run_ksieve(
                    "classify -q --min-hits 0 --min-hit-fraction 0.5 --min-count 2 -f '" + f + "' --report '" + rep + "' " + reads, tmp);
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
    ASSERT_EQ(
        run_ksieve("build -q --sampling all --type bloom --expected 100000 --shards 4 -o '" + b4 + "' '" + samples[1] + "'",
                   tmp)
            .status,
        0);
    ASSERT_EQ(run_ksieve("build -q --sampling all --type bloom --expected 100000 --shards 16 -o '" + b16 + "' '" +
                             samples[1] + "'",
                         tmp)
                  .status,
              0);
    auto const r = run_ksieve("merge -q -o '" + (tmp / "bm.ksf") + "' '" + b4 + "' '" + b16 + "'", tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("--shards"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp / "bm.ksf"));
}

TEST_F(commands, bad_input_gives_one_clear_error_and_leaves_no_output)
{
    std::string const f = build_hs("-k 15");
    std::string const bad = tmp / "bad.fq";
    write_file(bad, "@r1\nACGT\n+\nIIII\n@r2\nACGTACGT\n+\nIII\n@r3\nACGT\n+\nIIII\n");
    auto const r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f + "' --novel '" + (tmp / "n.fq") + "' --known '" +
                                  (tmp / "k.fq") + "' --report '" + (tmp / "r.tsv") + "' '" + bad + "'",
                              tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("ksieve: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("bad.fq"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("2"), std::string::npos) << r.err; // record number
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (auto const & entry : std::filesystem::directory_iterator{tmp.path()})
    {
        std::string const name = entry.path().filename().string();
        EXPECT_TRUE(name == "hs.ksf" || name == "bad.fq" || name == "stdout.txt" || name == "stderr.txt") << name;
    }
}

TEST_F(commands, corrupted_filter_and_incompatible_merges_are_refused)
{
    std::string const f = build_hs("-k 21");
    std::string bytes = read_file(f);
    bytes[bytes.size() / 2] ^= 0x40;
    std::string const broken = tmp / "broken.ksf";
    write_file(broken, bytes);
    auto r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + broken + "' '" + data("lambda_reads.fq").string() + "'", tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("broken.ksf"), std::string::npos) << r.err;
    r = run_ksieve("info '" + (tmp / "missing.ksf") + "'", tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("missing.ksf"), std::string::npos) << r.err;

    std::string const other = tmp / "k25.ksf";
    r = run_ksieve("build -q --sampling all -k 25 -o '" + other + "' '" + data("lambda.fa").string() + "'", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    r = run_ksieve("merge -q -o '" + (tmp / "m.ksf") + "' '" + f + "' '" + other + "'", tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("k25.ksf"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp / "m.ksf"));
    r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f + "' -f '" + other + "' '" + data("lambda_reads.fq").string() + "'", tmp);
    EXPECT_EQ(r.status, 1);

    std::string const cuckoo = tmp / "c.ksf";
    r = run_ksieve("build -q --sampling all --type cuckoo -k 21 -o '" + cuckoo + "' '" + data("lambda.fa").string() + "'", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    r = run_ksieve("merge -q -o '" + (tmp / "m.ksf") + "' '" + cuckoo + "' '" + cuckoo + "'", tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("cuckoo"), std::string::npos) << r.err;

    // Two filters that each fit their small design size (--expected 1000 at --fpr 0.1: 14-bit fingerprints,
    // at most 2^12 slots) but whose union does not: one clear line naming the inputs, no output.
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
        r = run_ksieve("build -q --sampling all -k 21 --fpr 0.1 --expected 1000 --shards 1 -o '" + small.back() + "' '" +
                           fa + "'",
                       tmp);
        ASSERT_EQ(r.status, 0) << r.err;
    }
    r = run_ksieve("merge -q -o '" + (tmp / "m.ksf") + "' '" + small[0] + "' '" + small[1] + "'", tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("ksieve: error: cannot merge ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("small0.ksf"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("small1.ksf"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp / "m.ksf"));
}

// A --shard I/S part records which part it holds: info shows it, classify refuses a split with a part
// missing (its k-mers would all be misses), merge keeps the union (whole once every part is in) and refuses
// to hide missing parts behind whole filters. Oracle: the full build's report.
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
        ASSERT_EQ(run_ksieve("build -q --sampling all " + opts + " -o '" + full + "' '" + ref + "'", tmp).status, 0);
        std::vector<std::string> part;
        for (int i = 0; i < 3; ++i)
        {
            part.push_back(tmp / ("p_" + tag + std::to_string(i) + ".ksf"));
            auto const r = run_ksieve("build -q --sampling all " + opts + " --shard " + std::to_string(i) + "/3 -o '" +
                                          part.back() + "' '" + ref + "'",
                                      tmp);
            ASSERT_EQ(r.status, 0) << r.err;
        }
        auto info = [&](std::string const & f)
        {
            auto const r = run_ksieve("info --json '" + f + "'", tmp);
            EXPECT_EQ(r.status, 0) << r.err;
            return r.out;
        };
        EXPECT_NE(info(part[1]).find("\"key_parts\": \"part 1 of 3\""), std::string::npos) << info(part[1]);
        EXPECT_NE(info(part[1]).find("\"key_split\": 3"), std::string::npos) << info(part[1]);
        EXPECT_NE(info(full).find("\"key_parts\": \"all\""), std::string::npos) << info(full);
        EXPECT_NE(info(full).find("\"format_version\": 3"), std::string::npos) << info(full);

        auto classify = [&](std::string const & filters, std::string const & name)
        {
            std::string const rep = tmp / (name + tag + ".tsv");
            auto r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 " + filters + " --report '" + rep + "' " + reads, tmp);
            r.out = r.status == 0 ? read_file(rep) : std::string{};
            EXPECT_FALSE(r.status != 0 && fs::exists(rep)) << "no partial output";
            return r;
        };
        std::string const expected = classify("-f '" + full + "'", "full").out;
        ASSERT_FALSE(expected.empty());

        // classify with a part missing: a clear error naming a part's file and the missing part
        for (auto const & filters : {"-f '" + part[0] + "' -f '" + part[1] + "'", "-f '" + part[2] + "'",
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
        EXPECT_NE(info(m01).find("\"key_parts\": \"parts 0, 1 of 3\""), std::string::npos) << info(m01);
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

        // merge of a part with a whole filter would hide the missing parts: refused, nothing written
        std::string const bad = tmp / ("bad_" + tag + ".ksf");
        r = run_ksieve("merge -q -o '" + bad + "' '" + full + "' '" + part[0] + "'", tmp);
        EXPECT_EQ(r.status, 1) << r.err;
        EXPECT_NE(r.err.find(part[0]), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("parts 1, 2 of 3"), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(bad));
    }
    // Lossy quotient filter parts whose fingerprints collide across parts (a small --expected, a high --fpr,
    // 40 parts): as several -f they still answer as the full build, hit for hit, also with --min-count above
    // 1 (a fingerprint that keys of several parts share counts their summed count, as in the full build),
    // with exact hit counts and with early decisions.
    std::string const lam = data("lambda.fa").string();
    std::string const opts = "-k 25 --fpr 0.2 --expected 48000";
    std::string const full = tmp / "lossy_full.ksf";
    ASSERT_EQ(run_ksieve("build -q --sampling all " + opts + " -o '" + full + "' '" + lam + "'", tmp).status, 0);
    std::string several;
    for (int i = 0; i < 40; ++i)
    {
        std::string const part = tmp / ("lossy_" + std::to_string(i) + ".ksf");
        auto const r = run_ksieve("build -q --sampling all " + opts + " --shard " + std::to_string(i) + "/40 -o '" + part +
                                      "' '" + lam + "'",
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
            auto r = run_ksieve(rule + filters + " --report '" + tmp / (name + ".tsv") + "' " + reads, tmp);
            ASSERT_EQ(r.status, 0) << r.err;
            r = run_ksieve(rule + filters + " --novel '" + tmp / (name + ".fa") + "' " + reads, tmp);
            ASSERT_EQ(r.status, 0) << r.err;
        }
        EXPECT_EQ(read_file(tmp / "lossy_parts.tsv"), read_file(tmp / "lossy_full.tsv"));
        EXPECT_EQ(read_file(tmp / "lossy_parts.fa"), read_file(tmp / "lossy_full.fa"));
    }
}

// Records longer than classify's window (contigs, chromosomes, chimeras around the 50% rule) are looked up
// in windows: the report's counts and every class equal those of the same records cut into overlapping
// pieces of 100,000 k-mer positions (the short-record path), summed; with and without early decisions.
TEST_F(commands, long_records_classify_in_windows_as_their_pieces)
{
    unsigned const k = 25;
    auto sequences_of = [](std::string const & path)
    {
        std::vector<std::string> seqs;
        for (std::string const & rec : split_fasta(read_file(path)))
        {
            std::string seq;
            for (std::size_t p = rec.find('\n') + 1; p < rec.size(); ++p)
                if (rec[p] != '\n')
                    seq += rec[p];
            seqs.push_back(seq);
        }
        return seqs;
    };
    std::vector<std::string> const host = sequences_of(data("HS11286.fa").string());
    std::vector<std::string> const lambda = sequences_of(data("lambda.fa").string());
    ASSERT_FALSE(host.empty());
    ASSERT_FALSE(lambda.empty());
    auto lowercase = [](std::string text)
    {
        for (char & c : text)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return text;
    };
    std::string lam6;
    for (int i = 0; i < 6; ++i)
        lam6 += lambda[0];
    std::vector<std::pair<std::string, std::string>> const records{
        {"lambda6", lam6},                           // novel, 291 kbp
        {"above", host[0].substr(0, 300000) + lam6}, // 50.8% host k-mers: known
        {"below", host[0].substr(0, 290000) + lam6}, // 49.9%: novel
        {"chromosome", host[0]},                     // 5.3 Mbp: known
        {"short", host[0].substr(1000, 150)},        // an ordinary read between them
        {"mixed_case_N",
         lowercase(host[1].substr(0, 200000)) + std::string(50, 'N') + lam6.substr(0, 100000)}};
    std::string whole, pieces;
    for (auto const & [name, seq] : records)
    {
        whole += ">" + name + "\n" + seq + "\n";
        for (std::size_t start = 0, j = 0; start == 0 || start + k <= seq.size(); start += 100000, ++j)
            pieces += ">" + name + "__" + std::to_string(j) + "\n" + seq.substr(start, 100000 + k - 1) + "\n";
    }
    write_file(tmp / "long.fa", whole);
    write_file(tmp / "pieces.fa", pieces);
    std::string const filter = tmp / "exact.ksf";
    auto r =
        run_ksieve("build -q --sampling all -k 25 --fpr 0 -o '" + filter + "' '" + data("HS11286.fa").string() + "'", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + filter + "' --report '" + tmp / "pieces.tsv" + "' '" +
                       tmp / "pieces.fa" + "'",
                   tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> sum; // kmers, hits per record
    for (auto const & row : read_report(tmp / "pieces.tsv"))
    {
        auto & [kmers, hits] = sum[row.id.substr(0, row.id.rfind("__"))];
        kmers += row.kmers;
        hits += row.hits;
    }
    std::string expected_known;
    for (auto const & [name, seq] : records)
    {
        auto const [kmers, hits] = sum[name];
        if (kmers > 0 && static_cast<double>(hits) / static_cast<double>(kmers) >= 0.5)
            expected_known += ">" + name + "\n" + seq + "\n";
    }
    EXPECT_NE(expected_known.find(">above"), std::string::npos);
    EXPECT_EQ(expected_known.find(">below"), std::string::npos);
    for (std::string const threads : {"1", "2"})
    {
        SCOPED_TRACE(threads);
        std::string const rep = tmp / ("long" + threads + ".tsv");
        std::string const known_full = tmp / ("known_full" + threads + ".fa");
        std::string const known_early = tmp / ("known_early" + threads + ".fa");
        r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -t " + threads + " -f '" + filter + "' --report '" + rep + "' --known '" +
                           known_full + "' '" + tmp / "long.fa" + "'",
                       tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        auto const rows = read_report(rep);
        ASSERT_EQ(rows.size(), records.size());
        for (auto const & row : rows)
        {
            EXPECT_EQ(row.kmers, sum[row.id].first) << row.id;
            EXPECT_EQ(row.hits, sum[row.id].second) << row.id;
        }
        EXPECT_EQ(read_file(known_full), expected_known);
        r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -t " + threads + " -f '" + filter + "' --known '" + known_early + "' '" +
                           tmp / "long.fa" + "'",
                       tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(read_file(known_early), expected_known);
    }
}

TEST_F(commands, usage_errors_exit_2)
{
    std::string const in = data("lambda_reads.fq").string();
    for (std::string const & args :
         std::vector<std::string>{"classify '" + in + "'",                            // no filter
                                  "build -o x.ksf --fpr 0.7 '" + in + "'",            // fpr out of range
                                  "build -o x.ksf -k 40 '" + in + "'",                // k out of range
                                  "build -o x.ksf --type bloom --fpr 0 '" + in + "'", // exact Bloom
                                  "dedup --min-hit-fraction 0 '" + in + "'",          // fraction out of range
                                  "dedup --type bloom --min-count 3 --expected 1000 '" + in + "'",
                                  "build -o x.ksf --shard 3/3 '" + in + "'",
                                  "build -o x.ksf --seed -1 '" + in + "'", // seeds are 64-bit
                                  "build -o x.ksf --seed 18446744073709551616 '" + in + "'",
                                  "dedup --seed 0x1ffffffffffffffff '" + in + "'",
                                  "dedup --compression-level 10 --novel x.fq.gz '" + in + "'", "frobnicate"})
    {
        auto const r = run_ksieve(args, tmp);
        EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
        EXPECT_EQ(r.err.rfind("ksieve: error: ", 0), 0u) << args << "\n" << r.err;
    }
    // the seeds at the ends of the range, decimal or hexadecimal, are taken as given
    for (auto const & [seed, shown] :
         std::vector<std::pair<std::string, std::string>>{{"18446744073709551615", "0xffffffffffffffff"},
                                                          {"0x10", "0x0000000000000010"},
                                                          {"010", "0x000000000000000a"}, // decimal, not octal
                                                          {"0", "0x0000000000000000"}})
    {
        std::string const f = tmp / "seed.ksf";
        auto const b = run_ksieve("build -q -k 21 --seed " + seed + " -o '" + f + "' '" + in + "'", tmp);
        ASSERT_EQ(b.status, 0) << b.err;
        EXPECT_NE(run_ksieve("info '" + f + "'", tmp).out.find("seed " + shown), std::string::npos) << seed;
    }
}

TEST_F(commands, an_output_that_is_an_input_is_refused_and_the_input_kept)
{
    std::string const in = tmp / "in.fq";
    std::string const text = read_file(data("mixed.fq").string());
    write_file(in, text);
    std::string const f = tmp / "f.ksf";
    ASSERT_EQ(run_ksieve("build -q --sampling all -k 25 -o '" + f + "' '" + data("lambda.fa").string() + "'", tmp).status, 0);
    std::filesystem::create_symlink(in, tmp / "link.fq");
    for (std::string const & args :
         {"classify -f '" + f + "' --novel '" + in + "' '" + in + "'",
          "classify -f '" + f + "' --report '" + (tmp / "link.fq") + "' '" + in + "'", // the same file by another name
          "classify -f '" + f + "' --stats '" + f + "' '" + in + "'",                  // the filter read
          "dedup --known '" + in + "' '" + in + "'", "dedup --save-filter '" + in + "' '" + in + "'",
          "build -o '" + in + "' '" + in + "'"})
    {
        auto const r = run_ksieve(args, tmp);
        EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
        EXPECT_NE(r.err.find("is both an input and an output"), std::string::npos) << r.err;
        EXPECT_EQ(read_file(in), text) << args;
    }
    EXPECT_EQ(run_ksieve("info '" + f + "'", tmp).status, 0);
    // merge may write over one of its inputs (an incremental union), since the result is renamed into place.
    std::string const g = tmp / "g.ksf";
    ASSERT_EQ(run_ksieve("build -q --sampling all -k 25 -o '" + g + "' '" + in + "'", tmp).status, 0);
    auto const m = run_ksieve("merge -o '" + f + "' '" + f + "' '" + g + "'", tmp);
    EXPECT_EQ(m.status, 0) << m.err;
}

// Two outputs on one file are refused before any work, whatever names they give it (`./`, `//`, a link to it,
// the file existing or not); several outputs into /dev/null are fine.
TEST_F(commands, two_outputs_on_one_file_by_any_name_are_refused)
{
    std::string const in = tmp / "in.fq";
    write_file(in, read_file(data("mixed.fq").string()));
    std::string const f = tmp / "f.ksf";
    ASSERT_EQ(
        run_ksieve("build -q --sampling all -k 25 -o '" + f + "' '" + data("lambda.fa").string() + "'", tmp)
            .status,
        0);
    std::string const out = tmp / "out.fq", dir = tmp.path().string();
    std::filesystem::create_symlink(out, tmp / "link.fq");
    for (bool const exists : {false, true})
    {
        if (exists)
            write_file(out, "kept\n");
        for (std::string const & args :
             {"classify -f '" + f + "' --novel '" + out + "' --known '" + dir + "/./out.fq' '" + in + "'",
              "classify -f '" + f + "' --novel '" + out + "' --known '" + dir + "//out.fq' '" + in + "'",
              "classify -f '" + f + "' --novel '" + (tmp / "link.fq") + "' --report '" + out + "' '" + in +
                  "'",
              "dedup --novel '" + out + "' --save-filter '" + dir + "/sub/../out.fq' '" + in + "'",
              // stdout (here a file) and the same file by a name
              "classify -f '" + f + "' --novel - --report /dev/fd/1 '" + in + "'"})
        {
            if (args.find("/sub/") != std::string::npos)
                std::filesystem::create_directories(tmp / "sub");
            auto const r = run_ksieve(args, tmp);
            EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
            EXPECT_NE(r.err.find("both write to"), std::string::npos) << r.err;
            EXPECT_EQ(std::filesystem::exists(out), exists) << args;
            if (exists)
                EXPECT_EQ(read_file(out), "kept\n") << args;
        }
    }
    auto const r =
        run_ksieve("classify -q -f '" + f + "' --novel /dev/null --known /dev/null '" + in + "'", tmp);
    EXPECT_EQ(r.status, 0) << r.err;
    // refused before the input is read: also while stdin waits on a silent writer
    std::string const fifo = tmp / "idle";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
    std::string const cmd = "sleep 20 > '" + fifo + "' 2>/dev/null & w=$!; timeout 10 '" + binary() +
                            "' classify -q -f '" + f + "' --novel '" + out + "' --known '" + dir +
                            "/./out.fq' - < '" + fifo + "' 2>/dev/null; s=$?; kill $w 2>/dev/null; exit $s";
    int const raw = std::system(cmd.c_str());
    EXPECT_EQ(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, 2);
}

// An output that replaces a file keeps that file's permission bits (a new file gets the umask's).
TEST_F(commands, a_replaced_output_keeps_the_permissions_of_the_file_it_replaces)
{
    std::string const in = data("lambda_reads.fq").string();
    std::string const f = tmp / "f.ksf", out = tmp / "out.fq";
    for (auto const perms : {std::filesystem::perms{0640}, std::filesystem::perms{0604}})
    {
        for (std::string const & p : {f, out})
        {
            write_file(p, "old\n");
            std::filesystem::permissions(p, perms);
        }
        ASSERT_EQ(run_ksieve("build -q -k 25 -o '" + f + "' '" + in + "'", tmp).status, 0);
        ASSERT_EQ(run_ksieve("classify -q -f '" + f + "' --novel '" + out + "' '" + in + "'", tmp).status, 0);
        for (std::string const & p : {f, out})
        {
            EXPECT_NE(read_file(p), "old\n") << p;
            EXPECT_EQ(std::filesystem::status(p).permissions() & std::filesystem::perms::all, perms) << p;
        }
    }
}

TEST_F(commands, every_filter_type_has_no_false_negatives_and_info_reports_it)
{
    for (std::string const type : {"qf", "bloom", "cuckoo", "counting-bloom", "bloom-classic"})
    {
        std::string const f = tmp / (type + ".ksf");
        auto r = run_ksieve("build -q --sampling all -k 21 --type " + type + " -o '" + f + "' '" + data("HS11286.fa").string() + "'", tmp);
        ASSERT_EQ(r.status, 0) << type << ": " << r.err;
        std::string const report = tmp / (type + ".tsv");
        r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f + "' --report '" + report + "' '" + data("hs_errfree.fq").string() + "'", tmp);
        ASSERT_EQ(r.status, 0) << type << ": " << r.err;
        for (auto const & row : read_report(report))
            ASSERT_EQ(row.hits, row.kmers) << type << " read " << row.id;
        r = run_ksieve("info --json '" + f + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_NE(r.out.find("\"type\": \"" + type + "\""), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("\"distinct_kmers\""), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("\"k\": 21"), std::string::npos) << r.out;
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
            auto const r = run_ksieve("build -q --sampling all -t " + std::to_string(t) + " --type " + type + " -o '" + f + "' " + reads, tmp);
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
        auto const r = run_ksieve("dedup -q -t " + std::to_string(t) + " --save-filter '" + f + "' " + reads, tmp);
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
    auto const r = run_ksieve("build -q --sampling all --type cuckoo --expected 1000 --shards 1 -o '" + (tmp / "c.ksf") + "' '" +
                                  data("lambda.fa").string() + "'",
                              tmp);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("full"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("ksieve: error: ", 0), 0u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp / "c.ksf"));

    // A quotient filter grows, but not past the remainder bits its --expected leaves: the error says so.
    auto const q = run_ksieve("build -q --sampling all --expected 1000 -o '" + (tmp / "q.ksf") + "' '" + data("HS11286.fa").string() + "'",
                              tmp);
    EXPECT_EQ(q.status, 1) << q.err;
    EXPECT_EQ(q.err.rfind("ksieve: error: filter '" + (tmp / "q.ksf") + "' is full", 0), 0u) << q.err;
    EXPECT_NE(q.err.find("raise --expected"), std::string::npos) << q.err;
    EXPECT_EQ(q.err.find("--type qf"), std::string::npos) << q.err; // the advice for Bloom/cuckoo only
    EXPECT_FALSE(std::filesystem::exists(tmp / "q.ksf"));
}

TEST_F(commands, dedup_sizes_bloom_and_cuckoo_filters_from_a_first_pass)
{
    // Without --expected a Bloom or cuckoo dedup filter is sized from the input's distinct k-mers (as in
    // build); from stdin that takes --expected. The exact quotient filter (--fpr 0) is the oracle.
    std::string const in = data("mixed.fq").string();
    auto const exact = run_ksieve("dedup -q --fpr 0 --stats - '" + in + "'", tmp);
    ASSERT_EQ(exact.status, 0) << exact.err;
    double const known = json_number(exact.out, "known");
    ASSERT_GT(known, 100.0);
    for (std::string const type : {"bloom", "cuckoo"})
    {
        for (int const t : {1, 2})
        {
            auto const r = run_ksieve("dedup -q -t " + std::to_string(t) + " --type " + type + " --stats - --novel '" +
                                          (tmp / (type + std::to_string(t) + ".fq")) + "' '" + in + "'",
                                      tmp);
            ASSERT_EQ(r.status, 0) << type << ": " << r.err;
            EXPECT_EQ(r.err, "") << type; // sized for its input: no over-fill warning
            double const k = json_number(r.out, "known");
            // A false positive can turn a read known (and then not inserted), which can change later decisions
            // either way; at --fpr 0.001 with the 0.5 rule that stays rare.
            EXPECT_LE(std::abs(k - known), 0.01 * known) << type << ": " << k << " known, exact " << known;
        }
        EXPECT_EQ(read_file(tmp / (type + "1.fq")), read_file(tmp / (type + "2.fq"))) << type;
        auto const s = run_ksieve("dedup -q --type " + type + " - < '" + in + "'", tmp);
        EXPECT_EQ(s.status, 2) << s.err;
        EXPECT_NE(s.err.find("needs --expected N"), std::string::npos) << s.err;
    }
}

TEST_F(commands, a_filter_filled_past_its_expected_size_warns_with_its_estimated_fpr)
{
    // Sized for 1000 k-mers, given lambda's 48,000: a quotient filter grows with its fingerprint width fixed,
    // a Bloom filter fills up. Both still answer without false negatives, with a warning naming the FPR.
    auto const e = run_ksieve("build -q --sampling all --fpr 0 -o '" + (tmp / "exact.ksf") + "' '" + data("lambda.fa").string() + "'",
                              tmp);
    ASSERT_EQ(e.status, 0) << e.err;
    auto const er = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + (tmp / "exact.ksf") + "' --report '" + (tmp / "exact.tsv") + "' '" +
                                   data("lambda_reads.fq").string() + "'",
                               tmp);
    ASSERT_EQ(er.status, 0) << er.err;
    for (std::string const type : {"qf", "bloom"})
    {
        std::string const f = tmp / (type + ".ksf");
        auto const b = run_ksieve("build -q --sampling all --type " + type + " --expected 1000 -o '" + f + "' '" +
                                      data("lambda.fa").string() + "'",
                                  tmp);
        ASSERT_EQ(b.status, 0) << b.err;
        EXPECT_EQ(b.err.rfind("ksieve: warning: filter '" + f + "' holds ", 0), 0u) << b.err;
        EXPECT_NE(b.err.find("estimated false-positive rate is"), std::string::npos) << b.err;
        // build's default --fpr: 0.0001 for a quotient filter, 0.001 for a Bloom filter
        EXPECT_NE(b.err.find(type == "qf" ? "instead of 0.0001" : "instead of 0.001"), std::string::npos) << b.err;
        auto const info = run_ksieve("info --json '" + f + "'", tmp);
        ASSERT_EQ(info.status, 0) << info.err;
        EXPECT_GT(json_number(info.out, "estimated_fpr"), 0.0015) << type;
        // No false negatives: every read has at least the hits of an exact k-mer set.
        auto const c = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f + "' --report '" + (tmp / "over.tsv") + "' '" +
                                      data("lambda_reads.fq").string() + "'",
                                  tmp);
        ASSERT_EQ(c.status, 0) << c.err;
        auto const over = read_report(tmp / "over.tsv");
        auto const exact = read_report(tmp / "exact.tsv");
        ASSERT_EQ(over.size(), exact.size());
        for (std::size_t i = 0; i < over.size(); ++i)
            EXPECT_GE(over[i].hits, exact[i].hits) << type << " " << over[i].id;
    }
    // A filter sized for its input says nothing; info explains a default quotient filter's design size.
    for (std::string const sizing : {"", "--expected auto", "--type bloom"})
    {
        auto const b = run_ksieve("build -q --sampling all " + sizing + " -o '" + (tmp / "ok.ksf") + "' '" +
                                      data("lambda.fa").string() + "'",
                                  tmp);
        ASSERT_EQ(b.status, 0) << b.err;
        EXPECT_EQ(b.err, "") << sizing;
        auto const info = run_ksieve("info '" + (tmp / "ok.ksf") + "'", tmp);
        ASSERT_EQ(info.status, 0) << info.err;
        EXPECT_EQ(info.out.find("expected\t0 (not given"), std::string::npos) << sizing << "\n" << info.out;
    }
    // From stdin a quotient filter is designed for 2^30 k-mers, and info says so.
    auto const b = run_ksieve("build -q --sampling all -o '" + (tmp / "stdin.ksf") + "' - < '" +
                                  data("lambda.fa").string() + "'",
                              tmp);
    ASSERT_EQ(b.status, 0) << b.err;
    auto const info = run_ksieve("info '" + (tmp / "stdin.ksf") + "'", tmp);
    EXPECT_NE(info.out.find("expected\t0 (not given: fingerprints sized for up to 2^30 k-mers"), std::string::npos)
        << info.out;
    // dedup's own filter too.
    auto const d = run_ksieve("dedup -q --type bloom --expected 1000 '" + data("mixed.fq").string() + "'", tmp);
    ASSERT_EQ(d.status, 0) << d.err;
    EXPECT_EQ(d.err.rfind("ksieve: warning: the dedup filter holds ", 0), 0u) << d.err;
}
