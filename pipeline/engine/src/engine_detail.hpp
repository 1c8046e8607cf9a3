#pragma once
// Internal helpers shared by the engine's source files (not installed, not part of the API).
#include <ksieve/engine/engine.hpp>

#include <omp.h>

#include <string>
#include <vector>

namespace ksieve::detail
{

// The error message for a filter that takes no more k-mers, with advice that fits its type.
[[nodiscard]] std::string full_message(any_filter const & filter, std::string const & filter_name);

// Counting sort of keys[0, n) by shard into part (stable), with index[p] the key's position; start[s] is
// the first position of shard s afterwards.
void partition_by_shard(any_filter const & f, std::uint64_t const * keys, std::size_t n,
                        std::vector<std::uint64_t> & part, std::vector<std::uint32_t> & index,
                        std::vector<std::size_t> & start);

// best[j] = max over the filters of count(keys[j]), for n keys (one thread); the quotient-filter parts of one
// split that do not overlap count as one filter, their counts added (their merge's counts).
void query_keys(std::span<any_filter const * const> filters, std::uint64_t const * keys, std::size_t n,
                std::uint64_t * best, batch_engine_query_scratch & s);

// The part of n items that the calling thread of an OpenMP parallel region takes: thread t of nt takes the
// contiguous range [n t / nt, n (t + 1) / nt), the same split on every call.
struct thread_share
{
    std::size_t thread;  // omp_get_thread_num()
    std::size_t threads; // omp_get_num_threads()
    std::size_t begin, end;
};
[[nodiscard]] inline thread_share share_of(std::size_t const n) noexcept
{
    std::size_t const t = static_cast<std::size_t>(omp_get_thread_num());
    std::size_t const nt = static_cast<std::size_t>(omp_get_num_threads());
    return thread_share{t, nt, n * t / nt, n * (t + 1) / nt};
}

// query_keys() over n keys by `threads` threads, each over its contiguous share (share_of) with its own
// scratch. \pre scratch.size() >= threads.
void query_keys_parallel(std::span<any_filter const * const> filters, std::uint64_t const * keys,
                         std::size_t n, std::uint64_t * best, std::span<batch_engine_query_scratch> scratch,
                         unsigned threads);

// Stable counting sort by shard, in parallel, of the keys that for_each_key(u0, u1, fn) visits for units
// [u0, u1) (fn(p), p the key's index in keys.keys, in unit order): thread t counts and places the keys of the
// t-th contiguous range of units; within a shard its keys follow those of threads < t, so the order is the
// serial one for any thread count. Afterwards part[start[s], start[s + 1]) holds shard s's local keys and
// pos (if not null) their indices in keys.keys. counts: per-thread scratch (at least `threads` entries).
template <typename ForEachKey>
void partition_units_by_shard(any_filter const & filter, batch_keys const & keys, unsigned const threads,
                              ForEachKey const & for_each_key,
                              std::vector<std::vector<std::uint64_t>> & counts,
                              std::vector<std::uint64_t> & start, std::vector<std::uint64_t> & part,
                              std::vector<std::uint64_t> * const pos)
{
    std::size_t const shards = filter.num_shards();
    start.assign(shards + 1, 0);
    if (counts.size() < threads)
        counts.resize(threads);
#pragma omp parallel num_threads(threads)
    {
        thread_share const units = share_of(keys.units());
        std::size_t const nt = units.threads;
        std::vector<std::uint64_t> & cnt = counts[units.thread];
        cnt.assign(shards, 0);
        for_each_key(units.begin, units.end,
                     [&](std::uint64_t const p) noexcept { ++cnt[filter.shard_of(keys.keys[p])]; });
#pragma omp barrier
#pragma omp single
        {
            // start[s] = first position of shard s; counts[t][s] becomes thread t's first position in s.
            std::uint64_t total = 0;
            for (std::size_t sh = 0; sh < shards; ++sh)
            {
                start[sh] = total;
                for (std::size_t tt = 0; tt < nt; ++tt)
                {
                    std::uint64_t const c = counts[tt][sh];
                    counts[tt][sh] = total;
                    total += c;
                }
            }
            start[shards] = total;
            if (part.size() < total)
                part.resize(total);
            if (pos != nullptr && pos->size() < total)
                pos->resize(total);
        }
        for_each_key(units.begin, units.end,
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

} // namespace ksieve::detail
