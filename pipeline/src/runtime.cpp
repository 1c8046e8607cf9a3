#include <ksieve/filters/error.hpp>
#include <ksieve/pipeline/commands.hpp>
#include <ksieve/pipeline/runtime.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>

#include <omp.h>
#include <unistd.h>

namespace ksieve
{

namespace
{
std::atomic<bool> interrupt_flag{false};
std::atomic<int> interrupt_signal{SIGINT};

extern "C" void on_signal(int const sig) noexcept
{
    interrupt_signal.store(sig);
    interrupt_flag.store(true);
    std::signal(sig, SIG_DFL); // a second signal ends the process at once
}
} // namespace

void install_interrupt_handler() noexcept
{
    struct sigaction sa{};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    for (int const sig : {SIGINT, SIGTERM, SIGHUP})
        sigaction(sig, &sa, nullptr);
    // A reader of our stdout that goes away (`| head`) makes writes fail with EPIPE, reported and cleaned
    // up like any write error, instead of killing the process with temporary files left behind.
    std::signal(SIGPIPE, SIG_IGN);
}

bool interrupted() noexcept { return interrupt_flag.load(std::memory_order_relaxed); }
void request_interrupt(bool const value) noexcept
{
    interrupt_signal.store(SIGINT);
    interrupt_flag.store(value);
}
void throw_if_interrupted()
{
    if (!interrupted())
        return;
    int const sig = interrupt_signal.load();
    char const * const name = sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGINT";
    throw interrupted_error{std::string{"interrupted ("} + name + ")", 128 + sig};
}

unsigned resolve_threads(unsigned const requested) noexcept
{
    if (requested != 0)
        return requested;
    int const n = omp_get_num_procs();
    return n > 0 ? static_cast<unsigned>(n) : 1u;
}

progress_line::progress_line(std::string command, bool const quiet) :
    command_{std::move(command)}, enabled_{!quiet && ::isatty(STDERR_FILENO) == 1},
    last_{std::chrono::steady_clock::now()}, start_{last_}
{}

progress_line::~progress_line() { finish(); }

void progress_line::update(std::uint64_t const records, std::uint64_t const known_units, std::uint64_t const units)
{
    if (!enabled_)
        return;
    auto const now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::seconds{1})
        return;
    last_ = now;
    double const secs = std::chrono::duration<double>(now - start_).count();
    double const rate = secs > 0 ? static_cast<double>(records) / secs : 0.0;
    if (command_ == "build") // no classes to show
        std::fprintf(stderr, "\rksieve %s: %llu reads, %.0f reads/s   ", command_.c_str(),
                     static_cast<unsigned long long>(records), rate);
    else
        std::fprintf(stderr, "\rksieve %s: %llu reads, %.1f%% known, %.0f reads/s   ", command_.c_str(),
                     static_cast<unsigned long long>(records),
                     units == 0 ? 0.0 : 100.0 * static_cast<double>(known_units) / static_cast<double>(units), rate);
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
