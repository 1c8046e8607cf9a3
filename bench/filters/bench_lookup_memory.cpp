// BM_filter_lookup: classify's lookups (any_filter::count_keys of a sharded quotient filter, the
// one pipeline over all shards) in filters of about 2 MB (the compute floor: the table in L2),
// 16 MB, 400 MB and 4 GB, the way classify opens them: saved to a file and loaded back. Pages:
// 0 = the file mapped with transparent huge pages disabled for the process (PR_SET_THP_DISABLE:
// 4 KiB pages, a page walk per lookup in a large table); 1 = the file mapped as classify maps it
// (huge pages advised: the page cache's large folios are mapped whole where the kernel and the file
// system give them); 2 = read into anonymous memory with huge pages advised
// (KSIEVE_HUGEPAGE_FILTERS=1). Random keys, 0%, 50% or 100% of them present, in batches of 8192;
// one untimed pass first (the first touches of a mapped file's pages are not lookups).
//
// Counters: ns/lookup; MB (the file); lines/lookup and pages/lookup, the 64-byte lines and 4 KiB
// pages that the pipeline asks for per key, from the table's geometry (the block header and the
// 8 bytes of remainders at the home slot, and the next block's header for home slots near a block's
// end; a run that starts past its home slot adds a little); hit (the fraction found: at 0% present
// the measured false-positive rate).
//
// range: size MB, % present, pages. The filter files are written to KSIEVE_BENCH_TMP (default
// /tmp) and removed at exit; the 4 GB filter takes about a minute to fill and needs 4 GB of memory
// twice over while it is saved or read into anonymous memory.
#include <ksieve/filters/common/any_filter.hpp>
#include <ksieve/filters/common/filter.hpp>

#include "bench_common.hpp"

#include <benchmark/benchmark.h>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace
{

constexpr unsigned shard_bits = 6;      // build's default for a host of gigabases
constexpr double fill = 0.85;           // slots used of each shard's home slots
constexpr std::size_t call_keys = 8192; // keys per count_keys call
constexpr std::size_t lookups = std::size_t{1} << 22;
constexpr std::uint64_t present_stream = 0x1234;
constexpr std::uint64_t absent_stream = 0xABCDEF;

// The j-th key of shard s of a stream: the shard in the top bits, a hash in the rest.
std::uint64_t shard_key(std::uint64_t const stream, std::uint64_t const s, std::uint64_t const j,
                        unsigned const local_bits) noexcept
{
    std::uint64_t state = stream ^ (s << 48) ^ (j * 0x9E3779B97F4A7C15ULL);
    std::uint64_t const local = ksieve::bench::splitmix64(state) & ((1ULL << local_bits) - 1);
    return (s << local_bits) | local;
}

ksieve::filter_config config(std::uint64_t const expected)
{
    ksieve::filter_config cfg;
    cfg.type = ksieve::filter_type::quotient;
    cfg.fpr = 1e-5;
    cfg.shard_bits = shard_bits;
    cfg.expected = expected;
    return cfg;
}

std::filesystem::path file_of(int const mb)
{
    char const * const dir = std::getenv("KSIEVE_BENCH_TMP");
    return std::filesystem::path{dir != nullptr ? dir : "/tmp"} /
           ("ksieve_bench_lookup_" + std::to_string(mb) + ".ksf");
}

// A filter file of about `mb` MB: the home slots of every shard filled to `fill` with the present
// stream's keys; returns the keys per shard.
std::uint64_t write_filter(int const mb)
{
    std::uint64_t const target_bits = static_cast<std::uint64_t>(mb) << 23;
    std::uint64_t expected = target_bits / 24; // about 24 bits a key at 1e-5
    auto f = ksieve::make_filter(config(expected));
    while (f->stats().bytes * 8 >
           target_bits * 5 / 4) // tables come in steps: the one nearest below
        f = ksieve::make_filter(config(expected = expected * 3 / 4));
    std::uint64_t const per_shard =
        static_cast<std::uint64_t>(fill * static_cast<double>(f->stats().slots >> shard_bits));
    unsigned const local_bits = f->key_bits() - shard_bits;
    std::vector<std::uint64_t> locals(std::size_t{1} << 20);
    for (std::uint64_t s = 0; s < f->num_shards(); ++s)
        for (std::uint64_t j = 0; j < per_shard; j += locals.size())
        {
            std::size_t const n = std::min<std::uint64_t>(locals.size(), per_shard - j);
            for (std::size_t i = 0; i < n; ++i)
                locals[i] = f->local_key(shard_key(present_stream, s, j + i, local_bits));
            if (f->insert_batch(s, std::span{locals}.first(n)) != ksieve::insert_status::ok)
                throw std::runtime_error{"benchmark filter full"};
        }
    f->save(file_of(mb));
    return per_shard;
}

struct loaded
{
    std::unique_ptr<ksieve::any_filter> filter;
    std::uint64_t per_shard{0};
    double lines{0};
    double pages{0};
};

// The lines and pages one key's pipeline asks for, averaged over the home slots of a table of
// 64-byte aligned blocks of 17 + 8r bytes (header: offset, occupieds, runends; then 64 remainders).
void touched_model(unsigned const r, double & lines, double & pages)
{
    std::uint64_t const block = 17 + 8 * std::uint64_t{r};
    double l = 0;
    double p = 0;
    std::uint64_t const blocks = 4096; // a whole period of both alignments
    for (std::uint64_t b = 0; b < blocks; ++b)
        for (std::uint64_t h = 0; h < 64; ++h)
        {
            std::uint64_t const base = b * block;
            std::uint64_t const rem = base + 17 + h * r / 8;
            std::vector<std::pair<std::uint64_t, std::uint64_t>> spans{{base, base + 17},
                                                                       {rem, rem + 8}};
            if (h >= 48)
                spans.emplace_back(base + block, base + block + 17);
            std::map<std::uint64_t, int> ls;
            std::map<std::uint64_t, int> ps;
            for (auto const & [from, to] : spans)
                for (std::uint64_t x = from; x < to; ++x)
                {
                    ls[x / 64] = 1;
                    ps[x / 4096] = 1;
                }
            l += static_cast<double>(ls.size());
            p += static_cast<double>(ps.size());
        }
    lines = l / (blocks * 64);
    pages = p / (blocks * 64);
}

loaded const & filter_for(int const mb, int const pages)
{
    static std::map<int, std::uint64_t> written;
    static std::pair<int, int> current{-1, -1};
    static loaded held;
    if (current == std::pair{mb, pages})
        return held;
    held = loaded{};
    if (!written.contains(mb))
    {
        written[mb] = write_filter(mb);
        std::atexit(
            []
            {
                for (int const size : {2, 16, 400, 4096})
                    std::filesystem::remove(file_of(size));
            });
    }
    // (the process's flag: the lookups' first touches of the pages come after this)
#if defined(__linux__)
    ::prctl(PR_SET_THP_DISABLE, pages == 0 ? 1 : 0, 0, 0, 0); // (elsewhere pages 0 is pages 1)
#endif
    if (pages == 2)
        ::setenv("KSIEVE_HUGEPAGE_FILTERS", "1", 1);
    else
        ::unsetenv("KSIEVE_HUGEPAGE_FILTERS");
    held.filter = ksieve::load_filter(file_of(mb), ksieve::load_options{.verify_payload = false});
    ::unsetenv("KSIEVE_HUGEPAGE_FILTERS");
    held.per_shard = written[mb];
    // blocks of 64 slots in 17 + 8r bytes (the few overflow blocks round away)
    auto const st = held.filter->stats();
    double const per_block = 64.0 * static_cast<double>(st.bytes) / static_cast<double>(st.slots);
    touched_model(static_cast<unsigned>((per_block - 17) / 8), held.lines, held.pages);
    current = {mb, pages};
    return held;
}

void BM_filter_lookup(benchmark::State & state)
{
    int const mb = static_cast<int>(state.range(0));
    int const present = static_cast<int>(state.range(1));
    int const pages = static_cast<int>(state.range(2));
    loaded const & l = filter_for(mb, pages);
    auto const & f = *l.filter;
    unsigned const local_bits = f.key_bits() - shard_bits;
    std::mt19937_64 rng{42};
    std::vector<std::uint64_t> keys(lookups);
    for (auto & k : keys)
    {
        std::uint64_t const s = rng() % f.num_shards();
        bool const in = static_cast<int>(rng() % 100) < present;
        k = in ? shard_key(present_stream, s, rng() % l.per_shard, local_bits)
               : shard_key(absent_stream, s, rng(), local_bits);
    }
    std::vector<std::uint64_t> out(call_keys);
    // one pass untimed: the first touch of a mapped file's pages (minor faults) is not a lookup
    for (std::size_t i = 0; i < keys.size(); i += call_keys)
        f.count_keys(std::span{keys}.subspan(i, call_keys), out.data());
    std::uint64_t found = 0;
    for (auto _ : state)
    {
        found = 0;
        for (std::size_t i = 0; i < keys.size(); i += call_keys)
        {
            if (!f.count_keys(std::span{keys}.subspan(i, call_keys), out.data()))
                throw std::runtime_error{"count_keys is not supported by this filter"};
            for (auto const c : out)
                found += c != 0;
        }
        benchmark::DoNotOptimize(found);
    }
    state.counters["ns/lookup"] = benchmark::Counter(static_cast<double>(lookups) * 1e-9,
                                                     benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
    state.counters["MB"] = static_cast<double>(std::filesystem::file_size(file_of(mb))) / 1e6;
    state.counters["lines/lookup"] = l.lines;
    state.counters["pages/lookup"] = l.pages;
    state.counters["hit"] = static_cast<double>(found) / static_cast<double>(lookups);
}

void lookup_args(benchmark::internal::Benchmark * const b)
{
    b->ArgNames({"MB", "present", "pages"});
    for (int const mb : {2, 16, 400, 4096})
        for (int const pages : {0, 1, 2})
            for (int const present : {0, 50, 100})
                b->Args({mb, present, pages});
    b->Unit(benchmark::kMillisecond)->Iterations(3);
}

} // namespace

BENCHMARK(BM_filter_lookup)->Apply(lookup_args);
