// End-to-end tests of ksieve info (and --version / --help) through the ksieve binary, on real data
// generated from Debian packages (tests/data/generate.sh).
#include "test_helpers.hpp"

using namespace ksieve::test;

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

TEST_F(commands, every_filter_type_has_no_false_negatives_and_info_reports_it)
{
    for (std::string const type : {"qf", "bloom", "cuckoo", "counting-bloom", "bloom-classic"})
    {
        std::string const f = tmp / (type + ".ksf");
        auto r = run_ksieve("build -q --sampling all -k 21 --type " + type + " -o '" + f + "' '" +
                                data("HS11286.fa").string() + "'",
                            tmp);
        ASSERT_EQ(r.status, 0) << type << ": " << r.err;
        std::string const report = tmp / (type + ".tsv");
        r = run_ksieve("classify -q --min-hits 0 --min-hit-fraction 0.5 -f '" + f + "' --report '" +
                           report + "' '" + data("hs_errfree.fq").string() + "'",
                       tmp);
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
