// A failed run leaves every output path as it was (all outputs moved into place, or none), JSON
// outputs of names that are not UTF-8, and the output checks that every command makes before any
// work.
#include "test_helpers.hpp"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <functional>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace ksieve::test;

namespace
{

// The names in `dir` of ksieve's temporaries and of the second names of replaced files.
std::vector<std::string> leftovers(fs::path const & dir)
{
    std::vector<std::string> found;
    for (auto const & e : fs::recursive_directory_iterator{dir})
    {
        std::string const name = e.path().filename().string();
        if (name.find(".ksieve-tmp.") != std::string::npos ||
            name.find(".ksieve-old.") != std::string::npos)
            found.push_back(e.path().string());
    }
    return found;
}

// Whether `dir` holds a file whose name starts with `prefix`.
bool has_file_starting(fs::path const & dir, std::string const & prefix)
{
    std::error_code ec;
    for (auto const & e : fs::directory_iterator{dir, ec})
        if (e.path().filename().string().starts_with(prefix))
            return true;
    return false;
}

// Runs `ksieve args` with its input from the FIFO `fifo`: writes `first`, waits until a temporary
// of the output `watched` exists (the outputs are open), calls `mid_run`, writes `rest`, and
// returns the exit status.
int run_paced(std::string const & args, std::string const & fifo, std::string const & first,
              std::string const & rest, fs::path const & watched,
              std::function<void()> const & mid_run, temp_dir const & tmp)
{
    EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::string const cmd =
        "'" + binary() + "' " + args + " '" + fifo + "' 2>'" + (tmp / "paced.err") + "'";
    pid_t const pid = ::fork();
    if (pid == 0)
    {
        ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char *>(nullptr));
        ::_exit(127);
    }
    std::signal(SIGPIPE,
                SIG_IGN); // a run that fails early closes the FIFO: the writes below then fail
    int raw = 0;
    bool ended = false;
    // The FIFO opens once the run opens its input (a run that ended before that is waited for
    // instead). These waits check the order of events, not their speed.
    int fd = -1;
    while (fd < 0 && !(ended = ::waitpid(pid, &raw, WNOHANG) == pid))
    {
        fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
        if (fd < 0)
            std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    auto write_all = [&](std::string const & bytes)
    {
        for (std::size_t done = 0; fd >= 0 && done < bytes.size();)
        {
            ssize_t const k = ::write(fd, bytes.data() + done, bytes.size() - done);
            if (k > 0)
                done += static_cast<std::size_t>(k);
            else if (k < 0 && errno == EAGAIN)
                std::this_thread::sleep_for(std::chrono::milliseconds{1});
            else
                return;
        }
    };
    write_all(first);
    std::string const temporary = watched.filename().string() + ".ksieve-tmp.";
    for (int i = 0; i < 12000 && fd >= 0 && !has_file_starting(watched.parent_path(), temporary);
         ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
    EXPECT_TRUE(has_file_starting(watched.parent_path(), temporary))
        << "the outputs were not opened";
    mid_run();
    write_all(rest);
    if (fd >= 0)
        ::close(fd);
    if (!ended)
    {
        EXPECT_EQ(::waitpid(pid, &raw, 0), pid);
    }
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
}

class output_commit : public host_filter_test
{
protected:
    void SetUp() override
    {
        host_filter_test::SetUp();
        // the outputs are opened once the first batch of reads (16384 records) is read: three
        // copies of the reads (24000 records) first, then one more
        std::string const text = read_file(reads);
        ASSERT_EQ(split_fastq(text).size(), 8000u);
        first = text + text + text;
        rest = text;
    }
    std::string first, rest; // the input, before and after the change made during the run
};

} // namespace

// A directory that appears at the --known path during the run: the run fails (exit 1) naming it,
// and the
// --novel file that existed before is unchanged, byte for byte, with no temporary left; for
// classify and for dedup (with --save-filter and --stats among the outputs).
TEST_F(output_commit, a_directory_at_one_output_leaves_every_other_output_as_it_was)
{
    for (std::string const & cmd : {"classify -q -f '" + filter + "'", std::string{"dedup -q"}})
    {
        SCOPED_TRACE(cmd);
        temp_dir out;
        std::string const novel = out / "novel.fq";
        std::string const known = out / "known.fq";
        std::string const stats = out / "stats.json";
        std::string const before = "@old\nACGT\n+\nIIII\n";
        write_file(novel, before);
        write_file(stats, "{}\n");
        std::string const extra =
            cmd.starts_with("dedup") ? " --save-filter '" + (out / "d.ksf") + "'" : "";
        int const status = run_paced(
            cmd + extra + " --novel '" + novel + "' --known '" + known + "' --stats '" + stats +
                "'",
            out / "in.fq", first, rest, known, [&] { fs::create_directory(known); }, out);
        std::string const err = read_file(out / "paced.err");
        EXPECT_EQ(status, 1) << err;
        EXPECT_NE(err.find("ksieve: error: '" + known + "'"), std::string::npos) << err;
        EXPECT_TRUE(read_file(novel) == before) << "--novel was replaced";
        EXPECT_EQ(read_file(stats), "{}\n");
        EXPECT_TRUE(fs::is_directory(known));
        EXPECT_FALSE(fs::exists(out / "d.ksf"));
        EXPECT_EQ(leftovers(out.path()), std::vector<std::string>{});
    }
}

// The directory of --known removed during the run: the same (the --novel file as it was, nothing
// new).
TEST_F(output_commit, a_removed_output_directory_leaves_every_other_output_as_it_was)
{
    temp_dir out;
    fs::create_directory(out / "k");
    std::string const novel = out / "novel.fq";
    std::string const known = out / "k/known.fq";
    std::string const before = "@old\nACGT\n+\nIIII\n";
    write_file(novel, before);
    int const status = run_paced(
        "classify -q -f '" + filter + "' --novel '" + novel + "' --known '" + known + "'",
        out / "in.fq", first, rest, known, [&] { fs::remove_all(out / "k"); }, out);
    std::string const err = read_file(out / "paced.err");
    EXPECT_EQ(status, 1) << err;
    EXPECT_NE(err.find("'" + known + "'"), std::string::npos) << err;
    EXPECT_TRUE(read_file(novel) == before) << "--novel was replaced";
    EXPECT_FALSE(fs::exists(out / "k"));
    EXPECT_EQ(leftovers(out.path()), std::vector<std::string>{});
}

// A run that succeeds replaces every existing output with exactly what a run into new files writes,
// and leaves no second name of a replaced file behind.
TEST_F(output_commit, a_run_that_succeeds_replaces_every_output)
{
    temp_dir fresh, old;
    std::string const args = "classify -q -f '" + filter + "' '" + reads + "'";
    auto const outputs = [](temp_dir const & d)
    {
        return " --novel '" + (d / "novel.fq") + "' --known '" + (d / "known.fq") + "' --report '" +
               (d / "report.tsv") + "'";
    };
    ASSERT_EQ(run_ksieve(args + outputs(fresh), fresh).status, 0);
    for (char const * name : {"novel.fq", "known.fq", "report.tsv"})
        write_file(old / name, "old\n");
    auto const r = run_ksieve(args + outputs(old), old);
    ASSERT_EQ(r.status, 0) << r.err;
    for (char const * name : {"novel.fq", "known.fq", "report.tsv"})
    {
        EXPECT_EQ(read_file(old / name), read_file(fresh / name)) << name;
        EXPECT_NE(read_file(old / name), "old\n") << name;
    }
    EXPECT_EQ(leftovers(old.path()), std::vector<std::string>{});
}

// Names that are not UTF-8 (an input file r\xe9ads.fq, --sample caf\xe9) in --stats and --multiqc:
// valid JSON with U+FFFD for the byte, the rest of the name kept.
TEST_F(output_commit, json_outputs_of_names_that_are_not_utf8)
{
    std::string const latin1 = tmp / "r\xe9"
                                     "ads.fq";
    fs::copy_file(data("lambda_reads.fq"), latin1);
    std::string const replaced = "r\xef\xbf\xbd"
                                 "ads.fq";
    for (std::string const & cmd : {"classify -q -f '" + filter + "'", std::string{"dedup -q"}})
    {
        SCOPED_TRACE(cmd);
        std::string const stats = tmp / "stats.json";
        auto r = run_ksieve(cmd + " --stats '" + stats + "' '" + latin1 + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        std::string const json = read_file(stats);
        EXPECT_NE(json.find("\"sample\": \"r\xef\xbf\xbd"
                            "ads\""),
                  std::string::npos)
            << json;
        EXPECT_NE(json.find("/" + replaced + "\""), std::string::npos) << json;
        EXPECT_GT(json_number(json, "reads"), 0.0);

        std::string const mqc = tmp / "s_mqc.json";
        r = run_ksieve(cmd + " --sample 'caf\xe9' --multiqc '" + mqc + "' '" + reads + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_NE(read_file(mqc).find("\"caf\xef\xbf\xbd\": {"), std::string::npos)
            << read_file(mqc);
    }
    // info --json of a filter so named
    std::string const f = tmp / "h\xe9.ksf";
    fs::copy_file(filter, f);
    auto const r = run_ksieve("info --json '" + f + "'", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("h\xef\xbf\xbd.ksf\""), std::string::npos) << r.out;
}

// Every pair of outputs of classify and of dedup given one file is a usage error (exit 2) naming
// both options, before any work.
TEST_F(output_commit, every_pair_of_outputs_on_one_file_is_a_usage_error)
{
    std::string const same = tmp / "same.out";
    std::vector<std::string> const read_outputs{"--novel",  "--known", "--novel2", "--known2",
                                                "--report", "--stats", "--multiqc"};
    for (std::string const & cmd : {"classify -f '" + filter + "'", std::string{"dedup"}})
    {
        std::vector<std::string> options = read_outputs;
        if (cmd == "dedup")
            options.insert(options.begin(), "--save-filter");
        for (std::size_t i = 0; i < options.size(); ++i)
            for (std::size_t j = i + 1; j < options.size(); ++j)
            {
                std::string args = cmd + " --interleaved " + options[i] + " '" + same + "' " +
                                   options[j] + " '" + same + "'";
                for (auto const & [mate, first_mate] :
                     {std::pair{"--novel2", "--novel"}, {"--known2", "--known"}})
                    if ((options[i] == mate || options[j] == mate) && options[i] != first_mate)
                        args += std::string{" "} + first_mate + " '" + (tmp / (first_mate + 2)) +
                                ".fq'"; // novel.fq, known.fq: the mate 2 output needs its mate 1
                SCOPED_TRACE(args);
                auto const r =
                    run_ksieve(args + " '" + data("lambda_reads.fq").string() + "'", tmp);
                EXPECT_EQ(r.status, 2) << r.err;
                EXPECT_NE(r.err.find(options[i] + " and " + options[j] + " both write to"),
                          std::string::npos)
                    << r.err;
                EXPECT_FALSE(fs::exists(same));
            }
    }
}

// A compression suffix that cannot be written, on any output of any command, is a usage error (exit
// 2), found before any work: the input here is not a read file at all, and dedup with a Bloom or
// cuckoo filter would read it in its first pass.
TEST_F(output_commit, unwritable_output_names_are_usage_errors_before_any_work)
{
    std::string const junk = tmp / "junk.fq";
    write_file(junk, "this is not a read file\n");
    std::vector<std::pair<std::string, std::string>> const cases{
        {"build -o '" + (tmp / "x.ksf.gz") + "'", "x.ksf.gz"},
        {"classify -f '" + filter + "' --novel '" + (tmp / "x.lz4") + "'", "x.lz4"},
        {"classify -f '" + filter + "' --stats '" + (tmp / "x.json.zip") + "'", "x.json.zip"},
        {"dedup --novel '" + (tmp / "x.lz4") + "'", "x.lz4"},
        {"dedup --type bloom --novel '" + (tmp / "x.lz4") + "'", "x.lz4"},
        {"dedup --type cuckoo --report '" + (tmp / "x.tsv.lz4") + "'", "x.tsv.lz4"},
        {"dedup --type bloom --multiqc '" + (tmp / "x_mqc.json.br") + "'", "x_mqc.json.br"},
        {"dedup --type cuckoo --save-filter '" + (tmp / "x.ksf.gz") + "'", "x.ksf.gz"},
        {"dedup --type bloom --save-filter '" + (tmp / "s.ksf") + "' --multiqc '" +
             (tmp / "s.ksf") + "'",
         "both write to"},
        {"dedup --type bloom --prefilter", "--prefilter"},
    };
    for (auto const & [args, named] : cases)
    {
        SCOPED_TRACE(args);
        auto const r = run_ksieve(args + " '" + junk + "'", tmp);
        EXPECT_EQ(r.status, 2) << r.err;
        EXPECT_EQ(r.err.rfind("ksieve: error: ", 0), 0u) << r.err;
        EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    }
    EXPECT_EQ(leftovers(tmp.path()), std::vector<std::string>{});
}
