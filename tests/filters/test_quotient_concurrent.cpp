// Concurrent insertion into one quotient filter (region locks) and into a sharded filter (one
// thread per shard, no locks): final contents equal the serial run. Built with
// -DKSIEVE_SANITIZER=thread in CI.
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <thread>
#include <vector>

using ksieve::filter_config;
using ksieve::insert_status;
using ksieve::quotient_filter;

namespace
{

#ifdef KSIEVE_SANITIZED
constexpr std::size_t keys_per_thread = 20000;
#else
constexpr std::size_t keys_per_thread = 250000;
#endif
constexpr unsigned n_threads = 4;

using multiset = std::map<std::uint64_t, std::uint64_t>;

multiset contents(quotient_filter const & f)
{
    multiset m;
    f.for_each([&](std::uint64_t const v, std::uint64_t const c) { m[v] += c; });
    return m;
}

struct item
{
    std::uint64_t key;
    std::uint64_t count;
};

// Per-thread work: a shared pool (every thread inserts it: overlapping sets) plus private keys.
std::vector<std::vector<item>> work(std::size_t const per_thread, unsigned const key_bits,
                                    std::uint64_t const seed, std::uint64_t const key_or = 0)
{
    std::uint64_t const mask = (std::uint64_t{1} << key_bits) - 1;
    std::mt19937_64 shared{seed};
    std::vector<item> pool(per_thread / 4);
    for (auto & it : pool)
        it = {(shared() & mask) | key_or, 1 + shared() % 3};
    std::vector<std::vector<item>> w(n_threads);
    for (unsigned t = 0; t < n_threads; ++t)
    {
        std::mt19937_64 own{seed * 31 + t};
        w[t] = pool;
        while (w[t].size() < per_thread)
            w[t].push_back({(own() & mask) | key_or, own() % 16 == 0 ? 1 + own() % 100000 : 1});
        std::shuffle(w[t].begin(), w[t].end(), own);
    }
    return w;
}

// Runs the work concurrently into `conc` and serially into `serial`; both must succeed.
void run(quotient_filter & conc, quotient_filter & serial, std::vector<std::vector<item>> const & w)
{
    std::atomic<std::size_t> failures{0};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < n_threads; ++t)
        threads.emplace_back(
            [&, t]
            {
                for (auto const & it : w[t])
                    if (conc.insert_concurrent(it.key, it.count) != insert_status::ok)
                        failures.fetch_add(1, std::memory_order_relaxed);
            });
    for (auto & th : threads)
        th.join();
    EXPECT_EQ(failures.load(), 0u);
    for (auto const & part : w)
        for (auto const & it : part)
            ASSERT_EQ(serial.insert(it.key, it.count), insert_status::ok);
}

void expect_same(quotient_filter const & a, quotient_filter const & b)
{
    ASSERT_EQ(a.quotient_bits(), b.quotient_bits());
    EXPECT_EQ(contents(a), contents(b));
    EXPECT_EQ(a.distinct(), b.distinct());
    EXPECT_EQ(a.total_count(), b.total_count());
    EXPECT_EQ(a.used_slots(), b.used_slots());
    // The layout is canonical: the concurrent table is bit-identical to the serial one.
    EXPECT_TRUE(std::equal(a.words().begin(), a.words().end(), b.words().begin(), b.words().end()));
    EXPECT_EQ(a.params(), b.params());
}

} // namespace

TEST(QuotientConcurrent, OverlappingInsertsExact)
{
    filter_config cfg;
    cfg.fpr = 0;
    // room for the counters' extra slots: concurrent insertion never grows, the serial filter must
    // not either
    std::uint64_t const expected = 2 * n_threads * keys_per_thread;
    auto conc = quotient_filter::create(cfg, 62, expected);
    auto serial = quotient_filter::create(cfg, 62, expected);
    run(conc, serial, work(keys_per_thread, 62, 1));
    expect_same(conc, serial);
    // After the threads joined, ordinary use continues (statistics folded in).
    ASSERT_EQ(conc.insert(5), insert_status::ok);
    ASSERT_EQ(serial.insert(5), insert_status::ok);
    expect_same(conc, serial);
}

TEST(QuotientConcurrent, OverlappingInsertsFingerprint)
{
    filter_config cfg;
    cfg.fpr = 0.01;
    // room for the counters' extra slots: concurrent insertion never grows, the serial filter must
    // not either
    std::uint64_t const expected = 2 * n_threads * keys_per_thread;
    auto conc = quotient_filter::create(cfg, 62, expected);
    auto serial = quotient_filter::create(cfg, 62, expected);
    run(conc, serial, work(keys_per_thread, 62, 2));
    expect_same(conc, serial);
}

// A small table at 90% load: clusters cross the 4096-slot regions all the time (several locks per
// insert).
TEST(QuotientConcurrent, ClustersAcrossRegions)
{
    auto conc = quotient_filter::with_geometry(40, 14, 26, 1.0, false);
    auto serial = quotient_filter::with_geometry(40, 14, 26, 1.0, false);
    std::size_t const per_thread = static_cast<std::size_t>(0.9 * (1 << 14)) / n_threads * 4 / 5;
    run(conc, serial, work(per_thread, 40, 3));
    EXPECT_GT(conc.stats().load, 0.7);
    expect_same(conc, serial);
}

// All keys in a narrow quotient range: one huge cluster, saturated block offsets, the serialised
// path.
TEST(QuotientConcurrent, HugeClusterSaturatedOffsets)
{
    auto conc = quotient_filter::with_geometry(40, 16, 24, 1.0, false);
    auto serial = quotient_filter::with_geometry(40, 16, 24, 1.0, false);
    // Keys whose top 16 bits (the quotient) are below 64: every fingerprint lands in the first
    // block.
    run(conc, serial, work(1500, 30, 4));
    expect_same(conc, serial);
    EXPECT_GT(conc.used_slots(), 4000u);
}

// Concurrent inserts into a table that fills up: `full` for some keys, every accepted key is stored
// with its count, and the table stays consistent.
TEST(QuotientConcurrent, FullTable)
{
    auto conc = quotient_filter::with_geometry(40, 12, 28, 1.0, false);
    auto const w = work(3000, 40, 5);
    std::vector<std::vector<item>> accepted(n_threads);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < n_threads; ++t)
        threads.emplace_back(
            [&, t]
            {
                for (auto const & it : w[t])
                    if (conc.insert_concurrent(it.key, it.count) == insert_status::ok)
                        accepted[t].push_back(it);
            });
    for (auto & th : threads)
        th.join();
    multiset expected;
    std::size_t n = 0;
    for (auto const & part : accepted)
        for (auto const & it : part)
        {
            expected[it.key] += it.count;
            ++n;
        }
    EXPECT_LT(n, n_threads * 3000u); // some were refused
    EXPECT_EQ(contents(conc), expected);
    EXPECT_EQ(conc.distinct(), expected.size());
}

// The pipeline's path: a sharded filter, every shard owned by one thread at a time, batches without
// locks.
TEST(QuotientConcurrent, ShardedOneThreadPerShard)
{
    filter_config cfg;
    cfg.fpr = 0.001;
    cfg.shard_bits = 3;
    ksieve::sharded_filter<quotient_filter> conc{cfg};
    ksieve::sharded_filter<quotient_filter> serial{cfg};
    std::mt19937_64 rng{6};
    std::vector<std::uint64_t> keys(n_threads * keys_per_thread);
    for (auto & k : keys)
        k = rng() & ((std::uint64_t{1} << 62) - 1);
    std::vector<std::vector<std::uint64_t>> per_shard(conc.num_shards());
    for (auto const k : keys)
        per_shard[conc.shard_of(k)].push_back(conc.local_key(k));
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < n_threads; ++t)
        threads.emplace_back(
            [&]
            {
                for (std::size_t s; (s = next.fetch_add(1)) < per_shard.size();)
                    EXPECT_EQ(conc.insert_batch(s, per_shard[s]), insert_status::ok);
            });
    for (auto & th : threads)
        th.join();
    for (auto const k : keys)
        ASSERT_EQ(serial.insert(k), insert_status::ok);
    for (std::size_t s = 0; s < conc.num_shards(); ++s)
        expect_same(conc.shard(s), serial.shard(s));
}
