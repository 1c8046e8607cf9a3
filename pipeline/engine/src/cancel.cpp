// The cancel token of a run: the process-wide stop flag, its signal, and the error it turns into.
#include <ksieve/engine/cancel.hpp>
#include <ksieve/filters/error.hpp>

#include <atomic>
#include <csignal>
#include <string>

namespace ksieve
{

namespace
{
std::atomic<bool> interrupt_flag{false};
std::atomic<int> interrupt_signal{SIGINT};
} // namespace

bool interrupted() noexcept { return interrupt_flag.load(std::memory_order_relaxed); }

void request_interrupt(bool const value, int const signal) noexcept
{
    interrupt_signal.store(signal);
    interrupt_flag.store(value, std::memory_order_release);
}

void throw_if_interrupted()
{
    if (!interrupt_flag.load(std::memory_order_acquire))
        return;
    int const sig = interrupt_signal.load();
    char const * const name = sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGINT";
    throw interrupted_error{std::string{"interrupted ("} + name + ")", 128 + sig};
}

} // namespace ksieve
