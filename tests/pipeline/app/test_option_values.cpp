// Values checked before any work: every option of every command that takes a value (as its --help
// lists them) refuses an empty or blank value with a usage error (exit status 2) and writes
// nothing; an output path that is a directory (--save-filter, --stats, -o of merge) is refused
// before the first read is decided.
#include "test_helpers.hpp"

#include <regex>
#include <set>
#include <sys/stat.h>

namespace
{

using namespace ksieve::test;

// The long options of `command` that take a value, read from its --help (an option followed by a
// type name such as TEXT, N, X or SIZE; flags have none).
std::vector<std::string> value_options(std::string const & command, temp_dir const & tmp)
{
    auto const help = run_ksieve(command + " --help", tmp);
    EXPECT_EQ(help.status, 0) << help.err;
    std::vector<std::string> names;
    // "  --novel TEXT   ...", "  -t,--threads UINT:N=0   ...": one space, then the type
    std::regex const line{R"(^\s+(?:-\w,)?(--[a-z0-9-]+) [A-Z])"};
    std::istringstream in{help.out};
    for (std::string l; std::getline(in, l);)
        if (std::smatch m; std::regex_search(l, m, line))
            names.push_back(m[1]);
    return names;
}

// The files in `dir` (recursively), for "nothing written".
std::set<std::string> files_in(std::string const & dir)
{
    std::set<std::string> names;
    for (auto const & e : fs::recursive_directory_iterator{dir})
        names.insert(fs::relative(e.path(), dir).string());
    return names;
}

class option_values : public ::testing::Test
{
protected:
    void SetUp() override
    {
        std::mt19937_64 rng{2026};
        std::string const ref = random_dna(rng, 5000);
        fs::create_directories(tmp / "in");
        write_file(tmp / "in/ref.fa", ">ref\n" + ref + "\n");
        std::string fq;
        for (int i = 0; i < 40; ++i)
            fq += "@r" + std::to_string(i) + "\n" +
                  ref.substr(static_cast<std::size_t>(i) * 100, 150) + "\n+\n" +
                  std::string(150, 'I') + "\n";
        write_file(tmp / "in/reads.fq", fq);
        ASSERT_EQ(
            run_ksieve("build -q -o '" + tmp / "in/f.ksf" + "' '" + tmp / "in/ref.fa" + "'", tmp)
                .status,
            0);
        fs::create_directories(tmp / "out");
    }
    temp_dir tmp;
};

TEST_F(option_values, an_empty_or_blank_value_is_a_usage_error_for_every_option_of_every_command)
{
    std::string const f = "'" + tmp / "in/f.ksf" + "'";
    std::string const ref = "'" + tmp / "in/ref.fa" + "'";
    std::string const reads = "'" + tmp / "in/reads.fq" + "'";
    std::string const out = tmp / "out";
    // each command with what it requires; a required option's own value is the one made empty
    struct command
    {
        std::string name;
        std::vector<std::pair<std::string, std::string>> required; // option, value
        std::string positional;
    };
    std::vector<command> const commands{{"build", {{"--output", "'" + out + "/b.ksf'"}}, ref},
                                        {"classify", {{"--filter", f}}, reads},
                                        {"dedup", {}, reads},
                                        {"merge", {{"--output", "'" + out + "/m.ksf'"}}, f},
                                        {"intersect", {{"--output", "'" + out + "/i.ksf'"}}, f},
                                        {"subtract", {{"--output", "'" + out + "/s.ksf'"}}, f},
                                        {"info", {}, f}};
    std::size_t checked = 0;
    for (command const & c : commands)
    {
        std::vector<std::string> const options = value_options(c.name, tmp);
        EXPECT_FALSE(options.empty()) << c.name;
        for (std::string const & option : options)
            for (std::string const value : {"''", "' '"})
            {
                std::string args = c.name + " -q";
                bool replaced = false;
                for (auto const & [name, v] : c.required)
                {
                    replaced = replaced || name == option;
                    args += " " + name + " " + (name == option ? value : v);
                }
                if (!replaced)
                    args += " " + option + " " + value;
                args += " " + c.positional;
                auto const r = run_ksieve(args, tmp);
                EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
                EXPECT_NE(r.err.find(option), std::string::npos) << args << "\n" << r.err;
                EXPECT_EQ(files_in(out), std::set<std::string>{}) << args;
                ++checked;
            }
        // an empty positional argument (an input or filter file named "")
        std::string args = c.name + " -q";
        for (auto const & [name, v] : c.required)
            args += " " + name + " " + v;
        auto const r = run_ksieve(args + " ''", tmp);
        EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
        EXPECT_EQ(files_in(out), std::set<std::string>{}) << args;
    }
    // the options that a script most often leaves unset are among those walked
    EXPECT_GT(checked, 80u);
}

TEST_F(option_values, an_empty_max_memory_is_not_taken_as_no_limit)
{
    auto const r = run_ksieve("dedup -q --max-memory '' --novel '" + tmp / "out/n.fq" + "' '" +
                                  tmp / "in/reads.fq" + "'",
                              tmp);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err.rfind("ksieve: error: --max-memory is empty", 0), 0u) << r.err;
    EXPECT_FALSE(fs::exists(tmp / "out/n.fq"));
}

// An output that is a directory is refused at once, whichever option names it, before the input is
// read: here the input is a FIFO that nobody writes, so a run that read it would never end.
TEST_F(option_values, an_output_that_is_a_directory_is_refused_before_any_work)
{
    std::string const fifo = tmp / "in/never.fq";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::string const dir = tmp / "out";
    std::string const reads = "'" + tmp / "in/reads.fq" + "'";
    std::string const f = "'" + tmp / "in/f.ksf" + "'";
    for (std::string const & args :
         {"dedup -q --save-filter '" + dir + "' '" + fifo + "'",
          "dedup -q --stats '" + dir + "' '" + fifo + "'",
          "dedup -q --multiqc '" + dir + "' '" + fifo + "'",
          "dedup -q --report '" + dir + "' '" + fifo + "'",
          "dedup -q --exact --stats '" + dir + "' '" + fifo + "'",
          "classify -q -f " + f + " --stats '" + dir + "' '" + fifo + "'",
          "classify -q -f " + f + " --multiqc '" + dir + "' '" + fifo + "'",
          "build -q -o '" + dir + "' '" + fifo + "'", "merge -q -o '" + dir + "' " + f})
    {
        // (a run that waits for the FIFO's writer is the failure, ended by timeout: 124)
        std::string const err = tmp / "err.txt";
        int const raw = std::system(
            ("timeout 20 '" + binary() + "' " + args + " </dev/null 2>'" + err + "'").c_str());
        run_result r;
        r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
        r.err = read_file(err);
        EXPECT_EQ(r.status, 1) << args << "\n" << r.err;
        EXPECT_NE(r.err.find("'" + dir + "': is a directory"), std::string::npos) << args << "\n"
                                                                                  << r.err;
        EXPECT_TRUE(fs::is_directory(dir));
        EXPECT_EQ(files_in(dir), std::set<std::string>{}) << args;
    }
}

} // namespace
