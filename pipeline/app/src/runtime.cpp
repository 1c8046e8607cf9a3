// Process-level helpers: the SIGINT/SIGTERM/SIGHUP handler (interrupt, then exit on a second
// signal), the memory plan of a run, the thread count, and the progress line on stderr.
#include "platform_app.hpp"

#include <ksieve/app/commands.hpp>
#include <ksieve/app/runtime.hpp>
#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/memory_budget.hpp>
#include <ksieve/io/io.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include <fcntl.h>
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

namespace ksieve
{

namespace
{
std::atomic<std::int64_t> first_signal_ns{0};
memory_plan the_plan{};

std::int64_t monotonic_ns() noexcept
{
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t); // async-signal-safe
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

extern "C" void on_signal(int const sig) noexcept
{
    std::int64_t const now = monotonic_ns();
    std::int64_t expected = 0;
    if (first_signal_ns.compare_exchange_strong(expected, now))
    {
        request_stop(true, sig);
        return;
    }
    // A second signal ends the process at once, unless it is the same event delivered twice
    // (timeout and schedulers signal the process and then its group): only one more than a second
    // after the first. The temporaries of the unfinished outputs go with it.
    if (now - expected > 1000000000)
    {
        io::remove_temporary_outputs();
        _exit(128 + sig);
    }
}
// Writes `text` to standard error (async-signal-safe).
void write_stderr(char const * text) noexcept
{
    std::size_t n = std::strlen(text);
    while (n > 0)
    {
        ssize_t const k = ::write(STDERR_FILENO, text, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;
        text += k;
        n -= static_cast<std::size_t>(k);
    }
}

// A filter file truncated while it is mapped (rewritten in place during the run) faults on the next
// touch of a page past its new end: the run ends with an error naming it, the temporaries of its
// outputs removed. A SIGBUS anywhere else (or sent by another process) keeps its default action.
extern "C" void on_bus_error(int const sig, siginfo_t * const info, void *) noexcept
{
    char const * const name =
        info != nullptr && info->si_code > 0 ? mapped_filter_name(info->si_addr) : nullptr;
    if (name == nullptr)
    {
        std::signal(sig, SIG_DFL);
        ::raise(sig); // delivered once the handler returns (a fault would also recur there)
        return;
    }
    write_stderr("ksieve: error: filter file '");
    write_stderr(name);
    write_stderr("' changed or was truncated while in use (replace a filter by renaming a new file "
                 "over it)\n");
    io::remove_temporary_outputs();
    _exit(1);
}
} // namespace

void install_interrupt_handler() noexcept
{
    struct sigaction sa
    {
    };
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    for (int const sig : {SIGINT, SIGTERM, SIGHUP})
    {
        // A signal the parent set to be ignored stays ignored (nohup for SIGHUP, background jobs of
        // sh for SIGINT).
        struct sigaction old
        {
        };
        if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sig, &sa, nullptr);
    }
    struct sigaction bus
    {
    };
    bus.sa_sigaction = on_bus_error;
    sigemptyset(&bus.sa_mask);
    bus.sa_flags = SA_SIGINFO;
    sigaction(SIGBUS, &bus, nullptr);
    // A reader of our stdout that goes away (`| head`) makes writes fail with EPIPE, reported and
    // cleaned up like any write error, instead of killing the process with temporary files left
    // behind.
    std::signal(SIGPIPE, SIG_IGN);
}

void fit_allocator_to_address_limit() noexcept
{
    // glibc gives each thread that allocates an arena of its own, and each arena reserves 64 MiB
    // of address space that it mostly never touches: under a limit on address space (ulimit -v, a
    // batch scheduler's h_vmem) that reservation, not the data, is what runs out. One arena then:
    // the hot paths do not allocate, so the threads rarely meet in it.
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        app_platform::limit_allocator_arenas();
}

memory_plan plan_memory(std::uint64_t const bytes, unsigned const in_flight) noexcept
{
    constexpr std::uint64_t mib = std::uint64_t{1} << 20;
    constexpr std::uint64_t fixed = 8 * mib; // the program, its libraries, thread stacks
    constexpr std::uint64_t per_base = 32;   // a batch's records, keys and results, per base
    memory_plan p;
    std::uint64_t const per_batch_base = per_base * std::max(1u, in_flight);
    std::uint64_t const for_batches = bytes / 2 > fixed ? (bytes / 2 - fixed) : 0;
    p.batch_bases = static_cast<std::size_t>(
        std::clamp<std::uint64_t>(for_batches / per_batch_base, 64 << 10, 2 * mib));
    // outputs: the writer's buffers (1 MiB, 8 MiB compressed) where the limit is large
    p.output_buffer_bytes =
        bytes >= 512 * mib
            ? 0
            : static_cast<std::size_t>(std::clamp<std::uint64_t>(bytes / 64, 64 << 10, mib));
    // a long record's pieces: two batches' bases where the batches are smaller than without a limit
    p.piece_bases = p.batch_bases >= 2 * mib
                        ? std::size_t{16} << 20
                        : std::max<std::size_t>(std::size_t{256} << 10, 2 * p.batch_bases);
    // many split outputs: an eighth of the limit, where the limit is small
    p.split_bytes = p.output_buffer_bytes == 0 ? 0 : static_cast<std::size_t>(bytes / 8);
    std::uint64_t const buffers = p.output_buffer_bytes == 0 ? 48 * mib : 6 * p.output_buffer_bytes;
    p.kept = fixed + p.batch_bases * per_batch_base + buffers;
    return p;
}

void plan_run_memory(std::uint64_t const option_bytes, std::string const & command,
                     unsigned const threads)
{
    bool const option = option_bytes != 0;
    std::uint64_t const limit = option ? option_bytes : physical_memory();
    if (limit == 0)
        return; // the machine's memory is unknown: no plan to keep
    bool const classify = command == "classify";
    unsigned const in_flight = classify ? threads + 2 : 3;
    memory_plan const plan = plan_memory(limit, in_flight);
    std::uint64_t const least = least_memory_limit(in_flight);
    if ((classify || command == "dedup") && limit < least)
    {
        std::string const what =
            option ? "--max-memory " + format_bytes(limit) + " is below the "
            : memory_limit_from_cgroup()
                ? "the memory limit of this process's cgroup is " + format_bytes(limit) +
                      ", below the "
                : "the machine's memory is " + format_bytes(limit) + ", below the ";
        throw error{what + format_bytes(least) + " that " + command + " needs with " +
                    std::to_string(threads) + (threads == 1 ? " thread" : " threads") +
                    " (the program, its batches of reads and output buffers, and at least a "
                    "quarter of the limit for the filter): " +
                    (option ? "raise it" : "raise it, or use fewer threads (-t)")};
    }
    the_plan = plan;
    // under a small limit, memory freed by one thread is not kept in an arena of its own (glibc
    // gives each thread that allocates one): one arena for all (before any thread starts)
    if (limit < (std::uint64_t{1} << 30))
        app_platform::limit_allocator_arenas();
    if (option)
        set_memory_limit(limit, plan.kept);
    else
        plan_default_memory_limit(plan.kept);
}

std::uint64_t least_memory_limit(unsigned const in_flight) noexcept
{
    constexpr std::uint64_t mib = std::uint64_t{1} << 20;
    std::uint64_t bytes = mib;
    while (plan_memory(bytes, in_flight).kept > bytes / 4 * 3)
        bytes += mib;
    return bytes;
}

memory_plan const & current_memory_plan() noexcept
{
    return the_plan;
}

void ensure_open_files(std::uint64_t const more, std::string const & what)
{
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return; // unknown: opening the files will tell
    // the descriptors open now (inputs, outputs already open, the standard streams), below the
    // soft limit, where every descriptor of this process is
    std::uint64_t open_now = 0;
    std::uint64_t const probe =
        limit.rlim_cur == RLIM_INFINITY ? 65536 : std::min<std::uint64_t>(limit.rlim_cur, 65536);
    for (std::uint64_t fd = 0; fd < probe; ++fd)
        if (::fcntl(static_cast<int>(fd), F_GETFD) != -1)
            ++open_now;
    constexpr std::uint64_t spare = 4; // the next input file, --stats and --multiqc at the end
    std::uint64_t const needed = open_now + more + spare;
    if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= needed)
        return;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed)
        throw error{what + " needs " + std::to_string(needed) +
                    " open files, but this process may open at most " +
                    std::to_string(limit.rlim_max) +
                    " (the hard limit of open files, ulimit -Hn): raise it, or write fewer files"};
    rlimit raised = limit;
    raised.rlim_cur = static_cast<rlim_t>(needed);
    if (setrlimit(RLIMIT_NOFILE, &raised) != 0)
        throw error{what + " needs " + std::to_string(needed) +
                    " open files, but the limit of open files is " +
                    std::to_string(limit.rlim_cur) +
                    " and could not be raised: " + std::strerror(errno)};
}

unsigned resolve_threads(unsigned const requested) noexcept
{
    int const n = omp_get_num_procs();
    unsigned const cores = n > 0 ? static_cast<unsigned>(n) : 1u;
    if (requested == 0)
        return cores;
    // Outputs are the same for any thread count, so a count far above the cores only costs memory
    // and stack (and crashes OpenMP runtimes at tens of thousands).
    unsigned const most = std::max(16u, 4u * cores);
    if (requested > most)
    {
        std::fprintf(stderr,
                     "ksieve: warning: -t %u is more than this machine can use (%u cores): using "
                     "%u threads\n",
                     requested, cores, most);
        return most;
    }
    return requested;
}

progress_line::progress_line(std::string command, bool const quiet)
    : command_{std::move(command)}, enabled_{!quiet && ::isatty(STDERR_FILENO) == 1},
      last_{std::chrono::steady_clock::now()}, start_{last_}
{
}

progress_line::~progress_line()
{
    finish();
}

void progress_line::update(std::uint64_t const records, std::uint64_t const known_units,
                           std::uint64_t const units, std::uint64_t const bases,
                           double const fraction)
{
    if (!enabled_)
        return;
    auto const now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::seconds{1})
        return;
    last_ = now;
    double const secs = std::chrono::duration<double>(now - start_).count();
    double const rate = secs > 0 ? static_cast<double>(bases) / secs / 1e6 : 0.0;
    // a chromosome is one record for minutes: bases show the progress
    if (command_ == "build" || command_ == "counting k-mers") // no classes to show
        std::fprintf(stderr, "\rksieve %s: %llu sequences, %.1f Mbp, %.1f Mbp/s   ",
                     command_.c_str(), static_cast<unsigned long long>(records),
                     static_cast<double>(bases) / 1e6, rate);
    else
        std::fprintf(stderr, "\rksieve %s: %llu reads, %.1f Mbp, %.1f%% known, %.1f Mbp/s   ",
                     command_.c_str(), static_cast<unsigned long long>(records),
                     static_cast<double>(bases) / 1e6,
                     units == 0
                         ? 0.0
                         : 100.0 * static_cast<double>(known_units) / static_cast<double>(units),
                     rate);
    if (fraction >= 0.0)
        std::fprintf(stderr, "%.0f%% of the input   ", 100.0 * fraction);
    std::fflush(stderr);
    printed_ = true;
}

void progress_line::finish()
{
    if (printed_)
    {
        std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
        printed_ = false;
    }
}

} // namespace ksieve
