/*! \file
 * \brief hit_set lookup speed (the engine's kernel family, part of ksieve_bench_engine): a set of
 * 2^log2n keys (hashed 62-bit k-mer keys, bench/filters/bench_common.hpp) at hit_set::max_load,
 * queried with 2^20 keys of which `present` percent are in the set, in batches of 4096 as dedup asks.
 * Counter: ns per key. The CPU level is the dispatcher's (KSIEVE_SIMD=generic: the generic copy).
 */
#include <ksieve/engine/hit_set.hpp>

#include <benchmark/benchmark.h>

#include "../filters/bench_common.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace
{

constexpr std::size_t lookups = std::size_t{1} << 20;
constexpr std::size_t batch = 4096;

void BM_hit_set_lookup(benchmark::State & state)
{
    auto const n = std::size_t{1} << state.range(0);
    auto const present_percent = static_cast<std::size_t>(state.range(1));
    auto const keys = ksieve::bench::random_keys(n, ksieve::bench::present_seed);
    ksieve::hit_set set;
    if (!set.reserve(n, std::size_t{1} << 34))
    {
        state.SkipWithError("no room for the set");
        return;
    }
    set.insert(keys.data(), keys.size());
    // present keys in order of the key vector (scattered buckets), absent ones from another stream
    auto queries = ksieve::bench::random_keys(lookups, ksieve::bench::absent_seed);
    for (std::size_t i = 0; i < lookups; ++i)
        if (i % 100 < present_percent)
            queries[i] = keys[(i * 7919) % n];
    std::vector<std::uint64_t> out(batch);
    std::uint64_t hits = 0;
    for (auto _ : state)
    {
        for (std::size_t i = 0; i < lookups; i += batch)
        {
            set.lookup(queries.data() + i, std::min(batch, lookups - i), out.data(), 1);
            hits += out[0] + out[batch - 1];
        }
    }
    benchmark::DoNotOptimize(hits);
    state.counters["ns_per_key"] =
        benchmark::Counter(static_cast<double>(lookups) * static_cast<double>(state.iterations()),
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

} // namespace

BENCHMARK(BM_hit_set_lookup)
    ->ArgNames({"log2n", "present"})
    ->Args({16, 50})
    ->Args({22, 50})
    ->Args({22, 100})
    ->Unit(benchmark::kMillisecond);
