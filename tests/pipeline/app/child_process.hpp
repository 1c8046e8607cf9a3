#pragma once
// Helpers for tests that drive a ksieve child process through a FIFO: waiting for a condition while
// the child runs, and writing all of a string into a descriptor.
#include <chrono>
#include <cstddef>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ksieve::test
{

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
