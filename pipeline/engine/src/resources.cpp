// Running out of threads or memory as an error: the messages, and the OpenMP threads of a run
// started (after a check that the system allows them) before its first parallel region.
#include <ksieve/engine/resources.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include <omp.h>
#include <pthread.h>

namespace ksieve
{

resource_error thread_error(std::string const & what, std::string const & reason)
{
    return resource_error{
        "out of threads: cannot start " + what + " (" + reason +
        "); use fewer threads (-t) or raise the limits of this process on threads and "
        "virtual memory (ulimit -u, ulimit -v)"};
}

resource_error memory_error(std::string const & what)
{
    return resource_error{
        "out of memory while " + what +
        "; use fewer threads (-t), set --max-memory below the memory this process may "
        "have, or raise its memory limit (ulimit -v)"};
}

namespace
{

// The stack size of the OpenMP runtime's threads: OMP_STACKSIZE or GOMP_STACKSIZE (a number with
// an optional B, K, M or G suffix, kilobytes without one), else none (the system's default).
std::optional<std::size_t> openmp_stack_size()
{
    for (char const * const name : {"OMP_STACKSIZE", "GOMP_STACKSIZE"})
    {
        char const * const text = std::getenv(name);
        if (text == nullptr)
            continue;
        char * end = nullptr;
        unsigned long long const n = std::strtoull(text, &end, 10);
        if (end == text)
            continue;
        while (std::isspace(static_cast<unsigned char>(*end)))
            ++end;
        int const unit = std::toupper(static_cast<unsigned char>(*end));
        std::size_t const shift = unit == 'B' ? 0 : unit == 'M' ? 20 : unit == 'G' ? 30 : 10;
        return static_cast<std::size_t>(n) << shift;
    }
    return std::nullopt;
}

// Threads that wait until the object ends (a check that the system lets the process start them).
class waiting_threads
{
public:
    ~waiting_threads()
    {
        {
            std::lock_guard lock{mutex_};
            released_ = true;
        }
        cv_.notify_all();
        for (pthread_t const t : threads_)
            pthread_join(t, nullptr);
    }

    // Starts one more waiting thread; 0, or the error number of pthread_create.
    int start(pthread_attr_t const & attr)
    {
        pthread_t t{};
        int const rc = pthread_create(&t, &attr, &waiting_threads::wait, this);
        if (rc == 0)
            threads_.push_back(t);
        return rc;
    }

    void reserve(std::size_t const n) { threads_.reserve(n); }

private:
    static void * wait(void * const self) noexcept
    {
        auto & w = *static_cast<waiting_threads *>(self);
        std::unique_lock lock{w.mutex_};
        w.cv_.wait(lock, [&] { return w.released_; });
        return nullptr;
    }

    std::mutex mutex_;
    std::condition_variable cv_;
    bool released_{false};
    std::vector<pthread_t> threads_;
};

// Whether `extra` threads of OpenMP's stack size can run at once besides the calling thread; 0, or
// the error number of the first refusal.
int can_start(unsigned const extra)
{
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return EAGAIN;
    if (std::optional<std::size_t> const stack = openmp_stack_size())
        pthread_attr_setstacksize(&attr, *stack);
    int rc = 0;
    {
        waiting_threads waiting;
        waiting.reserve(extra);
        for (unsigned i = 0; i < extra && rc == 0; ++i)
            rc = waiting.start(attr);
    }
    pthread_attr_destroy(&attr);
    return rc;
}

} // namespace

void reserve_openmp_threads(unsigned const threads)
{
    // the OpenMP team that this thread's regions have had so far (the runtime keeps its threads)
    thread_local unsigned reserved = 1;
    if (threads <= reserved)
        return;
    if (int const rc = can_start(threads - 1); rc != 0)
        throw thread_error(std::to_string(threads) + " threads", std::strerror(rc));
    std::atomic<unsigned> started{0}; // (a region that does nothing could be left out)
#pragma omp parallel num_threads(threads)
    started.fetch_add(1, std::memory_order_relaxed);
    reserved = std::max(started.load(), 1u);
}

} // namespace ksieve
