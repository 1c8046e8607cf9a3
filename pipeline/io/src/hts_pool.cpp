#include "detail.hpp"

#include <htslib/hts.h>
#include <htslib/thread_pool.h>

#include <algorithm>
#include <mutex>

namespace ksieve::io::detail
{

namespace
{

// The process's htslib worker threads. Created at the first use, with the thread count asked then (the app
// asks with its resolved -t every time); destroyed at exit, after every file (each closes before main
// returns).
class shared_pool
{
public:
    htsThreadPool * get(unsigned const threads)
    {
        std::lock_guard<std::mutex> const lock{mutex_};
        if (pool_.pool == nullptr)
        {
            pool_.pool = hts_tpool_init(static_cast<int>(std::max(1u, threads)));
            pool_.qsize = 0;
        }
        return pool_.pool == nullptr ? nullptr : &pool_;
    }

    ~shared_pool()
    {
        if (pool_.pool != nullptr)
            hts_tpool_destroy(pool_.pool);
    }

private:
    std::mutex mutex_;
    htsThreadPool pool_{nullptr, 0};
};

shared_pool & the_pool()
{
    static shared_pool pool;
    return pool;
}

} // namespace

htsThreadPool * hts_thread_pool(unsigned const threads)
{
    return the_pool().get(threads);
}

} // namespace ksieve::io::detail
