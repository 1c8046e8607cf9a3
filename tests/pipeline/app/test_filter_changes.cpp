// A filter file truncated while classify has it mapped (rewritten in place during the run): the run
// ends with an error that names the filter, exit status 1 and no temporary left, instead of dying
// of SIGBUS.
#include "child_process.hpp"
#include "test_helpers.hpp"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace
{

using namespace ksieve::test;

// Whether the process `pid` maps the file `path` (its line in /proc/PID/maps).
bool maps_file(pid_t const pid, std::string const & path)
{
    return read_file("/proc/" + std::to_string(pid) + "/maps").find(path) != std::string::npos;
}

bool has_temporary(fs::path const & dir)
{
    for (auto const & e : fs::directory_iterator{dir})
        if (e.path().filename().string().find(".ksieve-tmp.") != std::string::npos)
            return true;
    return false;
}

TEST(filter_changes, a_filter_truncated_while_mapped_ends_the_run_with_an_error)
{
    temp_dir const tmp;
    std::string const filter = tmp / "lambda.ksf";
    std::string const examples = std::string{KSIEVE_TEST_DATA_DIR} + "/../../examples/data/";
    ASSERT_EQ(run_ksieve("build -q -o '" + filter + "' '" + examples + "lambda.fa.gz'", tmp).status,
              0);
    std::string const reads = gunzip(examples + "reads.fq.gz", tmp);
    ASSERT_GT(reads.size(), 100000u);
    fs::path const out_dir = fs::path{tmp.path()} / "out";
    fs::create_directory(out_dir);
    std::string const fifo = tmp / "reads.fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::string const err = tmp / "classify.err";
    std::string const novel = (out_dir / "novel.fq").string();

    pid_t const pid = start_child(
        binary(), {"classify", "-q", "-t", "2", "-f", filter, "--novel", novel, fifo}, err);
    ASSERT_GE(pid, 0);
    std::signal(SIGPIPE, SIG_IGN);
    bool const mapped = wait_for(pid, [&] { return maps_file(pid, filter); });
    int fd = -1; // opened once the child reads the FIFO
    ASSERT_TRUE(
        wait_for(pid, [&] { return (fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK)) >= 0; }))
        << read_file(err);
    ASSERT_EQ(::fcntl(fd, F_SETFL, 0), 0);
    // enough reads for the first batch: the outputs (and their temporaries) are open then
    for (int i = 0; i < 3; ++i)
        write_all(fd, reads);
    bool const writing = wait_for(pid, [&] { return has_temporary(out_dir); });
    ASSERT_EQ(::truncate(filter.c_str(), 0), 0);
    for (int i = 0; i < 3; ++i)
        write_all(fd, reads);
    ::close(fd);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);

    EXPECT_TRUE(mapped);
    EXPECT_TRUE(writing);
    ASSERT_TRUE(WIFEXITED(status))
        << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    EXPECT_EQ(WEXITSTATUS(status), 1);
    std::string const message = read_file(err);
    EXPECT_NE(message.find("ksieve: error: "), std::string::npos) << message;
    EXPECT_NE(message.find("'" + filter + "' changed or was truncated while in use"),
              std::string::npos)
        << message;
    EXPECT_FALSE(has_temporary(out_dir));
    EXPECT_FALSE(fs::exists(novel));
}

} // namespace
