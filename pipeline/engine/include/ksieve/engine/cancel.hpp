#pragma once
/*! \file
 * \brief The cancel token of a run: a process-wide flag that a signal handler (or a test) sets and
 * that the batch loops check between batches, so that a run stops at the next check and its outputs
 * are removed. It is the filter library's stop request (ksieve/filters/cancel.hpp), which its long
 * loops check too. Thread safety: every function is an async-signal-safe atomic operation except
 * throw_if_interrupted(), which may be called from any thread.
 */

namespace ksieve
{

/*! \brief Whether a stop was requested. */
[[nodiscard]] bool interrupted() noexcept;

/*! \brief Set (or clear) the flag. \param signal the signal that asked for the stop (its number
 * gives the exit status 128 + signal and the name in the message); async-signal-safe. */
void request_interrupt(bool value = true, int signal = 2) noexcept;

/*! \brief Throw interrupted_error (exit status 128 + signal) if the flag is set. */
void throw_if_interrupted();

} // namespace ksieve
