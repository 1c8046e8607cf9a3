// parallel_for: a loop over [0, n) on a few threads that rethrows the first exception once every
// thread has stopped (the filter library's only thread helper; shared by the set operations and
// re-sharding).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

namespace ksieve::detail
{

// fn(s) (or fn(s, w), w the worker: 0 for the calling thread, then 1, 2, ...) for s in [0, n) on up
// to `threads` threads (the calling one included); the first exception is rethrown after every
// thread has stopped.
template <typename Fn> void parallel_for(std::size_t const n, unsigned const threads, Fn && fn)
{
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto work = [&](std::size_t const w)
    {
        for (;;)
        {
            std::size_t const s = next.fetch_add(1);
            if (s >= n)
                return;
            try
            {
                if constexpr (std::is_invocable_v<Fn &, std::size_t, std::size_t>)
                    fn(s, w);
                else
                    fn(s);
            }
            catch (...)
            {
                std::lock_guard const lock{failure_mutex};
                if (!failure)
                    failure = std::current_exception();
                next.store(n);
                return;
            }
        }
    };
    std::size_t const extra =
        std::min<std::size_t>(threads > 0 ? threads - 1 : 0, n > 0 ? n - 1 : 0);
    std::vector<std::thread> pool;
    pool.reserve(extra);
    for (std::size_t t = 0; t < extra; ++t)
        pool.emplace_back(work, t + 1);
    work(0);
    for (auto & t : pool)
        t.join();
    if (failure)
        std::rethrow_exception(failure);
}

// The values of `done` (each one set, as by a parallel_for over it), moved out in order.
template <typename T> std::vector<T> values_of(std::vector<std::optional<T>> & done)
{
    std::vector<T> out;
    out.reserve(done.size());
    for (auto & d : done)
        out.push_back(std::move(*d));
    return out;
}

} // namespace ksieve::detail
