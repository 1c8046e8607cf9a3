#pragma once
/*! \file
 * \brief Process-level helpers of the pipeline: SIGINT flag, progress line, thread count.
 * Thread safety: interrupted() and request_interrupt() are async-signal-safe atomics; progress is used by
 * one thread.
 */
#include <chrono>
#include <cstdint>
#include <string>

namespace ksieve
{

/*! \brief Install the SIGINT handler (first SIGINT sets the flag, a second one kills the process). */
void install_interrupt_handler() noexcept;
/*! \brief Whether SIGINT was received. */
[[nodiscard]] bool interrupted() noexcept;
/*! \brief Set the flag by hand (tests). */
void request_interrupt(bool value = true) noexcept;
/*! \brief Throw interrupted_error if the flag is set. */
void throw_if_interrupted();

/*! \brief A progress line on stderr, shown only when stderr is a terminal and not quiet; rate-limited. */
class progress_line
{
public:
    progress_line(std::string command, bool quiet);
    ~progress_line();
    /*! \brief Update counters; prints at most about once per second. */
    void update(std::uint64_t records, std::uint64_t known_units, std::uint64_t units);
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
