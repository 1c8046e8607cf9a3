#pragma once
/*! \file
 * \brief per_thread<T, Tag>(): one default-constructed T per thread, made on the thread's first
 * call (scratch memory that hot paths reuse without allocating again).
 */
#include <memory>
#include <mutex>
#include <vector>

namespace ksieve
{

/*! \brief The calling thread's T, default-constructed on its first call; null where no memory is
 * left for one. The thread keeps a plain pointer (no thread-exit destructor to register, which
 * glibc cannot do without memory); the objects are owned by a process-wide list per (T, Tag), freed
 * at exit. Tag tells apart uses of the same T. Thread safety: any thread; each gets its own object.
 */
template <typename T, typename Tag = T> T * per_thread() noexcept
{
    thread_local T * mine = nullptr;
    if (mine != nullptr)
        return mine;
    static std::mutex mutex;
    static std::vector<std::unique_ptr<T>> owned;
    try
    {
        auto made = std::make_unique<T>();
        std::lock_guard const lock{mutex};
        owned.push_back(std::move(made));
        mine = owned.back().get();
    }
    catch (...) // std::bad_alloc
    {
        return nullptr;
    }
    return mine;
}

} // namespace ksieve
