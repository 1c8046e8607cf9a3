// End-to-end tests of what every command checks of its options and outputs (usage errors, outputs
// that are inputs or share a file, permissions of replaced files) through the ksieve binary.
#include "test_helpers.hpp"

#include <cstdlib>
#include <utility>

using namespace ksieve::test;

TEST_F(commands, usage_errors_exit_2)
{
    std::string const in = data("lambda_reads.fq").string();
    for (std::string const & args : std::vector<std::string>{
             "classify '" + in + "'",                            // no filter
             "build -o x.ksf --fpr 0.7 '" + in + "'",            // fpr out of range
             "build -o x.ksf -k 40 '" + in + "'",                // k out of range
             "build -o x.ksf --type bloom --fpr 0 '" + in + "'", // exact Bloom
             "dedup --min-hit-fraction 0 '" + in + "'",          // fraction out of range
             "dedup --type bloom --min-count 3 --expected 1000 '" + in + "'",
             "build -o x.ksf --part 3/3 '" + in + "'",
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
    for (auto const & [seed, shown] : std::vector<std::pair<std::string, std::string>>{
             {"18446744073709551615", "0xffffffffffffffff"},
             {"0x10", "0x0000000000000010"},
             {"010", "0x000000000000000a"}, // decimal, not octal
             {"0", "0x0000000000000000"}})
    {
        std::string const f = tmp / "seed.ksf";
        auto const b =
            run_ksieve("build -q -k 21 --seed " + seed + " -o '" + f + "' '" + in + "'", tmp);
        ASSERT_EQ(b.status, 0) << b.err;
        EXPECT_NE(run_ksieve("info '" + f + "'", tmp).out.find("seed " + shown), std::string::npos)
            << seed;
    }
}

TEST_F(commands, an_output_that_is_an_input_is_refused_and_the_input_kept)
{
    std::string const in = tmp / "in.fq";
    std::string const text = read_file(data("mixed.fq").string());
    write_file(in, text);
    std::string const f = tmp / "f.ksf";
    ASSERT_EQ(run_ksieve("build -q --sampling all -k 25 -o '" + f + "' '" +
                             data("lambda.fa").string() + "'",
                         tmp)
                  .status,
              0);
    std::filesystem::create_symlink(in, tmp / "link.fq");
    for (std::string const & args :
         {"classify -f '" + f + "' --novel '" + in + "' '" + in + "'",
          "classify -f '" + f + "' --report '" + (tmp / "link.fq") + "' '" + in +
              "'", // the same file by another name
          "classify -f '" + f + "' --stats '" + f + "' '" + in + "'", // the filter read
          "dedup --known '" + in + "' '" + in + "'",
          "dedup --save-filter '" + in + "' '" + in + "'", "build -o '" + in + "' '" + in + "'"})
    {
        auto const r = run_ksieve(args, tmp);
        EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
        EXPECT_NE(r.err.find("is both an input and an output"), std::string::npos) << r.err;
        EXPECT_EQ(read_file(in), text) << args;
    }
    EXPECT_EQ(run_ksieve("info '" + f + "'", tmp).status, 0);
    // merge may write over one of its inputs (an incremental union), since the result is renamed
    // into place.
    std::string const g = tmp / "g.ksf";
    ASSERT_EQ(run_ksieve("build -q --sampling all -k 25 -o '" + g + "' '" + in + "'", tmp).status,
              0);
    auto const m = run_ksieve("merge -o '" + f + "' '" + f + "' '" + g + "'", tmp);
    EXPECT_EQ(m.status, 0) << m.err;
}

// Two outputs on one file are refused before any work, whatever names they give it (`./`, `//`, a
// link to it, the file existing or not); several outputs into /dev/null are fine.
TEST_F(commands, two_outputs_on_one_file_by_any_name_are_refused)
{
    std::string const in = tmp / "in.fq";
    write_file(in, read_file(data("mixed.fq").string()));
    std::string const f = tmp / "f.ksf";
    ASSERT_EQ(run_ksieve("build -q --sampling all -k 25 -o '" + f + "' '" +
                             data("lambda.fa").string() + "'",
                         tmp)
                  .status,
              0);
    std::string const out = tmp / "out.fq", dir = tmp.path().string();
    std::filesystem::create_symlink(out, tmp / "link.fq");
    for (bool const exists : {false, true})
    {
        if (exists)
            write_file(out, "kept\n");
        for (std::string const & args :
             {"classify -f '" + f + "' --novel '" + out + "' --known '" + dir + "/./out.fq' '" +
                  in + "'",
              "classify -f '" + f + "' --novel '" + out + "' --known '" + dir + "//out.fq' '" + in +
                  "'",
              "classify -f '" + f + "' --novel '" + (tmp / "link.fq") + "' --report '" + out +
                  "' '" + in + "'",
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
    auto const r = run_ksieve(
        "classify -q -f '" + f + "' --novel /dev/null --known /dev/null '" + in + "'", tmp);
    EXPECT_EQ(r.status, 0) << r.err;
    // refused before the input is read: also while stdin waits on a silent writer
    std::string const fifo = tmp / "idle";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
    std::string const cmd = "sleep 20 > '" + fifo + "' 2>/dev/null & w=$!; timeout 10 '" +
                            binary() + "' classify -q -f '" + f + "' --novel '" + out +
                            "' --known '" + dir + "/./out.fq' - < '" + fifo +
                            "' 2>/dev/null; s=$?; kill $w 2>/dev/null; exit $s";
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
        ASSERT_EQ(
            run_ksieve("classify -q -f '" + f + "' --novel '" + out + "' '" + in + "'", tmp).status,
            0);
        for (std::string const & p : {f, out})
        {
            EXPECT_NE(read_file(p), "old\n") << p;
            EXPECT_EQ(std::filesystem::status(p).permissions() & std::filesystem::perms::all, perms)
                << p;
        }
    }
}
