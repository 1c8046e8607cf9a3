#pragma once
/*! \file
 * \brief The filter library's stop request: a process-wide flag that a signal handler (or a test)
 * sets and that the library's long loops (set operations, re-sharding, refitting) check every few
 * thousand entries.
 *
 * The checks read one relaxed atomic per chunk of entries (never per key on a hot path) and throw
 * interrupted_error once the flag is set, so that a run stops within a fraction of a second and its
 * caller removes its outputs. The pipeline's batch loops and its signal handler use this flag too.
 * Thread safety: request_stop() and stop_requested() are async-signal-safe atomic operations;
 * throw_if_stop_requested() may be called from any thread.
 */

namespace ksieve
{

/*! \brief Whether a stop was requested. Async-signal-safe. */
[[nodiscard]] bool stop_requested() noexcept;

/*! \brief Set (or clear) the stop request. \param signal the signal that asked for the stop: the
 * exit status of the interrupted_error thrown is 128 + signal, its message names the signal.
 * Async-signal-safe. */
void request_stop(bool value = true, int signal = 2) noexcept;

/*! \brief Throw interrupted_error (exit status 128 + the signal given to request_stop) if a stop
 * was requested. Thread-safe. */
void throw_if_stop_requested();

} // namespace ksieve
