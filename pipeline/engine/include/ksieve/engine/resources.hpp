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

/*! \brief Makes sure that the OpenMP parallel regions of `threads` threads that the calling thread
 * starts can have their threads: starts them now, after checking that the system lets this process
 * start that many threads of OpenMP's stack size (the OpenMP runtime ends the process when it
 * cannot create a thread). Its threads are kept for later regions of at most `threads` threads on
 * the calling thread. Cheap after the first call on a thread with the same or a smaller count. \pre
 * called outside any parallel region. \throws resource_error if the threads cannot be started
 * (nothing is left running). */
void reserve_openmp_threads(unsigned threads);

} // namespace ksieve
