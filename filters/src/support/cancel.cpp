// The filter library's stop request: the flag that request_stop() sets and the long loops check.
#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/error.hpp>

#include <atomic>
#include <csignal>
#include <string>

namespace ksieve
{

namespace
{
std::atomic<bool> stop_flag{false};
std::atomic<int> stop_signal{SIGINT};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "the stop request is set from signal handlers");
} // namespace

bool stop_requested() noexcept
{
    return stop_flag.load(std::memory_order_relaxed);
}

void request_stop(bool const value, int const signal) noexcept
{
    stop_signal.store(signal);
    stop_flag.store(value, std::memory_order_release);
}

void throw_if_stop_requested()
{
    if (!stop_flag.load(std::memory_order_acquire))
        return;
    int const sig = stop_signal.load();
    char const * const name = sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGINT";
    throw interrupted_error{std::string{"interrupted ("} + name + ")", 128 + sig};
}

} // namespace ksieve
