// The one pool of htslib worker threads that every BGZF, SAM, BAM and CRAM file shares.
#include "detail.hpp"
#include "hts_handle.hpp"

#include <algorithm>
#include <mutex>

namespace ksieve::io::detail
{

// The process's htslib worker threads. Created at the first use, with the thread count asked then
// (the app asks with its resolved -t every time); destroyed at exit, after every file (each closes
// before main returns).
htsThreadPool * hts_thread_pool(unsigned const threads)
{
    static std::mutex mutex;
    static hts_ptr<hts_tpool> pool_threads;
    static htsThreadPool pool{nullptr, 0};
    std::lock_guard<std::mutex> const lock{mutex};
    if (pool_threads == nullptr)
    {
        pool_threads.reset(hts_tpool_init(static_cast<int>(std::max(1u, threads))));
        pool = htsThreadPool{pool_threads.get(), 0};
    }
    return pool_threads == nullptr ? nullptr : &pool;
}

} // namespace ksieve::io::detail
