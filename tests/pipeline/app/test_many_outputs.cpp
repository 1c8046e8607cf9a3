// Temporaries at any count of outputs: classify with a labeled filter of 2,000 labels writes 2,001
// files through --split-by-label (each label and "ambiguous"); a second signal, which ends the run
// at once, and a filter truncated while mapped, which ends it with an error, each leave none of
// their temporaries behind.
#include "child_process.hpp"
#include "test_helpers.hpp"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace
{

using namespace ksieve::test;

constexpr int labels = 2000;

std::size_t temporaries_in(fs::path const & dir)
{
    std::size_t n = 0;
    for (auto const & e : fs::directory_iterator{dir})
        if (e.path().filename().string().find(".ksieve-tmp.") != std::string::npos)
            ++n;
    return n;
}

class many_outputs : public ::testing::Test
{
protected:
    // A filter of 2,000 labels (one record of 400 random bases each) and reads from every record.
    void SetUp() override
    {
        std::mt19937_64 rng{2000};
        std::string fa, fq;
        for (int l = 0; l < labels; ++l)
        {
            std::string const seq = random_dna(rng, 400);
            fa += ">l" + std::to_string(l) + "\n" + seq + "\n";
            fq += "@r" + std::to_string(l) + "\n" + seq.substr(100, 150) + "\n+\n" +
                  std::string(150, 'I') + "\n";
        }
        write_file(tmp / "refs.fa", fa);
        reads = fq;
        auto const r = run_ksieve(
            "build -q --label-by record -o '" + filter + "' '" + tmp / "refs.fa" + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        fs::create_directories(out);
    }
    temp_dir tmp;
    std::string const filter = tmp / "labels.ksf";
    fs::path const out = fs::path{tmp.path()} / "split";
    std::string reads;
};

// The run is blocked writing novel reads into a FIFO whose reader never reads, so the first signal
// cannot end it; the second, more than a second later, ends it at once (once every temporary is
// there).
TEST_F(many_outputs, a_second_signal_leaves_none_of_2001_temporaries)
{
    std::string const fifo = tmp / "novel.fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
    std::string const dir = out.string();
    std::string const cmd =
        "sleep 60 < '" + fifo +
        "' >/dev/null 2>&1 & reader=$!\n"
        "yes '@n\nACGTTGCAACGTTGCAACGTTGCAACGTTGCAACGTTGCA\n+\n"
        "IIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII' | head -n 4000000 | '" +
        binary() + "' classify -t 2 -f '" + filter + "' --novel '" + fifo + "' --split-by-label '" +
        dir + "/{label}.fq.gz' - 2>'" + tmp / "err" +
        "' & run=$!\n"
        // (a guard against a hang, not a measure: until every temporary is there)
        "for i in $(seq 600); do n=$(ls '" +
        dir + "' | grep -c ksieve-tmp); [ \"$n\" -ge " + std::to_string(labels + 1) +
        " ] && break; sleep 0.1; done\n"
        "echo \"$n\" > '" +
        tmp / "during" +
        "'\n"
        "sleep 0.5; kill -TERM $run; sleep 1.5; kill -TERM $run; wait $run; echo $? > '" +
        tmp / "status" + "'\nkill $reader 2>/dev/null\n";
    write_file(tmp / "run.sh", cmd + "\n");
    ASSERT_EQ(std::system(("bash '" + tmp / "run.sh" + "'").c_str()), 0);
    EXPECT_EQ(read_file(tmp / "status"), "143\n") << read_file(tmp / "err");
    // ended by the second signal (the first, seen at a batch's end, would say so)
    EXPECT_EQ(read_file(tmp / "err").find("interrupted"), std::string::npos)
        << read_file(tmp / "err");
    // every label's temporary existed while it ran
    EXPECT_EQ(read_file(tmp / "during"), std::to_string(labels + 1) + "\n")
        << read_file(tmp / "err");
    EXPECT_EQ(temporaries_in(out), 0u);
    EXPECT_TRUE(fs::is_empty(out));
}

TEST_F(many_outputs, a_filter_truncated_while_mapped_leaves_none_of_2001_temporaries)
{
    std::string const fifo = tmp / "reads.fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::string const err = tmp / "classify.err";
    std::string const pattern = (out / "{label}.fq").string();
    pid_t const pid = start_child(
        binary(), {"classify", "-q", "-t", "2", "-f", filter, "--split-by-label", pattern, fifo},
        err);
    ASSERT_GE(pid, 0);
    std::signal(SIGPIPE, SIG_IGN);
    int fd = -1; // opened once the child reads the FIFO
    ASSERT_TRUE(
        wait_for(pid, [&] { return (fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK)) >= 0; }))
        << read_file(err);
    ASSERT_EQ(::fcntl(fd, F_SETFL, 0), 0);
    // more than a batch of reads: the outputs (and their temporaries) are open once the first
    // batch is read; the run then waits for more
    for (int i = 0; i < 10; ++i)
        write_all(fd, reads);
    bool const writing =
        wait_for(pid, [&] { return temporaries_in(out) == static_cast<std::size_t>(labels) + 1; });
    ASSERT_EQ(::truncate(filter.c_str(), 0), 0);
    for (int i = 0; i < 20; ++i)
        write_all(fd, reads);
    ::close(fd);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(writing) << read_file(err);
    ASSERT_TRUE(WIFEXITED(status))
        << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    EXPECT_EQ(WEXITSTATUS(status), 1) << read_file(err);
    EXPECT_NE(read_file(err).find("changed or was truncated while in use"), std::string::npos)
        << read_file(err);
    EXPECT_EQ(temporaries_in(out), 0u);
    EXPECT_TRUE(fs::is_empty(out));
}

} // namespace
