// Large oracle tests of the quotient filter against std::unordered_map<key, count>: random
// interleavings of insert / remove / count up to 95% load in exact mode, no false negatives and FPR
// <= 1.5 eps in fingerprint mode, automatic growth from the smallest table. More than 4 M keys in
// total. Every test runs once per copy of the filter's hot paths (generic and, where the CPU has
// it, the x86-64-v3 one with BMI2).
#include <cmath>
#include <ksieve/filters/quotient/quotient_filter.hpp>

#include "simd_fixture.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

using ksieve::filter_config;
using ksieve::insert_status;
using ksieve::quotient_filter;
using ksieve::detail::simd_level;

namespace
{

#ifdef KSIEVE_SANITIZED
constexpr unsigned scale_shift = 3; // sanitizer builds: 1/8 of the keys
#else
constexpr unsigned scale_shift = 0;
#endif

constexpr std::uint64_t key_mask62 = (std::uint64_t{1} << 62) - 1;

// Full comparison: every oracle key has its count, iteration yields exactly the oracle.
void expect_equal_contents(quotient_filter const & f,
                           std::unordered_map<std::uint64_t, std::uint64_t> const & oracle)
{
    std::size_t n = 0;
    std::uint64_t total = 0;
    bool ok = true;
    f.for_each(
        [&](std::uint64_t const key, std::uint64_t const c)
        {
            auto const it = oracle.find(key);
            if (it == oracle.end() || it->second != c)
                ok = false;
            ++n;
            total += c;
        });
    EXPECT_TRUE(ok) << "iteration yields a key or count the oracle does not have";
    EXPECT_EQ(n, oracle.size());
    std::uint64_t oracle_total = 0;
    for (auto const & [k, c] : oracle)
    {
        oracle_total += c;
        ASSERT_EQ(f.count(k), c);
    }
    EXPECT_EQ(total, oracle_total);
    EXPECT_EQ(f.distinct(), oracle.size());
    EXPECT_EQ(f.total_count(), oracle_total);
}

// Exact mode, fixed table (no growth): fill to `target` load with a random mix of operations.
void exact_interleaved(unsigned const q, unsigned const r, double const target,
                       std::uint64_t const seed)
{
    auto f = quotient_filter::with_geometry(q + r, q, r, 1.0, false);
    ASSERT_TRUE(f.exact());
    std::uint64_t const kmask = (std::uint64_t{1} << (q + r)) - 1;
    std::mt19937_64 rng{seed};
    std::unordered_map<std::uint64_t, std::uint64_t> oracle;
    std::vector<std::uint64_t> keys;
    auto const goal = static_cast<std::uint64_t>(target * static_cast<double>(f.slots()));
    std::size_t ops = 0;
    while (f.used_slots() < goal)
    {
        ++ops;
        unsigned const op = static_cast<unsigned>(rng() % 100);
        if (op < 60 || keys.empty())
        {
            bool const repeat = !keys.empty() && op % 5 == 0;
            std::uint64_t const key = repeat ? keys[rng() % keys.size()] : (rng() & kmask);
            std::uint64_t const c = op % 11 == 0 ? 1 + rng() % 100000 : 1;
            ASSERT_EQ(f.insert(key, c), insert_status::ok) << "load " << f.stats().load;
            auto & oc = oracle[key];
            if (oc == 0)
                keys.push_back(key);
            oc += c;
        }
        else if (op < 75)
        {
            std::size_t const idx = rng() % keys.size();
            std::uint64_t const key = keys[idx];
            std::uint64_t const c = op % 2 == 0 ? 1 : ~std::uint64_t{0}; // decrement or erase
            ASSERT_TRUE(f.remove(key, c));
            auto & oc = oracle[key];
            oc = oc > c ? oc - c : 0;
            if (oc == 0)
            {
                oracle.erase(key);
                keys[idx] = keys.back();
                keys.pop_back();
            }
        }
        else
        {
            bool const present = op % 2 == 0 && !keys.empty();
            std::uint64_t const key = present ? keys[rng() % keys.size()] : (rng() & kmask);
            auto const it = oracle.find(key);
            ASSERT_EQ(f.count(key), it == oracle.end() ? 0 : it->second);
        }
    }
    EXPECT_GE(f.used_slots(), goal);
    expect_equal_contents(f, oracle);
    // Drain half of the keys completely, check again (deletions at high load).
    for (std::size_t i = 0; i < keys.size(); i += 2)
    {
        ASSERT_TRUE(f.remove(keys[i], ~std::uint64_t{0}));
        oracle.erase(keys[i]);
    }
    expect_equal_contents(f, oracle);
}

// Runs the test with the filter's hot paths forced to one instruction-set copy (test-only hook).
class QuotientOracle : public ksieve::test::simd_level_fixture
{
};

} // namespace

INSTANTIATE_TEST_SUITE_P(Isa, QuotientOracle,
                         ::testing::Values(simd_level::generic, simd_level::x86_64_v3),
                         ksieve::test::simd_level_name);

// 2^19 slots filled to 95% with inserts (some with large counts), removes and queries interleaved.
TEST_P(QuotientOracle, ExactInterleavedTo95Percent)
{
    exact_interleaved(19 - scale_shift, 30, 0.95, 1);
}

// Narrow remainders: counters take many digits, runs are dense.
TEST_P(QuotientOracle, ExactInterleavedNarrowRemainder)
{
    exact_interleaved(18 - scale_shift, 4, 0.95, 2);
}

// Exact mode growing from the initial 512 slots to millions of keys: every count stays exact.
TEST_P(QuotientOracle, ExactAutoGrowth)
{
    filter_config cfg;
    cfg.fpr = 0;
    auto f = quotient_filter::create(cfg, 62, 0);
    unsigned const q0 = f.quotient_bits();
    std::mt19937_64 rng{3};
    std::unordered_map<std::uint64_t, std::uint64_t> oracle;
    std::size_t const n = std::size_t{1500000} >> scale_shift;
    std::vector<std::uint64_t> batch;
    for (std::size_t i = 0; i < n; ++i)
    {
        std::uint64_t const key = rng() & key_mask62;
        if (i % 3 == 0)
        {
            std::uint64_t const c = 1 + rng() % 7;
            ASSERT_EQ(f.insert(key, c), insert_status::ok);
            oracle[key] += c;
        }
        else
        {
            batch.push_back(key);
            ++oracle[key];
            if (batch.size() == 4096)
            {
                ASSERT_EQ(f.insert_batch(batch), insert_status::ok);
                batch.clear();
            }
        }
    }
    ASSERT_EQ(f.insert_batch(batch), insert_status::ok);
    EXPECT_GT(f.quotient_bits(), q0 + 5);
    EXPECT_TRUE(f.exact());
    EXPECT_LE(f.stats().load, f.max_load());
    expect_equal_contents(f, oracle);
}

// Fingerprint mode at the designed size and loads 50..95%: no false negatives (counts never below
// the truth) and measured FPR <= 1.5 eps on keys that were never inserted.
TEST_P(QuotientOracle, FingerprintNoFalseNegativesAndFpr)
{
    struct setup
    {
        double eps;
        double max_load;
        unsigned q; // n is about max_load * 2^q keys
    };
    for (setup const s : {setup{0.01, 0.95, 20 - scale_shift}, setup{0.001, 0.9, 19 - scale_shift},
                          setup{0.05, 0.5, 19 - scale_shift}})
    {
        filter_config cfg;
        cfg.fpr = s.eps;
        cfg.max_load = s.max_load;
        // Built for n keys (fingerprint collisions, about n eps / 2, take a counter slot each): the
        // table is sized to fit, so it ends at about max_load, less the room left for the spread of
        // keys among shards (three standard deviations).
        auto const n = static_cast<std::uint64_t>(
            s.max_load * static_cast<double>(std::uint64_t{1} << s.q) * (1.0 - s.eps));
        auto f = quotient_filter::create(cfg, 62, n);
        std::uint64_t const slots0 = f.slots();
        unsigned const q0 = f.quotient_bits();
        std::mt19937_64 rng{static_cast<std::uint64_t>(s.eps * 1e6)};
        std::unordered_map<std::uint64_t, std::uint64_t> oracle;
        std::vector<std::uint64_t> keys(n);
        for (auto & k : keys)
            k = rng() & key_mask62;
        ASSERT_EQ(f.insert_batch(keys), insert_status::ok);
        for (auto const k : keys)
            ++oracle[k];
        EXPECT_EQ(f.slots(), slots0) << "sized for n: no growth";
        EXPECT_EQ(f.quotient_bits(), q0);
        double const spread = 3.0 / std::sqrt(static_cast<double>(n));
        EXPECT_GT(f.stats().load, s.max_load * (1.0 - spread) - s.eps - 0.002);
        // Remove a tenth again (decrements of really inserted keys).
        for (std::size_t i = 0; i < keys.size(); i += 10)
        {
            ASSERT_TRUE(f.remove(keys[i]));
            if (--oracle[keys[i]] == 0)
                oracle.erase(keys[i]);
        }
        std::vector<std::uint64_t> present;
        for (auto const & [k, c] : oracle)
            present.push_back(k);
        std::vector<std::uint64_t> out(present.size());
        f.count_batch(present, out.data());
        for (std::size_t i = 0; i < present.size(); ++i)
            ASSERT_GE(out[i], oracle[present[i]]) << "false negative / undercount";
        // FPR on 2n absent keys.
        std::size_t fp = 0;
        std::size_t absent = 0;
        std::vector<std::uint64_t> queries(2 * keys.size());
        for (auto & q : queries)
            q = rng() & key_mask62;
        out.resize(queries.size());
        f.count_batch(queries, out.data());
        for (std::size_t i = 0; i < queries.size(); ++i)
        {
            if (oracle.count(queries[i]) != 0)
                continue;
            ++absent;
            if (out[i] != 0)
                ++fp;
        }
        double const fpr = static_cast<double>(fp) / static_cast<double>(absent);
        EXPECT_LE(fpr, 1.5 * s.eps) << "eps " << s.eps;
        EXPECT_GT(fpr, 0.0) << "fingerprint mode should show some false positives at this size";
        EXPECT_LE(f.stats().estimated_fpr, s.eps);
        EXPECT_NEAR(f.stats().estimated_fpr, fpr, 0.3 * s.eps);
    }
}

// Unknown expected count: the filter grows on its own; the FPR stays far below eps (designed for
// 2^30 keys), with no false negative.
TEST_P(QuotientOracle, FingerprintAutoGrowth)
{
    filter_config cfg;
    cfg.fpr = 0.001;
    auto f = quotient_filter::create(cfg, 62, 0);
    std::mt19937_64 rng{17};
    std::vector<std::uint64_t> keys(std::size_t{800000} >> scale_shift);
    for (auto & k : keys)
        k = rng() & key_mask62;
    ASSERT_EQ(f.insert_batch(keys), insert_status::ok);
    std::vector<std::uint64_t> out(keys.size());
    f.count_batch(keys, out.data());
    for (auto const c : out)
        ASSERT_GE(c, 1u);
    std::size_t fp = 0;
    for (std::size_t i = 0; i < keys.size(); ++i)
        fp += f.count(rng() & key_mask62) != 0;
    EXPECT_LE(static_cast<double>(fp) / static_cast<double>(keys.size()), 1.5 * cfg.fpr);
    EXPECT_LE(f.stats().load, cfg.max_load);
}
