// The one pool of htslib worker threads that every BGZF, SAM, BAM and CRAM file of the process
// shares.
#include "detail.hpp"
#include "hts_handle.hpp"

#include <algorithm>
#include <mutex>

namespace ksieve::io::detail
{

namespace
{

// The process's htslib worker threads. Created at the first use, with the thread count asked then
// (the app asks with its resolved -t every time); destroyed at exit, after every file (each closes
// before main returns).
class shared_pool
{
public:
    htsThreadPool * get(unsigned const threads)
    {
        std::lock_guard<std::mutex> const lock{mutex_};
        if (threads_ == nullptr)
        {
            threads_.reset(hts_tpool_init(static_cast<int>(std::max(1u, threads))));
            pool_ = htsThreadPool{threads_.get(), 0};
        }
        return threads_ == nullptr ? nullptr : &pool_;
    }

private:
    std::mutex mutex_;
    hts_ptr<hts_tpool> threads_;
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
