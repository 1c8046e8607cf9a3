// End-to-end tests of ksieve classify through the ksieve binary against an exact k-mer set, on real
// data generated from Debian packages (tests/data/generate.sh).
#include "test_helpers.hpp"

#include <algorithm>
#include <cctype>
#include <map>

using namespace ksieve::test;

TEST_F(commands, errorfree_reads_of_the_reference_are_all_known_and_foreign_reads_novel)
{
    std::string const f = build_hs();
    for (auto const & [input, expect_known] : std::vector<std::pair<std::string, bool>>{
             {"hs_errfree.fq", true}, {"lambda_reads.fq", false}, {"sra.fq.gz", false}})
    {
        std::string const report = tmp / (input + ".tsv");
        auto const r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f +
                                      "' --report '" + report + "' '" + data(input).string() + "'",
                                  tmp);
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

TEST_F(commands, exact_quotient_filter_gives_exactly_the_hits_of_an_exact_kmer_set)
{
    std::string const f = tmp / "lambda.ksf";
    auto const b = run_ksieve("build -q --sampling all --fpr 0 -k 25 -o '" + f + "' '" +
                                  data("lambda.fa").string() + "'",
                              tmp);
    ASSERT_EQ(b.status, 0) << b.err;
    std::string const report = tmp / "r.tsv";
    // Realistic lambda reads (with errors) give partial hits: the interesting case for exactness.
    auto const r = run_ksieve(
        "classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f + "' --report '" + report +
            "' '" + data("lambda_reads.fq").string() + "' '" + data("hs_R1.fq").string() + "'",
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
        auto const r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -t " +
                                      std::to_string(t) + " -f '" + f + "' --known '" + d +
                                      "/k.fq' --novel '" + d + "/n.fq' --report '" + d +
                                      "/r.tsv' --stats '" + d + "/s.json' '" + mixed + "'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        std::string const known = read_file(d + "/k.fq"), novel = read_file(d + "/n.fq");
        auto const rows = read_report(d + "/r.tsv");
        EXPECT_EQ(merge_back(rows, split_fastq(known), split_fastq(novel)), original);
        // mixed.fq alternates 4000 realistic HS11286 reads (even positions) and 4000 lambda reads
        // (odd).
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
        EXPECT_GE(hs_known,
                  3900u); // reads with sequencing errors may fall below the 0.5 hit fraction
        std::string const stats = read_file(d + "/s.json");
        EXPECT_NE(stats.find("\"reads\": 8000,"), std::string::npos) << stats;
        EXPECT_NE(stats.find("\"known\": " + std::to_string(nknown) + ","), std::string::npos)
            << stats;
        EXPECT_NE(stats.find("\"novel\": " + std::to_string(8000 - nknown) + ","),
                  std::string::npos)
            << stats;
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
    // gz input and gz output: same records after decompression, and the .gz output is
    // deterministic.
    for (int const t : {1, 3})
    {
        auto const r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -t " +
                                      std::to_string(t) + " -f '" + f + "' --known '" +
                                      (tmp / "k") + std::to_string(t) + ".fq.gz' --novel '" +
                                      (tmp / "n") + std::to_string(t) + ".fq.gz' '" + mixed + "'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(gunzip(tmp / ("k" + std::to_string(t) + ".fq.gz"), tmp), reference_known);
        EXPECT_EQ(gunzip(tmp / ("n" + std::to_string(t) + ".fq.gz"), tmp), reference_novel);
    }
    EXPECT_EQ(read_file(tmp / "k1.fq.gz"), read_file(tmp / "k3.fq.gz"));
}

// Without --report / --stats classify stops looking up a read's k-mers once its class is decided.
// The classes must be exactly those of the full count (which --report forces), for any fraction,
// --min-count, several filters, pairs and thread counts: the full-count run is the oracle.
TEST_F(commands, classify_early_decision_gives_exactly_the_classes_of_the_full_count)
{
    std::string const lambda = tmp / "lambda.ksf";
    std::string const counted = tmp / "counted.ksf";
    std::string const hs = build_hs();
    // Exact lambda filter: realistic lambda reads have partial hits, so many reads lie near any
    // threshold.
    ASSERT_EQ(run_ksieve("build -q --sampling all --fpr 0 -k 31 -o '" + lambda + "' '" +
                             data("lambda.fa").string() + "'",
                         tmp)
                  .status,
              0);
    // Counts from reads, for --min-count.
    ASSERT_EQ(run_ksieve("build -q --sampling all -k 31 -o '" + counted + "' '" +
                             data("lambda_reads.fq").string() + "'",
                         tmp)
                  .status,
              0);
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
        auto outputs = [&](std::string const & tag)
        {
            return " --known '" + d + "/k" + tag + ".fq' --novel '" + d + "/n" + tag + ".fq'" +
                   (paired ? " --known2 '" + d + "/k2" + tag + ".fq' --novel2 '" + d + "/n2" + tag +
                                 ".fq'"
                           : "");
        };
        auto const full = run_ksieve("classify -q -t 2 " + filters + " " + options + " --report '" +
                                         d + "/r.tsv' " + outputs("full") + " " + input,
                                     tmp);
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
            auto const early = run_ksieve("classify -q -t " + std::to_string(t) + " " + filters +
                                              " " + options + outputs(tag) + " " + input,
                                          tmp);
            ASSERT_EQ(early.status, 0) << early.err;
            EXPECT_EQ(read_file(d + "/k" + tag + ".fq"), read_file(d + "/kfull.fq"))
                << options << " t " << t;
            EXPECT_EQ(read_file(d + "/n" + tag + ".fq"), read_file(d + "/nfull.fq"))
                << options << " t " << t;
            if (paired)
            {
                EXPECT_EQ(read_file(d + "/k2" + tag + ".fq"), read_file(d + "/k2full.fq"))
                    << options;
                EXPECT_EQ(read_file(d + "/n2" + tag + ".fq"), read_file(d + "/n2full.fq"))
                    << options;
            }
        }
    }
}

TEST_F(commands, nothing_lost_multiline_fasta_input)
{
    std::string const f = build_hs("-k 21");
    // The Klebsiella genomes are multi-line FASTA; as "reads" they test verbatim multi-line output.
    std::string const input = data("klebs4.fa").string();
    auto const r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -k 21 -f '" + f +
                                  "' --known '" + (tmp / "k.fa") + "' --novel '" + (tmp / "n.fa") +
                                  "' --report '" + (tmp / "r.tsv") + "' '" + input + "'",
                              tmp);
    // -k is not a classify option: usage error, exit 2, nothing written.
    EXPECT_EQ(r.status, 2);
    EXPECT_FALSE(std::filesystem::exists(tmp / "k.fa"));
    auto const r2 = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f +
                                   "' --known '" + (tmp / "k.fa") + "' --novel '" + (tmp / "n.fa") +
                                   "' --report '" + (tmp / "r.tsv") + "' '" + input + "'",
                               tmp);
    ASSERT_EQ(r2.status, 0) << r2.err;
    auto const rows = read_report(tmp / "r.tsv");
    EXPECT_EQ(merge_back(rows, split_fasta(read_file(tmp / "k.fa")),
                         split_fasta(read_file(tmp / "n.fa"))),
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
        auto const r =
            run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -t " + std::to_string(t) +
                           " -f '" + f + "' --paired '" + r1 + "' '" + r2 + "' --known '" + d +
                           "/k1.fq' --known2 '" + d + "/k2.fq' --novel '" + d +
                           "/n1.fq' --novel2 '" + d + "/n2.fq' --report '" + d + "/r.tsv'",
                       tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        auto const rows = read_report(d + "/r.tsv");
        EXPECT_EQ(merge_back(rows, split_fastq(read_file(d + "/k1.fq")),
                             split_fastq(read_file(d + "/n1.fq"))),
                  read_file(r1));
        EXPECT_EQ(merge_back(rows, split_fastq(read_file(d + "/k2.fq")),
                             split_fastq(read_file(d + "/n2.fq"))),
                  read_file(r2));
        std::string const all = read_file(d + "/k1.fq") + read_file(d + "/k2.fq") +
                                read_file(d + "/n1.fq") + read_file(d + "/n2.fq") +
                                read_file(d + "/r.tsv");
        if (t == 1)
            ref_out = all;
        else
            EXPECT_EQ(all, ref_out) << "threads " << t;
    }
}

TEST_F(commands, bad_input_gives_one_clear_error_and_leaves_no_output)
{
    std::string const f = build_hs("-k 15");
    std::string const bad = tmp / "bad.fq";
    write_file(bad, "@r1\nACGT\n+\nIIII\n@r2\nACGTACGT\n+\nIII\n@r3\nACGT\n+\nIIII\n");
    auto const r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f +
                                  "' --novel '" + (tmp / "n.fq") + "' --known '" + (tmp / "k.fq") +
                                  "' --report '" + (tmp / "r.tsv") + "' '" + bad + "'",
                              tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("ksieve: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("bad.fq"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("2"), std::string::npos) << r.err; // record number
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (auto const & entry : std::filesystem::directory_iterator{tmp.path()})
    {
        std::string const name = entry.path().filename().string();
        EXPECT_TRUE(name == "hs.ksf" || name == "bad.fq" || name == "stdout.txt" ||
                    name == "stderr.txt")
            << name;
    }
}

// Records longer than classify's window (contigs, chromosomes, chimeras around the 50% rule) are
// looked up in windows: the report's counts and every class equal those of the same records cut
// into overlapping pieces of 100,000 k-mer positions (the short-record path), summed; with and
// without early decisions.
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
        for (std::size_t start = 0, j = 0; start == 0 || start + k <= seq.size();
             start += 100000, ++j)
            pieces += ">" + name + "__" + std::to_string(j) + "\n" +
                      seq.substr(start, 100000 + k - 1) + "\n";
    }
    write_file(tmp / "long.fa", whole);
    write_file(tmp / "pieces.fa", pieces);
    std::string const filter = tmp / "exact.ksf";
    auto r = run_ksieve("build -q --sampling all -k 25 --fpr 0 -o '" + filter + "' '" +
                            data("HS11286.fa").string() + "'",
                        tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + filter +
                       "' --report '" + tmp / "pieces.tsv" + "' '" + tmp / "pieces.fa" + "'",
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
        r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -t " + threads + " -f '" +
                           filter + "' --report '" + rep + "' --known '" + known_full + "' '" +
                           tmp / "long.fa" + "'",
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
        r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -t " + threads + " -f '" +
                           filter + "' --known '" + known_early + "' '" + tmp / "long.fa" + "'",
                       tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(read_file(known_early), expected_known);
    }
}
