#pragma once
// A memory cgroup of a test's own, with a limit (v2 where the memory controller can be enabled for
// a child of the root, else v1), and runs of ksieve inside it with their exit status and peak
// resident memory.
#include "test_helpers.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ksieve::test
{

/*! A run in a cgroup: exit status (128 + signal where it was killed), stdout, stderr, and the peak
 * resident memory of the process in bytes. */
struct cgroup_run : run_result
{
    std::uint64_t peak{0};
};

/*! `ksieve ARGS` through sh, which runs `before` and then execs GNU time, which runs it: its exit
 * status (128 + signal where it was killed), output and peak resident memory. The peak is time's
 * (a child that a fork of this test became would count the test's own memory too). */
inline cgroup_run run_with_peak(std::string const & args, temp_dir const & tmp,
                                std::string const & before = {})
{
    std::string const peak_file = tmp / "cg.peak";
    std::string const cmd = before + "exec /usr/bin/time -f %M -o '" + peak_file + "' '" +
                            binary() + "' " + args + " >'" + tmp / "cg.out" + "' 2>'" +
                            tmp / "cg.err" + "'";
    cgroup_run r;
    int const raw = std::system(cmd.c_str());
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    std::string const peak = read_file(peak_file); // "[Command ...\n]KIB\n"
    std::size_t const line = peak.find_last_of('\n', peak.size() >= 2 ? peak.size() - 2 : 0);
    r.peak = std::strtoull(peak.c_str() + (line == std::string::npos ? 0 : line + 1), nullptr, 10) *
             1024;
    r.out = read_file(tmp / "cg.out");
    r.err = read_file(tmp / "cg.err");
    return r;
}

// A memory cgroup of this test's own, with a limit: v2 where the memory controller can be enabled
// for a child of the root, else v1. ok() is false where neither can be made (no root, no cgroup
// file system, a container that hides it).
class memory_cgroup
{
public:
    explicit memory_cgroup(std::uint64_t const bytes)
    {
        std::random_device rd;
        std::string const name = "ksieve-test-" + std::to_string(rd());
        for (std::string const root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"})
            if (read_file(root + "/cgroup.controllers").find("memory") != std::string::npos)
            {
                (void)put(root + "/cgroup.subtree_control", "+memory");
                if (make(root + "/" + name) && put(dir_ + "/memory.max", std::to_string(bytes)))
                {
                    (void)put(dir_ + "/memory.swap.max", "0");
                    return;
                }
                remove();
            }
        if (fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes") &&
            make("/sys/fs/cgroup/memory/" + name) &&
            put(dir_ + "/memory.limit_in_bytes", std::to_string(bytes)))
        {
            (void)put(dir_ + "/memory.memsw.limit_in_bytes", std::to_string(bytes));
            return;
        }
        remove();
    }
    ~memory_cgroup() { remove(); }
    memory_cgroup(memory_cgroup const &) = delete;
    memory_cgroup & operator=(memory_cgroup const &) = delete;

    [[nodiscard]] bool ok() const noexcept { return !dir_.empty(); }

    // `ksieve ARGS` (through sh, which joins the cgroup and then execs it) in the cgroup.
    [[nodiscard]] cgroup_run run(std::string const & args, temp_dir const & tmp) const
    {
        return run_with_peak(args, tmp, "echo $$ > " + dir_ + "/cgroup.procs && ");
    }

private:
    bool make(std::string const & dir)
    {
        std::error_code ec;
        if (!fs::create_directory(dir, ec) || ec)
            return false;
        dir_ = dir;
        return true;
    }
    static bool put(std::string const & file, std::string const & text)
    {
        int const fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return false;
        bool const ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        ::close(fd);
        return ok;
    }
    void remove() noexcept
    {
        if (!dir_.empty())
            (void)::rmdir(dir_.c_str());
        dir_.clear();
    }

    std::string dir_;
};

} // namespace ksieve::test
