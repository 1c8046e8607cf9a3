#pragma once
// Internal helpers shared by the engine's source files (not installed, not part of the API).
#include <ksieve/engine/engine.hpp>

#include <omp.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

namespace ksieve::detail
{

// Throws the error of a filter that took no more k-mers: resource_error where a quotient filter
// could still grow but its memory could not be had, else full_error with advice that fits its type.
[[noreturn]] void throw_full(any_filter const & filter, std::string const & filter_name);

// Stable counting sort of keys[0, n) by shard into part, index[p] the key's position; start[s] is
// the first position of shard s afterwards.
void partition_by_shard(any_filter const & f, std::uint64_t const * keys, std::size_t n,
                        std::vector<std::uint64_t> & part, std::vector<std::uint32_t> & index,
                        std::vector<std::size_t> & start);

// best[j] = max over the filters of count(keys[j]), for n keys (one thread); the quotient-filter
// parts of one split that do not overlap count as their merge (their counts added).
void query_keys(std::span<any_filter const * const> filters, std::uint64_t const * keys,
                std::size_t n, std::uint64_t * best, batch_engine_query_scratch & s);

// Resizes v and more to n where v is smaller (scratch vectors grow together and are kept).
template <typename V, typename... More> void grow(std::size_t const n, V & v, More &... more)
{
    if (v.size() < n)
    {
        v.resize(n);
        (more.resize(n), ...);
    }
}

// The part of n items that the calling thread of an OpenMP parallel region takes: thread t of nt
// takes the contiguous range [n t / nt, n (t + 1) / nt), the same split on every call.
struct thread_share
{
    std::size_t thread; // omp_get_thread_num()
    std::size_t begin, end;
};
[[nodiscard]] inline thread_share share_of(std::size_t const n) noexcept
{
    std::size_t const t = static_cast<std::size_t>(omp_get_thread_num());
    std::size_t const nt = static_cast<std::size_t>(omp_get_num_threads());
    return thread_share{t, n * t / nt, n * (t + 1) / nt};
}

// query_keys() on `threads` threads, each over its share_of(n) with its own scratch.
// \pre scratch.size() >= threads.
void query_keys_parallel(std::span<any_filter const * const> filters, std::uint64_t const * keys,
                         std::size_t n, std::uint64_t * best,
                         std::span<batch_engine_query_scratch> scratch, unsigned threads);

// Stable counting sort by shard, in parallel, of the keys that for_each_key(u0, u1, fn) visits for
// units [u0, u1) (fn(p), p the key's index in keys.keys, in unit order): the t-th of `threads`
// ranges of units is counted and placed by one thread, after the keys of ranges < t in each shard,
// so the order is the serial one for any thread count. Afterwards part[start[s], start[s + 1])
// holds shard s's local keys and pos (if not null) their indices in keys.keys. counts: per-range
// scratch. Allocates only outside its parallel regions (\throws std::bad_alloc).
template <typename ForEachKey>
void partition_units_by_shard(any_filter const & filter, batch_keys const & keys,
                              unsigned const threads, ForEachKey const & for_each_key,
                              std::vector<std::vector<std::uint64_t>> & counts,
                              std::vector<std::uint64_t> & start, std::vector<std::uint64_t> & part,
                              std::vector<std::uint64_t> * const pos)
{
    std::size_t const shards = filter.num_shards();
    std::size_t const n = keys.units(), nt = threads;
    start.assign(shards + 1, 0);
    grow(nt, counts);
    for (std::size_t t = 0; t < nt; ++t)
        counts[t].assign(shards, 0);
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (std::size_t t = 0; t < nt; ++t)
    {
        std::vector<std::uint64_t> & cnt = counts[t];
        for_each_key(n * t / nt, n * (t + 1) / nt,
                     [&](std::uint64_t const p) noexcept { ++cnt[filter.shard_of(keys.keys[p])]; });
    }
    // start[s] = first position of shard s; counts[t][s] becomes range t's first position in s.
    std::uint64_t total = 0;
    for (std::size_t sh = 0; sh < shards; ++sh)
    {
        start[sh] = total;
        for (std::size_t t = 0; t < nt; ++t)
        {
            std::uint64_t const c = counts[t][sh];
            counts[t][sh] = total;
            total += c;
        }
    }
    start[shards] = total;
    grow(total, part);
    if (pos != nullptr)
        grow(total, *pos);
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (std::size_t t = 0; t < nt; ++t)
    {
        std::vector<std::uint64_t> & cnt = counts[t];
        for_each_key(n * t / nt, n * (t + 1) / nt,
                     [&](std::uint64_t const p) noexcept
                     {
                         std::uint64_t const key = keys.keys[p];
                         std::uint64_t const at = cnt[filter.shard_of(key)]++;
                         part[at] = filter.local_key(key);
                         if (pos != nullptr)
                             (*pos)[at] = p;
                     });
    }
}

// The first exception thrown inside an OpenMP region, to be rethrown after it: no exception may
// leave a region (the OpenMP runtime would end the process). Thread safety: run() from any thread.
class region_error
{
public:
    // fn(), keeping its exception if it throws one (the first one of the region).
    template <typename Fn> void run(Fn && fn) noexcept
    {
        if (failed_.load(std::memory_order_relaxed))
            return; // the region has failed: its remaining work is not done
        try
        {
            fn();
        }
        catch (...)
        {
            std::lock_guard lock{mutex_};
            if (!error_)
                error_ = std::current_exception();
            failed_.store(true);
        }
    }
    // After the region: throws its first exception, if any.
    void rethrow_if_set()
    {
        if (failed_.load())
            std::rethrow_exception(error_);
    }

private:
    std::mutex mutex_;
    std::exception_ptr error_;
    std::atomic<bool> failed_{false};
};

} // namespace ksieve::detail
