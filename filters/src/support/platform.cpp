// The filter library's calls that differ between operating systems (platform.hpp): Linux memory
// advice, cgroup limits (/proc/self/cgroup and the cgroup file system), writeback and direct I/O,
// each guarded by __linux__ and its own macro, with the portable fallback beside it. Defining
// KSIEVE_NO_LINUX_CALLS compiles the fallbacks on Linux too.
#include "platform.hpp"

#include <cctype>
#include <cstdint>
#include <exception>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__APPLE__)
#include <sys/sysctl.h>
#include <sys/types.h>
#endif

#if defined(__linux__) && !defined(KSIEVE_NO_LINUX_CALLS)
#define KSIEVE_LINUX_CALLS 1
#else
#define KSIEVE_LINUX_CALLS 0
#endif

namespace ksieve::detail::platform
{

bool uses_linux_calls() noexcept
{
    return KSIEVE_LINUX_CALLS != 0;
}

void advise_huge_pages([[maybe_unused]] void * const p,
                       [[maybe_unused]] std::size_t const bytes) noexcept
{
#if KSIEVE_LINUX_CALLS && defined(MADV_HUGEPAGE)
    ::madvise(p, bytes, MADV_HUGEPAGE); // a hint only: failure is harmless
#endif
}

void populate_read([[maybe_unused]] void * const p,
                   [[maybe_unused]] std::size_t const bytes) noexcept
{
#if KSIEVE_LINUX_CALLS && defined(MADV_POPULATE_READ)
    ::madvise(p, bytes, MADV_POPULATE_READ); // a hint: older kernels refuse it (EINVAL)
#endif
}

void populate_write([[maybe_unused]] void * const p,
                    [[maybe_unused]] std::size_t const bytes) noexcept
{
#if KSIEVE_LINUX_CALLS && defined(MADV_POPULATE_WRITE)
    ::madvise(p, bytes, MADV_POPULATE_WRITE); // a hint: older kernels refuse it (EINVAL)
#endif
}

void release_pages([[maybe_unused]] void * const p,
                   [[maybe_unused]] std::size_t const bytes) noexcept
{
#if KSIEVE_LINUX_CALLS && defined(MADV_DONTNEED)
    ::madvise(p, bytes, MADV_DONTNEED);
#elif defined(POSIX_MADV_DONTNEED)
    ::posix_madvise(p, bytes, POSIX_MADV_DONTNEED); // advice only
#endif
}

void advise_random([[maybe_unused]] void * const p,
                   [[maybe_unused]] std::size_t const bytes) noexcept
{
#if defined(POSIX_MADV_RANDOM)
    ::posix_madvise(p, bytes, POSIX_MADV_RANDOM); // advice only
#endif
}

std::uint64_t physical_memory_bytes() noexcept
{
#if defined(__APPLE__)
    std::uint64_t bytes = 0;
    std::size_t size = sizeof bytes;
    return ::sysctlbyname("hw.memsize", &bytes, &size, nullptr, 0) == 0 ? bytes : 0;
#elif defined(_SC_PHYS_PAGES)
    long const pages = ::sysconf(_SC_PHYS_PAGES);
    long const page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0
               ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
               : 0;
#else
    return 0;
#endif
}

#if KSIEVE_LINUX_CALLS
namespace
{

// A limit in a cgroup file ("max", or a number of bytes), 0 where there is none (v1 reports "no
// limit" as a huge number).
std::uint64_t read_limit(std::string const & path) noexcept
{
    std::ifstream in{path};
    std::string text;
    if (!(in >> text) || text.empty() || std::isdigit(static_cast<unsigned char>(text[0])) == 0)
        return 0;
    std::uint64_t v = 0;
    for (char const c : text)
    {
        if (std::isdigit(static_cast<unsigned char>(c)) == 0 || v > UINT64_MAX / 10 - 10)
            break;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return v > 0 && v < (std::uint64_t{1} << 60) ? v : 0;
}

// `smallest` (0: none yet) lowered to every limit of `file` in the cgroup at `dir` + `group` and
// every cgroup above it: a limit set on a parent (a batch job's cgroup above its step's) binds the
// child too.
void limit_up_the_tree(std::string const & dir, std::string group, std::string const & file,
                       std::uint64_t & smallest) noexcept
{
    for (;;)
    {
        std::uint64_t const v =
            read_limit(dir + (group == "/" ? std::string{} : group) + "/" + file);
        if (v != 0 && (smallest == 0 || v < smallest))
            smallest = v;
        if (group.empty() || group == "/")
            break;
        std::size_t const slash = group.rfind('/');
        group =
            slash == 0 || slash == std::string::npos ? std::string{"/"} : group.substr(0, slash);
    }
}

} // namespace
#endif

// The memory limit of this process's cgroups, 0 if none is set: cgroup v2 (memory.max and
// memory.high, where Slurm, systemd, Docker and Kubernetes set it) and v1 (memory.limit_in_bytes,
// and memory.soft_limit_in_bytes, which the kernel reclaims down to under pressure),
// from the cgroup /proc/self/cgroup names up to the root of each hierarchy. Where the process sees
// no such file (another system, no cgroup file system), 0.
std::uint64_t cgroup_memory_limit() noexcept
{
#if KSIEVE_LINUX_CALLS
    std::uint64_t smallest = 0;
    std::string v2 = "/", v1 = "/";
    try
    {
        std::ifstream in{"/proc/self/cgroup"};
        std::string line;
        while (std::getline(in, line))
        {
            std::size_t const a = line.find(':');
            std::size_t const b = a == std::string::npos ? a : line.find(':', a + 1);
            if (b == std::string::npos || b + 1 >= line.size() || line[b + 1] != '/')
                continue;
            std::string controllers{","}; // (appended: a GCC 12 -Wrestrict false positive)
            controllers.append(line, a + 1, b - a - 1).push_back(',');
            if (line.compare(0, a, "0") == 0 && b == a + 1)
                v2 = line.substr(b + 1);
            else if (controllers.find(",memory,") != std::string::npos)
                v1 = line.substr(b + 1);
        }
        for (char const * const file : {"memory.max", "memory.high"})
            limit_up_the_tree("/sys/fs/cgroup", v2, file, smallest);
        for (char const * const file : {"memory.limit_in_bytes", "memory.soft_limit_in_bytes"})
            limit_up_the_tree("/sys/fs/cgroup/memory", v1, file, smallest);
    }
    catch (std::exception const &) // (allocation of a path): no limit known
    {
    }
    return smallest;
#else
    return 0;
#endif
}

int sync_data(int const fd) noexcept
{
#if KSIEVE_LINUX_CALLS
    return ::fdatasync(fd);
#else
    return ::fsync(fd);
#endif
}

void drop_cached_pages([[maybe_unused]] int const fd) noexcept
{
#if KSIEVE_LINUX_CALLS && defined(POSIX_FADV_DONTNEED)
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); // advice only
#endif
}

bool set_direct_io([[maybe_unused]] int const fd, bool const on) noexcept
{
#if KSIEVE_LINUX_CALLS && defined(O_DIRECT)
    int const flags = ::fcntl(fd, F_GETFL);
    if (flags < 0)
        return !on;
    return ::fcntl(fd, F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) == 0;
#else
    return !on;
#endif
}

} // namespace ksieve::detail::platform

void ksieve::start_writeback([[maybe_unused]] int const fd,
                             [[maybe_unused]] std::uint64_t const offset,
                             [[maybe_unused]] std::uint64_t const bytes) noexcept
{
#if KSIEVE_LINUX_CALLS && defined(SYNC_FILE_RANGE_WRITE)
    ::sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(bytes),
                      SYNC_FILE_RANGE_WRITE); // advice only
#endif
}
