// Cuckoo filter benchmarks (part of ksieve_bench_filters).
//
// Two sizes, 2^20 and 2^26 keys, each at two loads:
//   design: create(expected = N) and N inserts -- the table create() picks (power of two: here 50%
//   load); 95:     the 95% load the filter is sized for at most: 0.95 * N keys into a table of N
//   slots.
// Target fpr 0.001 (the ksieve default): 13-bit fingerprints.
// Reported: ns/op (per insert or lookup; single-key and batch of 4096 with prefetch), bits/key
// (table bytes * 8 / keys inserted), fpr (measured over 2^24 keys that were not inserted), load.
// Filters for lookups are built once per (size, load) and kept for the whole run (bounded: < 1.5 GB
// at 2^26).
#include <ksieve/filters/cuckoo/cuckoo.hpp>

#include "bench_common.hpp"

#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace
{

using ksieve::cuckoo_filter;

constexpr double bench_fpr = 0.001;
constexpr std::size_t batch = 4096;
constexpr std::size_t max_lookups = std::size_t{1}
                                    << 22; // keys queried per iteration (bounded at 2^26)
constexpr std::size_t absent_count = std::size_t{1} << 24;

//! Thread CPU time in ns (what Google Benchmark's CPU time measures), for the plain "ns/op"
//! counter.
double thread_cpu_ns() noexcept
{
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

struct setup
{
    std::uint64_t keys{0};     // keys inserted
    std::uint64_t expected{0}; // expected given to create()
};

setup setup_for(int const log2n, bool const at_95)
{
    std::uint64_t const n = std::uint64_t{1} << log2n;
    if (at_95)
    {
        std::uint64_t const keys = n * 19 / 20; // 95% of n slots (2^(log2n - 2) buckets)
        return {keys, keys};
    }
    return {n, n};
}

std::vector<std::uint64_t> const & present_keys(int const log2n)
{
    static std::map<int, std::vector<std::uint64_t>> cache;
    auto & v = cache[log2n];
    if (v.empty())
        v = ksieve::bench::random_keys(std::size_t{1} << log2n, ksieve::bench::present_seed);
    return v;
}

std::vector<std::uint64_t> const & absent_keys()
{
    static std::vector<std::uint64_t> const v =
        ksieve::bench::random_keys(absent_count, ksieve::bench::absent_seed);
    return v;
}

ksieve::filter_config config()
{
    ksieve::filter_config cfg;
    cfg.type = ksieve::filter_type::cuckoo;
    cfg.fpr = bench_fpr;
    return cfg;
}

struct built
{
    cuckoo_filter filter;
    std::uint64_t keys;
    double fpr;
};

built const & built_filter(int const log2n, bool const at_95)
{
    static std::map<std::pair<int, bool>, std::unique_ptr<built>> cache;
    auto & slot = cache[{log2n, at_95}];
    if (!slot)
    {
        setup const s = setup_for(log2n, at_95);
        auto f = cuckoo_filter::create(config(), 62, s.expected);
        auto const & keys = present_keys(log2n);
        (void)f.insert_batch(std::span<std::uint64_t const>{keys}.first(s.keys));
        std::uint64_t hits = 0;
        for (auto const k : absent_keys())
            hits += f.count(k);
        double const fpr = static_cast<double>(hits) / static_cast<double>(absent_count);
        slot = std::make_unique<built>(built{std::move(f), s.keys, fpr});
    }
    return *slot;
}

void report(benchmark::State & state, cuckoo_filter const & f, std::uint64_t const keys,
            double const fpr, std::uint64_t const ops_per_iteration, double const cpu_ns)
{
    double const ops =
        static_cast<double>(state.iterations()) * static_cast<double>(ops_per_iteration);
    state.SetItemsProcessed(static_cast<std::int64_t>(ops));
    state.counters["ns/op"] = cpu_ns / ops;
    state.counters["bits/key"] =
        static_cast<double>(f.words().size_bytes()) * 8.0 / static_cast<double>(keys);
    state.counters["fpr"] = fpr;
    state.counters["load"] = f.stats().load;
    state.counters["fp_bits"] = f.fingerprint_bits();
}

// state.range(0) = log2 N, state.range(1) = 1 for 95% load, 0 for the design load; range(2) = 1 for
// batch.
void BM_cuckoo_insert(benchmark::State & state)
{
    int const log2n = static_cast<int>(state.range(0));
    bool const at_95 = state.range(1) != 0;
    bool const use_batch = state.range(2) != 0;
    setup const s = setup_for(log2n, at_95);
    auto const keys = std::span<std::uint64_t const>{present_keys(log2n)}.first(s.keys);
    std::unique_ptr<cuckoo_filter> last;
    bool full = false;
    double cpu_ns = 0;
    for (auto _ : state)
    {
        state.PauseTiming();
        last.reset();
        auto f = std::make_unique<cuckoo_filter>(cuckoo_filter::create(config(), 62, s.expected));
        state.ResumeTiming();
        double const t0 = thread_cpu_ns();
        if (use_batch)
        {
            for (std::size_t i = 0; i < keys.size(); i += batch)
                full |= f->insert_batch(keys.subspan(i, std::min(batch, keys.size() - i))) ==
                        ksieve::insert_status::full;
        }
        else
        {
            for (auto const k : keys)
                full |= f->insert(k) == ksieve::insert_status::full;
        }
        benchmark::ClobberMemory();
        cpu_ns += thread_cpu_ns() - t0;
        last = std::move(f);
    }
    if (full)
        state.SkipWithError("cuckoo filter reported full");
    report(state, *last, s.keys, built_filter(log2n, at_95).fpr, s.keys, cpu_ns);
}

// range(3) = 1 for lookups of inserted keys (100% hits), 0 for keys never inserted (0% hits, FPR
// aside).
void BM_cuckoo_lookup(benchmark::State & state)
{
    int const log2n = static_cast<int>(state.range(0));
    bool const at_95 = state.range(1) != 0;
    bool const use_batch = state.range(2) != 0;
    bool const hits = state.range(3) != 0;
    built const & b = built_filter(log2n, at_95);
    auto const & source = hits ? present_keys(log2n) : absent_keys();
    auto const queries = std::span<std::uint64_t const>{source}.first(
        std::min<std::size_t>({max_lookups, b.keys, source.size()}));
    std::vector<std::uint64_t> out(batch);
    std::uint64_t found = 0;
    double const t0 = thread_cpu_ns();
    for (auto _ : state)
    {
        if (use_batch)
        {
            for (std::size_t i = 0; i < queries.size(); i += batch)
            {
                std::size_t const n = std::min(batch, queries.size() - i);
                b.filter.count_batch(queries.subspan(i, n), out.data());
                for (std::size_t j = 0; j < n; ++j)
                    found += out[j];
            }
        }
        else
        {
            for (auto const k : queries)
                found += b.filter.count(k);
        }
        benchmark::DoNotOptimize(found);
    }
    double const cpu_ns = thread_cpu_ns() - t0;
    if (hits && found != state.iterations() * queries.size())
        state.SkipWithError("false negative");
    report(state, b.filter, b.keys, b.fpr, queries.size(), cpu_ns);
    state.counters["hit_rate"] =
        static_cast<double>(found) / static_cast<double>(state.iterations() * queries.size());
}

void insert_args(benchmark::internal::Benchmark * b, int const log2n)
{
    b->ArgNames({"log2n", "load95", "batch"});
    for (int const at_95 : {0, 1})
        for (int const use_batch : {0, 1})
            b->Args({log2n, at_95, use_batch});
    b->Unit(benchmark::kMillisecond);
}

void lookup_args(benchmark::internal::Benchmark * b, int const log2n)
{
    b->ArgNames({"log2n", "load95", "batch", "hits"});
    for (int const at_95 : {0, 1})
        for (int const use_batch : {0, 1})
            for (int const hits : {1, 0})
                b->Args({log2n, at_95, use_batch, hits});
    b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_cuckoo_insert)->Apply([](benchmark::internal::Benchmark * b) { insert_args(b, 20); });
BENCHMARK(BM_cuckoo_insert)
    ->Apply([](benchmark::internal::Benchmark * b) { insert_args(b, 26); })
    ->Iterations(1);
BENCHMARK(BM_cuckoo_lookup)->Apply([](benchmark::internal::Benchmark * b) { lookup_args(b, 20); });
BENCHMARK(BM_cuckoo_lookup)
    ->Apply([](benchmark::internal::Benchmark * b) { lookup_args(b, 26); })
    ->Iterations(3);

} // namespace
