#pragma once
/*! \file
 * \brief Running out of threads or memory as an error, never an abort: the error type and its
 * messages, and the reservation of the OpenMP threads of a run before its first parallel region.
 */
#include <string>

#include <ksieve/filters/support/error.hpp>

namespace ksieve
{

/*! \brief Threads or memory ran out (exit status 1). The message names what could not be had and
 * the remedy. Thread safety: a plain value. */
class resource_error : public error
{
public:
    using error::error;
};

/*! \brief The error for a thread of `what` (such as "the reader thread") that the system refused to
 * start, for `reason` (the system's message). Thread-safe; no allocation failure other than
 * std::bad_alloc. */
[[nodiscard]] resource_error thread_error(std::string const & what, std::string const & reason);

/*! \brief The error for memory that ran out while `what` (such as "processing a batch").
 * Thread-safe. */
[[nodiscard]] resource_error memory_error(std::string const & what);

/*! \brief Starts the threads of the calling thread's OpenMP regions of `threads` threads now,
 * after checking that the system lets this process start that many threads of OpenMP's stack size
 * (the OpenMP runtime ends the process when it cannot create one); the runtime keeps them for later
 * regions. Cheap after a first call on the thread with the same or a larger count. \pre called
 * outside any parallel region. \throws resource_error if the threads cannot be started (nothing is
 * left running). */
void reserve_openmp_threads(unsigned threads);

} // namespace ksieve
