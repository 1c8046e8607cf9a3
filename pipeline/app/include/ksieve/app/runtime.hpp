#pragma once
/*! \file
 * \brief Process-level helpers of the pipeline: interrupt flag (SIGINT/SIGTERM/SIGHUP), progress
 * line, thread count. Thread safety: the handler only touches atomics (the stop request of
 * ksieve/filters/support/cancel.hpp); progress is used by one thread.
 */
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include <ksieve/filters/support/cancel.hpp>

namespace ksieve
{

/*! \brief Install the handler of SIGINT, SIGTERM and SIGHUP, except those the parent set to be
 * ignored (the first signal sets the flag, so that the run stops at the next check and removes its
 * temporary outputs; a second one more than a second later ends the process at once, exit 128 +
 * signal) and ignore SIGPIPE (a closed stdout then fails the write with EPIPE, an io_error); a
 * SIGBUS in a mapped filter file (truncated while in use) ends the process with an error naming it,
 * exit 1, temporaries removed. */
void install_interrupt_handler() noexcept;
/*! \brief Under a limit on address space (RLIMIT_AS), keep the allocator to one arena, so that
 * the limit goes to data rather than to the address space each thread's arena reserves. Call before
 * any thread starts; no effect without such a limit. */
void fit_allocator_to_address_limit() noexcept;

/*! \brief How a run keeps within --max-memory: the bases of a batch of reads, the buffer of each
 * output (0: the writer's default), and the bytes kept for them and the program besides the filter
 * tables. */
struct memory_plan
{
    std::size_t batch_bases{std::size_t{2} << 20};
    std::size_t output_buffer_bytes{0};
    //! the bytes that many --split-by-label outputs share (0: 128 MiB, at least 64 KiB each)
    std::size_t split_bytes{0};
    //! the bases of a long record (a chromosome) hashed at once by build (16 bytes a k-mer)
    std::size_t piece_bases{std::size_t{16} << 20};
    std::uint64_t kept{0};
};

/*! \brief The plan for a process limit of `bytes` with `in_flight` batches of reads in memory at
 * once: batches and buffers as large as they are without a limit where the limit is large, smaller
 * where it is small (at least 64 KiB of bases). A function of its arguments only. */
[[nodiscard]] memory_plan plan_memory(std::uint64_t bytes, unsigned in_flight) noexcept;

/*! \brief One memory plan for every limit, whatever set it, before any work: `option_bytes` of
 * --max-memory (0: the default, the memory limit of the process's cgroup where it has one, else the
 * machine's memory) planned by plan_memory() for `command`'s batches in flight (classify's workers
 * each hold one: `threads` + 2; the other commands three), the plan set (current_memory_plan), the
 * filter tables' part set (set_memory_limit or plan_default_memory_limit), and under a limit below
 * 1 GiB the allocator kept to one arena. \throws error where classify or dedup cannot keep within
 * the limit, naming it and the threads. Thread safety: call before any worker thread starts. */
void plan_run_memory(std::uint64_t option_bytes, std::string const & command, unsigned threads);

/*! \brief The smallest process limit that plan_memory() can keep with `in_flight` batches: its
 * plan keeps at most three quarters of it (the program, the smallest batches and buffers), leaving
 * the filter at least a quarter. */
[[nodiscard]] std::uint64_t least_memory_limit(unsigned in_flight) noexcept;

/*! \brief The plan in force (the default plan until plan_run_memory()). Thread safety: set before
 * any worker thread starts; read from any thread. */
[[nodiscard]] memory_plan const & current_memory_plan() noexcept;

/*! \brief Make room for `more` files besides those this process has open now (and a few spare): the
 * soft limit on open files (RLIMIT_NOFILE) is raised to what that needs where it is lower and the
 * hard limit allows it. Call before any work. \param what the option that needs them, for the
 * message. \throws error saying how many files are needed and the hard limit where that is lower.
 * Thread safety: call from the main thread before worker threads open files. */
void ensure_open_files(std::uint64_t more, std::string const & what);

/*! \brief A progress line on stderr, shown only when stderr is a terminal and not quiet;
 * rate-limited. */
class progress_line
{
public:
    progress_line(std::string command, bool quiet);
    ~progress_line();
    /*! \brief Update counters; prints at most about once per second (on a terminal only). \param
     * fraction the part of the input read, in [0, 1], or negative if unknown. */
    void update(std::uint64_t records, std::uint64_t known_units, std::uint64_t units,
                std::uint64_t bases, double fraction = -1.0);
    /*! \brief Erase the line. */
    void finish();

private:
    std::string command_;
    bool enabled_;
    bool printed_{false};
    std::chrono::steady_clock::time_point last_;
    std::chrono::steady_clock::time_point start_;
};

} // namespace ksieve
