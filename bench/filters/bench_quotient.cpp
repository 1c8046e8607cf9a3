// Counting quotient filter benchmarks (part of ksieve_bench_filters).
//
// Geometry: 2^q home slots (q = 22 and 26), remainders of r = 8 bits (fingerprints of q + 8 bits),
// keys are 62-bit splitmix64 values (bench_common.hpp), loads 50/75/90/95%: load * 2^q keys
// inserted into a table created with that size (no growth).
//
// - BM_qf_insert: ns per insert while filling an empty table up to the load (the average over the
// fill, as
//   in the CQF and VQF papers); mode 0 = insert() per key, 1 = insert_batch() of 4096 keys
//   (three-stage prefetch pipeline), 2 = insert_concurrent() from one thread (cost of the region
//   locks), 3 = insert_batch() with a batch_scratch on batches of 2^20 keys (table order where
//   ordered_batch() says so: at 2^26 slots; the sort and the scatter of the results are timed).
// - BM_qf_lookup: ns per count() / count_batch() of 2^22 keys that are present (hits = 1) or were
// never
//   inserted (hits = 0; the hit rate is then the measured FPR); batch 0 = count(), 1 =
//   count_batch() of 4096 keys, 2 = count_batch() with a batch_scratch on batches of 2^20 keys.
// - BM_qf_merge: merge() of two tables that hold half of the keys each (a third of them shared)
// into a new
//   table sized for the union: ns per input fingerprint (both inputs' fingerprints are streamed).
// - BM_qf_counts: space of the in-slot counters for k-mer-like count distributions.
// - BM_dependent_load: calibration, ns per dependent random load over 128 MB (a single-key
// operation's
//   floor at the moment of the run).
// Counters: ns/op, bits/key (table bits / distinct fingerprints), model_bits ((r + 2.125) / load,
// the layout's cost per key), fpr (absent keys that were found), load.
//
// Filters for lookups are built once per (q, load) and kept for the run: at 2^26 four tables of 85
// MB plus 510 MB of keys; merge inputs are built per benchmark (about 260 MB at 2^26).
#include <ksieve/filters/quotient/quotient_filter.hpp>

#include "bench_common.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <vector>

namespace
{

using ksieve::insert_status;
using ksieve::quotient_filter;

constexpr unsigned remainder = 8;
constexpr std::size_t batch = 4096;
constexpr std::size_t bulk_batch = std::size_t{1} << 20; // the table-ordered modes
constexpr std::size_t lookups = std::size_t{1} << 22;

std::uint64_t key_count(int const log2n, int const load_percent)
{
    return (static_cast<std::uint64_t>(load_percent) << log2n) / 100;
}

// One key vector per size, long enough for the largest load; smaller loads use a prefix.
std::vector<std::uint64_t> const & present_keys(int const log2n)
{
    static std::map<int, std::vector<std::uint64_t>> cache;
    auto & v = cache[log2n];
    if (v.empty())
        v = ksieve::bench::random_keys(key_count(log2n, 95), ksieve::bench::present_seed);
    return v;
}

std::vector<std::uint64_t> const & absent_keys()
{
    static std::vector<std::uint64_t> const v =
        ksieve::bench::random_keys(lookups, ksieve::bench::absent_seed);
    return v;
}

quotient_filter make(int const log2n)
{
    return quotient_filter::with_geometry(62, static_cast<unsigned>(log2n), remainder, 1.0, false);
}

void insert_all(quotient_filter & f, std::span<std::uint64_t const> const keys)
{
    for (std::size_t i = 0; i < keys.size(); i += batch)
        if (f.insert_batch(keys.subspan(i, std::min(batch, keys.size() - i))) != insert_status::ok)
            throw std::runtime_error{"quotient filter full during benchmark setup"};
}

quotient_filter const & built(int const log2n, int const load_percent)
{
    static std::map<std::pair<int, int>, std::unique_ptr<quotient_filter>> cache;
    auto & slot = cache[{log2n, load_percent}];
    if (!slot)
    {
        slot = std::make_unique<quotient_filter>(make(log2n));
        insert_all(*slot, std::span{present_keys(log2n)}.first(key_count(log2n, load_percent)));
    }
    return *slot;
}

void report(benchmark::State & state, quotient_filter const & f, std::uint64_t const ops)
{
    auto const s = f.stats();
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * ops));
    state.counters["ns/op"] = benchmark::Counter(static_cast<double>(ops) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
    state.counters["bits/key"] =
        static_cast<double>(s.bytes) * 8.0 / static_cast<double>(s.distinct);
    state.counters["model_bits"] = (f.remainder_bits() + 2.125) / s.load;
    state.counters["load"] = s.load;
}

// range: log2n, load %, mode (0 single, 1 batch, 2 concurrent API from one thread)
void BM_qf_insert(benchmark::State & state)
{
    int const log2n = static_cast<int>(state.range(0));
    int const load = static_cast<int>(state.range(1));
    int const mode = static_cast<int>(state.range(2));
    auto const keys = std::span{present_keys(log2n)}.first(key_count(log2n, load));
    std::unique_ptr<quotient_filter> last;
    quotient_filter::batch_scratch scratch;
    if (mode == 3)
        scratch.reserve(bulk_batch); // allocated once, as a caller keeps it
    for (auto _ : state)
    {
        state.PauseTiming();
        last.reset();
        auto f = std::make_unique<quotient_filter>(make(log2n));
        // Touch the table once (a key for every 64th home slot) so that page faults are not timed.
        for (std::uint64_t i = 0; i < f->slots(); i += 64)
            f->insert(i << (62 - log2n));
        for (std::uint64_t i = 0; i < f->slots(); i += 64)
            f->remove(i << (62 - log2n));
        state.ResumeTiming();
        bool ok = true;
        if (mode == 0)
        {
            for (auto const k : keys)
                ok &= f->insert(k) == insert_status::ok;
        }
        else if (mode == 1)
        {
            for (std::size_t i = 0; i < keys.size(); i += batch)
                ok &= f->insert_batch(keys.subspan(i, std::min(batch, keys.size() - i))) ==
                      insert_status::ok;
        }
        else if (mode == 2)
        {
            for (auto const k : keys)
                ok &= f->insert_concurrent(k) == insert_status::ok;
        }
        else
        {
            for (std::size_t i = 0; i < keys.size(); i += bulk_batch)
                ok &= f->insert_batch(keys.subspan(i, std::min(bulk_batch, keys.size() - i)),
                                      nullptr, scratch) == insert_status::ok;
        }
        if (!ok)
            state.SkipWithError("filter full");
        benchmark::ClobberMemory();
        last = std::move(f);
    }
    report(state, *last, keys.size());
    if (mode == 3)
        state.counters["ordered"] = last->ordered_batch(bulk_batch, scratch); // at the final size
}

// range: log2n, load %, batch (0/1), hits (1 present keys, 0 absent keys)
void BM_qf_lookup(benchmark::State & state)
{
    int const log2n = static_cast<int>(state.range(0));
    int const load = static_cast<int>(state.range(1));
    int const use_batch = static_cast<int>(state.range(2));
    bool const hits = state.range(3) != 0;
    auto const & f = built(log2n, load);
    auto const & source = hits ? present_keys(log2n) : absent_keys();
    auto const queries = std::span{source}.first(std::min<std::size_t>(
        {lookups, source.size(), hits ? key_count(log2n, load) : source.size()}));
    std::size_t const step = use_batch == 2 ? bulk_batch : batch;
    std::vector<std::uint64_t> out(step);
    quotient_filter::batch_scratch scratch;
    scratch.reserve(bulk_batch);
    std::uint64_t found = 0;
    for (auto _ : state)
    {
        if (use_batch != 0)
        {
            for (std::size_t i = 0; i < queries.size(); i += step)
            {
                std::size_t const n = std::min(step, queries.size() - i);
                if (use_batch == 2)
                    f.count_batch(queries.subspan(i, n), out.data(), scratch);
                else
                    f.count_batch(queries.subspan(i, n), out.data());
                for (std::size_t j = 0; j < n; ++j)
                    found += out[j] != 0;
            }
        }
        else
        {
            for (auto const k : queries)
                found += f.count(k) != 0;
        }
        benchmark::DoNotOptimize(found);
    }
    if (hits && found != state.iterations() * queries.size())
        state.SkipWithError("false negative");
    report(state, f, queries.size());
    double const rate =
        static_cast<double>(found) / static_cast<double>(state.iterations() * queries.size());
    state.counters[hits ? "hit_rate" : "fpr"] = rate;
    if (use_batch == 2)
        state.counters["ordered"] = f.ordered_batch(std::min(bulk_batch, queries.size()), scratch);
    state.counters["estimated_fpr"] = f.stats().estimated_fpr;
}

// range: log2n, load % of the union
void BM_qf_merge(benchmark::State & state)
{
    int const log2n = static_cast<int>(state.range(0));
    int const load = static_cast<int>(state.range(1));
    auto const all = std::span{present_keys(log2n)}.first(key_count(log2n, load));
    // A gets the first 2/3, B the last 2/3: a third of the keys is in both.
    std::size_t const third = all.size() / 3;
    auto a = make(log2n);
    auto b = make(log2n);
    insert_all(a, all.first(2 * third));
    insert_all(b, all.subspan(third));
    std::vector<quotient_filter const *> const inputs{&a, &b};
    std::uint64_t const fingerprints = a.distinct() + b.distinct();
    std::unique_ptr<quotient_filter> last;
    for (auto _ : state)
    {
        state.PauseTiming();
        last.reset();
        state.ResumeTiming();
        last = std::make_unique<quotient_filter>(quotient_filter::merge(inputs));
        benchmark::ClobberMemory();
    }
    report(state, *last, fingerprints);
    state.counters["union_distinct"] = static_cast<double>(last->distinct());
}

// Space of the counters: 2^20 distinct keys with counts drawn from a distribution (range(0)): 0 all
// ones, 1 Poisson(30) (a 30x sequencing coverage), 2 Zipf-like (count = floor(1 / u^1.2), heavy
// tail), 3 counts around 2^32. Reports slots per distinct key and bits per key against a fixed
// 32-bit counter per key.
void BM_qf_counts(benchmark::State & state)
{
    int const dist = static_cast<int>(state.range(0));
    std::size_t const n = std::size_t{1} << 20;
    std::mt19937_64 rng{42};
    std::poisson_distribution<std::uint64_t> poisson{30.0};
    std::uniform_real_distribution<double> uni{0.0, 1.0};
    std::vector<std::pair<std::uint64_t, std::uint64_t>> items(n);
    for (auto & [k, c] : items)
    {
        k = rng() & ((std::uint64_t{1} << 62) - 1);
        switch (dist)
        {
        case 0:
            c = 1;
            break;
        case 1:
            c = std::max<std::uint64_t>(1, poisson(rng));
            break;
        case 2:
            c = static_cast<std::uint64_t>(
                std::min(1e12, std::floor(1.0 / std::pow(uni(rng) + 1e-12, 1.2))));
            break;
        default:
            c = (std::uint64_t{1} << 32) + rng() % 1000;
            break;
        }
    }
    std::unique_ptr<quotient_filter> last;
    for (auto _ : state)
    {
        auto f = std::make_unique<quotient_filter>(
            quotient_filter::with_geometry(62, 24, remainder, 1.0, false));
        for (auto const & [k, c] : items)
            if (f->insert(k, c) != insert_status::ok)
                state.SkipWithError("filter full");
        last = std::move(f);
    }
    report(state, *last, n);
    double const slots_per_key =
        static_cast<double>(last->used_slots()) / static_cast<double>(last->distinct());
    state.counters["slots/key"] = slots_per_key;
    state.counters["counter_bits/key"] = slots_per_key * (remainder + 2.125) / 0.9;
    state.counters["fixed32_bits/key"] = (remainder + 2.125 + 32) / 0.9;
}

// Calibration, the floor of a single-key operation: ns per load in a chain of dependent random
// loads over a table of 2^log2n bytes (a random cyclic permutation of its 8-byte words, so every
// load waits for the previous one and misses the cache). At 2^27 bytes it is about what one DRAM
// miss costs at that moment, on this shared machine different from one hour to the next.
void BM_dependent_load(benchmark::State & state)
{
    std::size_t const n = (std::size_t{1} << state.range(0)) / 8;
    std::vector<std::uint64_t> next(n);
    {
        std::vector<std::uint64_t> order(n);
        for (std::size_t i = 0; i < n; ++i)
            order[i] = i;
        std::mt19937_64 rng{99};
        std::shuffle(order.begin(), order.end(), rng);
        for (std::size_t i = 0; i < n; ++i)
            next[order[i]] = order[(i + 1) % n];
    }
    std::uint64_t at = 0;
    for (auto _ : state)
        for (std::size_t i = 0; i < lookups; ++i)
            at = next[at];
    benchmark::DoNotOptimize(at);
    state.counters["ns/op"] = benchmark::Counter(static_cast<double>(lookups) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
}

void table_args(benchmark::internal::Benchmark * b, std::vector<int> const & modes)
{
    b->ArgNames({"log2n", "load", "mode"});
    for (int const log2n : {22, 26})
        for (int const load : {50, 75, 90, 95})
            for (int const mode : modes)
                b->Args({log2n, load, mode});
    b->Unit(benchmark::kMillisecond);
    b->Iterations(1);
}

void lookup_args(benchmark::internal::Benchmark * b)
{
    b->ArgNames({"log2n", "load", "batch", "hits"});
    for (int const log2n : {22, 26})
        for (int const load : {50, 75, 90, 95})
            for (int const use_batch : {0, 1, 2})
                for (int const hits : {1, 0})
                    b->Args({log2n, load, use_batch, hits});
    b->Unit(benchmark::kMillisecond);
    b->Iterations(3);
}

void merge_args(benchmark::internal::Benchmark * b)
{
    b->ArgNames({"log2n", "load"});
    for (int const log2n : {22, 26})
        for (int const load : {50, 75, 90, 95})
            b->Args({log2n, load});
    b->Unit(benchmark::kMillisecond);
    b->Iterations(1);
}

BENCHMARK(BM_qf_insert)->Apply([](auto * b) { table_args(b, {0, 1, 2, 3}); });
BENCHMARK(BM_qf_lookup)->Apply(lookup_args);
BENCHMARK(BM_qf_merge)->Apply(merge_args);
BENCHMARK(BM_dependent_load)
    ->ArgName("log2bytes")
    ->Arg(27)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_qf_counts)
    ->ArgName("dist")
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

} // namespace
