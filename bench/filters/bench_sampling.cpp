/*! \file
 * \brief Minimizer selection speed: for_each_record_minimizer over 150 bp reads (k = 31,
 * canonical), every k-mer's code and order plus the window minima, for the default window (11), the
 * common one (15) and windows without code of their own; and the scan alone (W = 1 selects every
 * k-mer). Counter: ns per k-mer position.
 */
#include <ksieve/filters/kmers/sampling.hpp>

#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace
{

// n reads of 150 random bases, one N in about every 64th read.
std::vector<std::string> random_reads(std::size_t const n)
{
    std::uint64_t state = ksieve::bench::present_seed;
    std::vector<std::string> reads(n, std::string(150, 'A'));
    for (auto & r : reads)
    {
        for (auto & c : r)
            c = "ACGT"[ksieve::bench::splitmix64(state) & 3];
        if ((ksieve::bench::splitmix64(state) & 63) == 0)
            r[ksieve::bench::splitmix64(state) % r.size()] = 'N';
    }
    return reads;
}

void BM_record_minimizers(benchmark::State & state)
{
    auto const w = static_cast<std::size_t>(state.range(0));
    static std::vector<std::string> const reads = random_reads(100000);
    ksieve::kmer_scanner const scanner{31, true};
    auto scratch = std::make_unique<ksieve::minimizer_scratch>();
    std::uint64_t selected = 0;
    for (auto _ : state)
        for (auto const & r : reads)
            ksieve::for_each_record_minimizer(scanner, r, w, 0x1234, *scratch,
                                              [&](std::uint64_t const code) noexcept
                                              { selected += code & 1; });
    benchmark::DoNotOptimize(selected);
    auto const positions = static_cast<double>(reads.size() * (150 - 31 + 1));
    state.counters["ns_per_kmer"] =
        benchmark::Counter(positions * static_cast<double>(state.iterations()),
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

} // namespace

BENCHMARK(BM_record_minimizers)
    ->Arg(1)
    ->Arg(11)
    ->Arg(15)
    ->Arg(12)
    ->Arg(31)
    ->Unit(benchmark::kMillisecond);
