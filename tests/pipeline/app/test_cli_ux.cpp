// The command line as users meet it: the end-of-run summary, stats that name the sample, MultiQC
// files that MultiQC renders, "did you mean", readable messages for bad numbers, `ksieve help CMD`,
// and the warnings about saturated and overgrown filters.
#include "test_helpers.hpp"

#include <map>

using namespace ksieve::test;

namespace
{

using cli_ux = host_filter_test;

// Rows of a TSV file with a header line: first column -> (column name -> value).
std::map<std::string, std::map<std::string, double>> read_table(std::string const & text)
{
    std::map<std::string, std::map<std::string, double>> rows;
    std::istringstream in{text};
    std::string line;
    std::vector<std::string> header;
    while (std::getline(in, line))
    {
        std::vector<std::string> cells;
        std::istringstream l{line};
        std::string cell;
        while (std::getline(l, cell, '\t'))
            cells.push_back(cell);
        if (header.empty())
        {
            header = cells;
            continue;
        }
        for (std::size_t i = 1; i < cells.size() && i < header.size(); ++i)
            rows[cells[0]][header[i]] = std::stod(cells[i]);
    }
    return rows;
}

TEST_F(cli_ux, a_run_ends_with_one_summary_line_that_agrees_with_the_stats)
{
    auto const r = run_ksieve(
        "classify -f '" + filter + "' --stats '" + (tmp / "s.json") + "' '" + reads + "'", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    std::string const stats = read_file(tmp / "s.json");
    auto const n = static_cast<unsigned long long>(json_number(stats, "reads"));
    auto const known = static_cast<unsigned long long>(json_number(stats, "known"));
    auto const novel = static_cast<unsigned long long>(json_number(stats, "novel"));
    ASSERT_GT(known, 0u);
    ASSERT_GT(novel, 0u);
    std::string const expected =
        "ksieve classify: " + std::to_string(n) + " reads: " + std::to_string(known) + " known (";
    EXPECT_EQ(r.err.rfind(expected, 0), 0u) << r.err;
    EXPECT_NE(r.err.find(std::to_string(novel) + " novel ("), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    // -q: nothing
    auto const q = run_ksieve("classify -q -f '" + filter + "' '" + reads + "'", tmp);
    EXPECT_EQ(q.err, "");
    // build and dedup say what they did too
    auto const b =
        run_ksieve("build -o '" + (tmp / "b.ksf") + "' '" + data("HS11286.fa").string() + "'", tmp);
    EXPECT_EQ(b.err.rfind("ksieve build: 7 sequences, 5682322 bases, ", 0), 0u)
        << b.err; // HS11286: 7 records
    auto const d = run_ksieve("dedup '" + reads + "'", tmp);
    EXPECT_EQ(d.err.rfind("ksieve dedup: ", 0), 0u) << d.err;
}

TEST_F(cli_ux, stats_name_the_sample_inputs_filters_and_command_and_hits_are_exact_only_when_asked)
{
    auto const r = run_ksieve("classify -q -f '" + filter + "' --stats '" + (tmp / "s.json") +
                                  "' --report '" + (tmp / "r.tsv") + "' '" + reads + "'",
                              tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    std::string const s = read_file(tmp / "s.json");
    EXPECT_NE(s.find("\"sample\": \"mixed\""), std::string::npos) << s;
    EXPECT_NE(s.find("\"inputs\": [\n    \"" + reads + "\"\n  ]"), std::string::npos) << s;
    EXPECT_NE(s.find("\"filters\": [\n    \"" + filter + "\"\n  ]"), std::string::npos) << s;
    EXPECT_NE(s.find("\"command_line\": \"" + binary() + " classify -q -f " + filter),
              std::string::npos)
        << s;
    // with --report every hit is counted: the stats' total is the report's
    double report_hits = 0;
    std::istringstream in{read_file(tmp / "r.tsv")};
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line))
    {
        auto const a = line.find('\t');
        auto const b = line.find('\t', a + 1);
        report_hits += std::stod(line.substr(b + 1));
    }
    EXPECT_EQ(json_number(s, "hits"), report_hits);
    // --stats alone: the same classes and counts, hits not counted (null); --exact-hits counts them
    auto const cheap =
        run_ksieve("classify -q -f '" + filter + "' --sample S1 --stats - '" + reads + "'", tmp);
    ASSERT_EQ(cheap.status, 0) << cheap.err;
    EXPECT_NE(cheap.out.find("\"hits\": null"), std::string::npos) << cheap.out;
    EXPECT_NE(cheap.out.find("\"sample\": \"S1\""), std::string::npos) << cheap.out;
    for (std::string const key : {"reads", "known", "novel", "kmers", "bases"})
        EXPECT_EQ(json_number(cheap.out, key), json_number(s, key)) << key;
    auto const exact =
        run_ksieve("classify -q -f '" + filter + "' --exact-hits --stats - '" + reads + "'", tmp);
    EXPECT_EQ(json_number(exact.out, "hits"), report_hits);
    // the sample name from paired file names
    auto const p =
        run_ksieve("classify -q -f '" + filter + "' --paired --stats - '" +
                       data("hs_R1.fq").string() + "' '" + data("hs_R2.fq").string() + "'",
                   tmp);
    EXPECT_NE(p.out.find("\"sample\": \"hs\""), std::string::npos) << p.out;
}

// MultiQC (the Debian package) run on a folder of --multiqc files draws one row per sample with its
// known and novel reads.
TEST_F(cli_ux, multiqc_renders_the_known_and_novel_reads_of_each_sample)
{
    if (std::system("multiqc --version >/dev/null 2>&1") != 0)
        GTEST_FAIL() << "multiqc is not installed (scripts/install-deps.sh installs it)";
    std::filesystem::create_directories(tmp / "mqc");
    std::map<std::string, std::pair<double, double>> expected;
    for (auto const & [sample, input] :
         {std::pair{std::string{"first"}, reads},
          std::pair{std::string{"second"}, data("hs_R1.fq").string()}})
    {
        auto const r =
            run_ksieve("classify -q -f '" + filter + "' --sample " + sample + " --multiqc '" +
                           (tmp / ("mqc/" + sample + "_mqc.json")) + "' --stats - '" + input + "'",
                       tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        expected[sample] = {json_number(r.out, "known"), json_number(r.out, "novel")};
    }
    std::string const cmd =
        "cd '" + (tmp / "mqc") + "' && multiqc -q -f -o out . >'" + (tmp / "mqc.log") + "' 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(tmp / "mqc.log");
    auto const table =
        read_table(read_file(tmp / "mqc/out/multiqc_data/multiqc_ksieve_classify_plot.txt"));
    ASSERT_EQ(table.size(), 2u) << read_file(tmp / "mqc.log");
    for (auto const & [sample, kn] : expected)
    {
        ASSERT_TRUE(table.contains(sample)) << sample;
        EXPECT_EQ(table.at(sample).at("known"), kn.first) << sample;
        EXPECT_EQ(table.at(sample).at("novel"), kn.second) << sample;
    }
    EXPECT_TRUE(std::filesystem::exists(tmp / "mqc/out/multiqc_report.html"));
}

TEST_F(cli_ux, mistyped_commands_and_options_get_a_suggestion_and_bad_numbers_a_readable_message)
{
    auto const c = run_ksieve("clasify -f x y", tmp);
    EXPECT_EQ(c.status, 2);
    EXPECT_NE(
        c.err.find("ksieve: error: 'clasify' is not a ksieve command: did you mean 'classify'?"),
        std::string::npos)
        << c.err;
    auto const o = run_ksieve("classify -f '" + filter + "' --novle n.fq '" + reads + "'", tmp);
    EXPECT_EQ(o.status, 2);
    EXPECT_NE(o.err.find("did you mean '--novel'?"), std::string::npos) << o.err;
    auto const b = run_ksieve("dedup --min-hit-fractoin 0.5 '" + reads + "'", tmp);
    EXPECT_NE(b.err.find("did you mean '--min-hit-fraction'?"), std::string::npos) << b.err;
    // a mistyped option is named before a required one that is missing
    auto const e = run_ksieve("build --expeted 5 '" + reads + "'", tmp);
    EXPECT_EQ(e.status, 2);
    EXPECT_NE(e.err.find("did you mean '--expected'?"), std::string::npos) << e.err;
    for (std::string const bad : {"-t abc", "-t -1", "--min-count x"})
    {
        auto const t = run_ksieve("classify " + bad + " -f '" + filter + "' '" + reads + "'", tmp);
        EXPECT_EQ(t.status, 2) << bad;
        EXPECT_NE(t.err.find("expects a whole number"), std::string::npos) << bad << ": " << t.err;
        EXPECT_LT(t.err.size(), 200u) << t.err;
    }
    auto const f = run_ksieve("build --fpr abc -o x.ksf '" + reads + "'", tmp);
    EXPECT_NE(f.err.find("--fpr: expects a number"), std::string::npos) << f.err;
    auto const h = run_ksieve("help classify", tmp);
    EXPECT_EQ(h.status, 0) << h.err;
    EXPECT_NE(h.out.find("--min-hits"), std::string::npos);
    EXPECT_NE(h.out.find("Example:"), std::string::npos);
    auto const top = run_ksieve("help", tmp);
    EXPECT_EQ(top.status, 0);
    EXPECT_NE(top.out.find("ksieve help COMMAND"), std::string::npos) << top.out;
    // help for a command that does not exist is a usage error, as the command itself would be
    auto const hb = run_ksieve("help clasify", tmp);
    EXPECT_EQ(hb.status, 2);
    EXPECT_NE(hb.err.find("'clasify' is not a ksieve command: did you mean 'classify'?"),
              std::string::npos)
        << hb.err;
    // options before the command: said so, with the command to put them after
    for (std::string const & args :
         {"-q classify -f '" + filter + "' '" + reads + "'", "-t 2 build -o x.ksf '" + reads + "'"})
    {
        auto const r = run_ksieve(args, tmp);
        EXPECT_EQ(r.status, 2) << args;
        EXPECT_EQ(r.err.rfind("ksieve: error: options go after the command: 'ksieve ", 0), 0u)
            << r.err;
    }
}

// A Bloom filter built for 1000 k-mers of a 5.5 Mbp genome answers nearly everything: classify
// warns, and
// --strict refuses it.
TEST_F(cli_ux, a_saturated_filter_is_named_with_its_estimate_or_refused_with_strict)
{
    std::string const sat = tmp / "sat.ksf";
    ASSERT_EQ(run_ksieve("build -q --type bloom --expected 1000 -o '" + sat + "' '" +
                             data("HS11286.fa").string() + "'",
                         tmp)
                  .status,
              0);
    auto const w = run_ksieve(
        "classify -q -f '" + sat + "' --novel '" + (tmp / "n.fq") + "' '" + reads + "'", tmp);
    EXPECT_EQ(w.status, 0) << w.err;
    EXPECT_NE(w.err.find("ksieve: warning: filter '" + sat +
                         "' is saturated: its estimated false-positive rate is "),
              std::string::npos)
        << w.err;
    auto const s = run_ksieve("classify -q --strict -f '" + sat + "' --novel '" + (tmp / "n2.fq") +
                                  "' '" + reads + "'",
                              tmp);
    EXPECT_EQ(s.status, 1);
    EXPECT_EQ(s.err.rfind("ksieve: error: filter '" + sat + "' is saturated", 0), 0u) << s.err;
    EXPECT_FALSE(std::filesystem::exists(tmp / "n2.fq"));
    // a filter at its target says nothing
    auto const ok = run_ksieve("classify -q --strict -f '" + filter + "' '" + reads + "'", tmp);
    EXPECT_EQ(ok.status, 0);
    EXPECT_EQ(ok.err, "");
}

// A dedup filter sized far below the reads' keys (--expected 10) is named with its estimate and
// the keys it counts: a warning, and with --strict an error that leaves no output; k-mer and exact
// dedup alike.
TEST_F(cli_ux, an_overgrown_dedup_filter_is_named_with_its_keys_or_refused_with_strict)
{
    for (std::string const mode : {"", "--exact "})
    {
        std::string const keys = mode.empty() ? "k-mers" : "sequences";
        std::string const small = "dedup -q " + mode + "--fpr 0.01 --expected 10 ";
        auto const w = run_ksieve(small + "--novel '" + (tmp / "w.fq") + "' '" + reads + "'", tmp);
        EXPECT_EQ(w.status, 0) << w.err;
        EXPECT_EQ(w.err.rfind("ksieve: warning: the dedup filter holds ", 0), 0u) << w.err;
        EXPECT_NE(w.err.find(" distinct " + keys + ", more than the --expected it was sized for"),
                  std::string::npos)
            << w.err;
        EXPECT_NE(w.err.find("instead of 0.01: give a larger --expected"), std::string::npos)
            << w.err;
        if (!mode.empty())
            continue; // (the reads' 7,600 sequences take it to 6x its rate: no error)
        auto const s =
            run_ksieve(small + "--strict --novel '" + (tmp / "s.fq") + "' '" + reads + "'", tmp);
        EXPECT_EQ(s.status, 1);
        EXPECT_EQ(s.err.rfind("ksieve: error: the dedup filter holds ", 0), 0u) << s.err;
        EXPECT_FALSE(std::filesystem::exists(tmp / "s.fq"));
        std::filesystem::remove(tmp / "w.fq");
    }
}

} // namespace
