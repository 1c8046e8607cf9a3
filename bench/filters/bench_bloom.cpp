// Bloom filter benchmarks (part of ksieve_bench_filters): blocked, classic and counting Bloom
// filters and, when seqan3 is available, seqan3::interleaved_bloom_filter (IBF) as the peer, in the
// same run.
//
// Sizes N = 2^20 and 2^26. Like FastFilter's benchmarks, every filter gets the memory of a classic
// Bloom filter sized by the classic formula for N keys at eps = 1% (9.585 N bits) and is loaded
// with 0.9 N keys: 10.65 bits/key (the "0.9 x 2^26 keys at ~10.7 bits/key" target setting). The
// counting filter has the same number of counters (4 bits each: 4x the bits). The IBF has 64 bins
// (it always allocates multiples of 64) of equal total size: bin size = 9.585 N / 64 bits, key i
// goes to bin i mod 64 (a query for key j asks bin j mod 64), with h = 2..5 hash functions (the FPR
// changes with h at equal bits/key; seqan3 allows at most 5). Also `blocked_design`: the filter
// blocked_bloom_filter::create picks for 0.9 N keys at eps = 1% (corrected sizing, 9.90 bits/key).
//
// Reported per benchmark: ns/op (per insert or lookup; single-key loop, and batches of 4096 with
// prefetching for ksieve's filters), bits/key (filter bits / keys inserted), fpr (measured over
// 2^24 keys never inserted), k (hash functions), predicted_fpr (formula). Filters for lookups are
// built once per (variant, size) and kept for the whole run (about 1.5 GB at 2^26).
#include <ksieve/filters/bloom/bloom.hpp>
#include <ksieve/filters/bloom/counting_bloom.hpp>

#include "bench_common.hpp"

#include <benchmark/benchmark.h>

#if defined(KSIEVE_HAVE_SEQAN3)
#include <seqan3/search/dream_index/interleaved_bloom_filter.hpp>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace
{

using namespace ksieve;

constexpr std::size_t batch = 4096;
constexpr std::size_t max_lookups = std::size_t{1} << 22; // keys queried per iteration
constexpr std::size_t absent_count = std::size_t{1} << 24;

/*! Seed-formula bits of a classic filter for 2^log2n keys at 1%: the memory budget of every
 * variant. */
std::uint64_t budget_bits(int const log2n)
{
    double const n = std::ldexp(1.0, log2n);
    return static_cast<std::uint64_t>(
        std::ceil(-n * std::log(0.01) / (std::log(2.0) * std::log(2.0))));
}

std::uint64_t loaded_keys(int const log2n)
{
    return (std::uint64_t{9} << log2n) / 10;
}

std::vector<std::uint64_t> const & present_keys(int const log2n)
{
    static std::map<int, std::vector<std::uint64_t>> cache;
    auto & v = cache[log2n];
    if (v.empty())
        v = bench::random_keys(loaded_keys(log2n), bench::present_seed);
    return v;
}

std::vector<std::uint64_t> const & absent_keys()
{
    static std::vector<std::uint64_t> const v =
        bench::random_keys(absent_count, bench::absent_seed);
    return v;
}

// ---------------------------------------------------------------------------------------------------------
// Variants of ksieve's filters: how to make an empty one for a size.

struct blocked_budget
{
    using filter = blocked_bloom_filter;
    static filter make(int const log2n)
    {
        std::uint64_t const blocks = (budget_bits(log2n) + 511) / 512;
        unsigned best = 1;
        for (unsigned k = 2; k <= 16; ++k)
            if (filter::predicted_fpr(loaded_keys(log2n), blocks, k) <
                filter::predicted_fpr(loaded_keys(log2n), blocks, best))
                best = k;
        return filter{blocks, best};
    }
    static double predicted(filter const & f, std::uint64_t n)
    {
        return filter::predicted_fpr(n, f.blocks(), f.hash_count());
    }
};

struct blocked_design
{
    using filter = blocked_bloom_filter;
    static filter make(int const log2n)
    {
        filter_config cfg;
        cfg.type = filter_type::bloom;
        cfg.fpr = 0.01;
        return filter::create(cfg, 62, loaded_keys(log2n));
    }
    static double predicted(filter const & f, std::uint64_t n)
    {
        return filter::predicted_fpr(n, f.blocks(), f.hash_count());
    }
};

struct classic_budget
{
    using filter = classic_bloom_filter;
    static filter make(int const log2n)
    {
        std::uint64_t const words = (budget_bits(log2n) + 63) / 64;
        double const kopt = static_cast<double>(words * 64) /
                            static_cast<double>(loaded_keys(log2n)) * std::log(2.0);
        return filter{words, static_cast<unsigned>(std::lround(kopt))};
    }
    static double predicted(filter const & f, std::uint64_t n)
    {
        return filter::predicted_fpr(n, f.bits(), f.hash_count());
    }
};

struct counting_budget
{
    using filter = counting_bloom_filter;
    static filter make(int const log2n)
    {
        std::uint64_t const words = (budget_bits(log2n) + 15) / 16;
        double const kopt = static_cast<double>(words * 16) /
                            static_cast<double>(loaded_keys(log2n)) * std::log(2.0);
        return filter{words, static_cast<unsigned>(std::lround(kopt))};
    }
    static double predicted(filter const & f, std::uint64_t n)
    {
        return classic_bloom_filter::predicted_fpr(n, f.counters(), f.hash_count());
    }
};

template <typename F> double measure_fpr(F const & f)
{
    std::vector<std::uint64_t> out(batch);
    std::uint64_t hits = 0;
    auto const & absent = absent_keys();
    for (std::size_t i = 0; i < absent.size(); i += batch)
    {
        std::size_t const n = std::min(batch, absent.size() - i);
        f.count_batch(std::span<std::uint64_t const>{absent}.subspan(i, n), out.data());
        for (std::size_t j = 0; j < n; ++j)
            hits += out[j] != 0;
    }
    return static_cast<double>(hits) / static_cast<double>(absent.size());
}

template <typename V> struct built
{
    typename V::filter filter;
    double fpr;
};

template <typename V> built<V> const & built_filter(int const log2n)
{
    static std::map<int, std::unique_ptr<built<V>>> cache;
    auto & slot = cache[log2n];
    if (!slot)
    {
        auto f = V::make(log2n);
        f.insert_batch(present_keys(log2n));
        double const fpr = measure_fpr(f);
        slot = std::make_unique<built<V>>(built<V>{std::move(f), fpr});
    }
    return *slot;
}

template <typename V>
void report(benchmark::State & state, typename V::filter const & f, double const fpr,
            std::uint64_t const ops, int const log2n)
{
    std::uint64_t const keys = loaded_keys(log2n);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * ops));
    state.counters["ns/op"] = benchmark::Counter(static_cast<double>(ops) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
    state.counters["bits/key"] =
        static_cast<double>(f.words().size_bytes()) * 8.0 / static_cast<double>(keys);
    state.counters["fpr"] = fpr;
    state.counters["predicted_fpr"] = V::predicted(f, keys);
    state.counters["k"] = f.hash_count();
}

// range(0) = log2 N; range(1) = mode: 0 single-key loop, 1 batch (prefetch), 2 batch with atomic OR
// (insert_batch_concurrent, one thread: the cost of the thread-safe path).
template <typename V> void BM_bloom_insert(benchmark::State & state)
{
    int const log2n = static_cast<int>(state.range(0));
    int const mode = static_cast<int>(state.range(1));
    auto const keys = std::span<std::uint64_t const>{present_keys(log2n)};
    std::unique_ptr<typename V::filter> last;
    for (auto _ : state)
    {
        state.PauseTiming();
        last.reset();
        auto f = std::make_unique<typename V::filter>(V::make(log2n));
        state.ResumeTiming();
        if (mode == 0)
        {
            for (auto const k : keys)
                f->insert(k);
        }
        else
        {
            for (std::size_t i = 0; i < keys.size(); i += batch)
            {
                auto const part = keys.subspan(i, std::min(batch, keys.size() - i));
                if constexpr (requires { f->insert_batch_concurrent(part); })
                {
                    if (mode == 2)
                    {
                        f->insert_batch_concurrent(part);
                        continue;
                    }
                }
                f->insert_batch(part);
            }
        }
        benchmark::ClobberMemory();
        last = std::move(f);
    }
    report<V>(state, *last, built_filter<V>(log2n).fpr, keys.size(), log2n);
}

// range(2) = 1: lookups of inserted keys (100% hits); 0: keys never inserted (0% hits, FPR aside).
template <typename V> void BM_bloom_lookup(benchmark::State & state)
{
    int const log2n = static_cast<int>(state.range(0));
    bool const use_batch = state.range(1) != 0;
    bool const hits = state.range(2) != 0;
    auto const & b = built_filter<V>(log2n);
    auto const & source = hits ? present_keys(log2n) : absent_keys();
    auto const queries =
        std::span<std::uint64_t const>{source}.first(std::min(max_lookups, source.size()));
    std::vector<std::uint64_t> out(batch);
    std::uint64_t found = 0;
    for (auto _ : state)
    {
        if (use_batch)
        {
            for (std::size_t i = 0; i < queries.size(); i += batch)
            {
                std::size_t const n = std::min(batch, queries.size() - i);
                b.filter.count_batch(queries.subspan(i, n), out.data());
                for (std::size_t j = 0; j < n; ++j)
                    found += out[j] != 0;
            }
        }
        else
        {
            for (auto const k : queries)
                found += b.filter.count(k) != 0;
        }
        benchmark::DoNotOptimize(found);
    }
    if (hits && found != state.iterations() * queries.size())
        state.SkipWithError("false negative");
    report<V>(state, b.filter, b.fpr, queries.size(), log2n);
    state.counters["hit_rate"] =
        static_cast<double>(found) / static_cast<double>(state.iterations() * queries.size());
}

void insert_args(benchmark::internal::Benchmark * b, int const log2n, bool const with_atomic)
{
    b->ArgNames({"log2n", "mode"});
    for (int const mode : {0, 1, 2})
        if (mode != 2 || with_atomic)
            b->Args({log2n, mode});
    b->Unit(benchmark::kMillisecond);
    if (log2n >= 26)
        b->Iterations(1);
}

void lookup_args(benchmark::internal::Benchmark * b, int const log2n)
{
    b->ArgNames({"log2n", "batch", "hits"});
    for (int const use_batch : {0, 1})
        for (int const hits : {1, 0})
            b->Args({log2n, use_batch, hits});
    b->Unit(benchmark::kMillisecond);
    if (log2n >= 26)
        b->Iterations(3);
}

#define KSIEVE_BLOOM_BENCH(variant, atomic)                                                        \
    BENCHMARK_TEMPLATE(BM_bloom_insert, variant)                                                   \
        ->Apply([](auto * b) { insert_args(b, 20, atomic); });                                     \
    BENCHMARK_TEMPLATE(BM_bloom_insert, variant)                                                   \
        ->Apply([](auto * b) { insert_args(b, 26, atomic); });                                     \
    BENCHMARK_TEMPLATE(BM_bloom_lookup, variant)->Apply([](auto * b) { lookup_args(b, 20); });     \
    BENCHMARK_TEMPLATE(BM_bloom_lookup, variant)->Apply([](auto * b) { lookup_args(b, 26); })

KSIEVE_BLOOM_BENCH(blocked_budget, true);
KSIEVE_BLOOM_BENCH(blocked_design, false);
KSIEVE_BLOOM_BENCH(classic_budget, true);
KSIEVE_BLOOM_BENCH(counting_budget, false);

#if defined(KSIEVE_HAVE_SEQAN3)
// ---------------------------------------------------------------------------------------------------------
// seqan3 interleaved Bloom filter: 64 bins of budget/64 bits, key i in bin i mod 64.

using ibf_t = seqan3::interleaved_bloom_filter<>;
constexpr std::size_t ibf_bins = 64;

ibf_t make_ibf(int const log2n, std::size_t const h)
{
    return ibf_t{seqan3::bin_count{ibf_bins},
                 seqan3::bin_size{(budget_bits(log2n) + ibf_bins - 1) / ibf_bins},
                 seqan3::hash_function_count{h}};
}

void ibf_insert_all(ibf_t & ibf, std::span<std::uint64_t const> const keys)
{
    for (std::size_t i = 0; i < keys.size(); ++i)
        ibf.emplace(keys[i], seqan3::bin_index{i % ibf_bins});
}

struct built_ibf
{
    ibf_t ibf;
    double fpr;
};

built_ibf const & built_ibf_filter(int const log2n, std::size_t const h)
{
    static std::map<std::pair<int, std::size_t>, std::unique_ptr<built_ibf>> cache;
    auto & slot = cache[{log2n, h}];
    if (!slot)
    {
        auto ibf = make_ibf(log2n, h);
        ibf_insert_all(ibf, present_keys(log2n));
        auto agent = ibf.membership_agent();
        std::uint64_t hits = 0;
        auto const & absent = absent_keys();
        for (std::size_t j = 0; j < absent.size(); ++j)
            hits += agent.bulk_contains(absent[j])[j % ibf_bins];
        double const fpr = static_cast<double>(hits) / static_cast<double>(absent.size());
        slot = std::make_unique<built_ibf>(built_ibf{std::move(ibf), fpr});
    }
    return *slot;
}

void report_ibf(benchmark::State & state, ibf_t const & ibf, double const fpr,
                std::uint64_t const ops, int const log2n)
{
    std::uint64_t const keys = loaded_keys(log2n);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * ops));
    state.counters["ns/op"] = benchmark::Counter(static_cast<double>(ops) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
    state.counters["bits/key"] =
        static_cast<double>(ibf.bin_size() * ibf.bin_count()) / static_cast<double>(keys);
    state.counters["fpr"] = fpr;
    double const bin_keys = static_cast<double>(keys) / ibf_bins;
    double const k = static_cast<double>(ibf.hash_function_count());
    state.counters["predicted_fpr"] =
        std::pow(-std::expm1(-k * bin_keys / static_cast<double>(ibf.bin_size())), k);
    state.counters["k"] = k;
}

// range(0) = log2 N, range(1) = hash functions.
void BM_seqan3_ibf_insert(benchmark::State & state)
{
    int const log2n = static_cast<int>(state.range(0));
    std::size_t const h = static_cast<std::size_t>(state.range(1));
    auto const keys = std::span<std::uint64_t const>{present_keys(log2n)};
    std::unique_ptr<ibf_t> last;
    for (auto _ : state)
    {
        state.PauseTiming();
        last.reset();
        auto ibf = std::make_unique<ibf_t>(make_ibf(log2n, h));
        state.ResumeTiming();
        ibf_insert_all(*ibf, keys);
        benchmark::ClobberMemory();
        last = std::move(ibf);
    }
    report_ibf(state, *last, built_ibf_filter(log2n, h).fpr, keys.size(), log2n);
}

// range(2) = 1: inserted keys, asked in their own bin (100% hits); 0: keys never inserted.
void BM_seqan3_ibf_lookup(benchmark::State & state)
{
    int const log2n = static_cast<int>(state.range(0));
    std::size_t const h = static_cast<std::size_t>(state.range(1));
    bool const hits = state.range(2) != 0;
    auto const & b = built_ibf_filter(log2n, h);
    auto const & source = hits ? present_keys(log2n) : absent_keys();
    auto const queries =
        std::span<std::uint64_t const>{source}.first(std::min(max_lookups, source.size()));
    auto agent = b.ibf.membership_agent();
    std::uint64_t found = 0;
    for (auto _ : state)
    {
        for (std::size_t j = 0; j < queries.size(); ++j)
            found += agent.bulk_contains(queries[j])[j % ibf_bins];
        benchmark::DoNotOptimize(found);
    }
    if (hits && found != state.iterations() * queries.size())
        state.SkipWithError("false negative");
    report_ibf(state, b.ibf, b.fpr, queries.size(), log2n);
    state.counters["hit_rate"] =
        static_cast<double>(found) / static_cast<double>(state.iterations() * queries.size());
}

void ibf_insert_args(benchmark::internal::Benchmark * b, int const log2n)
{
    b->ArgNames({"log2n", "h"});
    for (int const h : {2, 3, 4, 5})
        b->Args({log2n, h});
    b->Unit(benchmark::kMillisecond);
    if (log2n >= 26)
        b->Iterations(1);
}

void ibf_lookup_args(benchmark::internal::Benchmark * b, int const log2n)
{
    b->ArgNames({"log2n", "h", "hits"});
    for (int const h : {2, 3, 4, 5})
        for (int const hits : {1, 0})
            b->Args({log2n, h, hits});
    b->Unit(benchmark::kMillisecond);
    if (log2n >= 26)
        b->Iterations(3);
}

BENCHMARK(BM_seqan3_ibf_insert)->Apply([](auto * b) { ibf_insert_args(b, 20); });
BENCHMARK(BM_seqan3_ibf_insert)->Apply([](auto * b) { ibf_insert_args(b, 26); });
BENCHMARK(BM_seqan3_ibf_lookup)->Apply([](auto * b) { ibf_lookup_args(b, 20); });
BENCHMARK(BM_seqan3_ibf_lookup)->Apply([](auto * b) { ibf_lookup_args(b, 26); });
#endif

} // namespace
