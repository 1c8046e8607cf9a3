#pragma once
// Helpers for tests that drive a ksieve child process through a FIFO: starting it with its stderr
// in a file, waiting for a condition while it runs, and writing all of a string into a descriptor.
#include <chrono>
#include <cstddef>
#include <fcntl.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace ksieve::test
{

/*! Starts `program` with the arguments `args` (its argv[0] "ksieve") and its stderr written to
 * `err_path`; the child's process id, -1 where no process could be made. */
inline pid_t start_child(std::string const & program, std::vector<std::string> args,
                         std::string const & err_path)
{
    args.insert(args.begin(), "ksieve");
    std::vector<char *> argv;
    for (std::string & a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t const pid = ::fork();
    if (pid == 0)
    {
        int const fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ::dup2(fd, STDERR_FILENO);
        ::execv(program.c_str(), argv.data());
        ::_exit(127);
    }
    return pid;
}

/*! Waits (at most a minute, a guard against a hang, not a measure) until `ready()` or the child
 * `pid` ends; whether `ready()` came true. */
template <typename Ready> bool wait_for(pid_t const pid, Ready && ready)
{
    for (int i = 0; i < 6000; ++i)
    {
        if (ready())
            return true;
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    return false;
}

/*! Writes `bytes` into `fd`, stopping early where the reader went away. */
inline void write_all(int const fd, std::string const & bytes)
{
    std::size_t done = 0;
    while (done < bytes.size())
    {
        ssize_t const k = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (k <= 0)
            return; // the reader went away
        done += static_cast<std::size_t>(k);
    }
}

} // namespace ksieve::test
