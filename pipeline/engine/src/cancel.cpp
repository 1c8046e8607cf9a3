// The cancel token of a run: the filter library's stop request (ksieve/filters/cancel.hpp), so that
// the library's long loops and the pipeline's batch loops stop at the same signal.
#include <ksieve/engine/cancel.hpp>
#include <ksieve/filters/cancel.hpp>

namespace ksieve
{

bool interrupted() noexcept
{
    return stop_requested();
}

void request_interrupt(bool const value, int const signal) noexcept
{
    request_stop(value, signal);
}

void throw_if_interrupted()
{
    throw_if_stop_requested();
}

} // namespace ksieve
