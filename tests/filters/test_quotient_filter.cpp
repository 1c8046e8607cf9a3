// Core behaviour of the counting quotient filter: counter encoding, exact mode, remove, iteration
// order, batches, full status, canonical layout. Oracles: std::map / std::unordered_map of keys and
// counts.
#include <ksieve/filters/quotient/quotient_filter.hpp>
#include <ksieve/filters/support/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <unordered_map>
#include <vector>

using ksieve::filter_config;
using ksieve::insert_status;
using ksieve::quotient_filter;

namespace
{

std::uint64_t mask_of(unsigned const bits)
{
    return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}

// The filter's contents as a sorted map (value -> count), through for_each.
std::map<std::uint64_t, std::uint64_t> contents(quotient_filter const & f)
{
    std::map<std::uint64_t, std::uint64_t> m;
    std::uint64_t prev = 0;
    bool first = true;
    f.for_each(
        [&](std::uint64_t const v, std::uint64_t const c)
        {
            EXPECT_TRUE(first || v > prev) << "iteration not strictly increasing";
            first = false;
            prev = v;
            EXPECT_GE(c, 1u);
            m[v] = c;
        });
    return m;
}

filter_config exact_config(bool const auto_grow = true)
{
    filter_config cfg;
    cfg.fpr = 0;
    cfg.auto_grow = auto_grow;
    return cfg;
}

} // namespace

// Every remainder class (0, 1, middle, maximum) with counts around every encoding boundary, for
// several remainder widths: the count read back equals the count written and neighbours are
// untouched.
TEST(QuotientFilter, CounterEncodingRoundTrip)
{
    for (unsigned const r : {2u, 3u, 5u, 8u, 13u, 16u, 24u, 40u, 52u})
    {
        unsigned const q = r < 4 ? 16 - r : 12;
        unsigned const key_bits = q + r;
        auto f = quotient_filter::with_geometry(key_bits, q, r, 1.0, false);
        ASSERT_TRUE(f.exact());
        std::uint64_t const rmax = mask_of(r);
        std::uint64_t const base = rmax; // digit base 2^r - 1
        std::vector<std::uint64_t> counts = {1,
                                             2,
                                             3,
                                             4,
                                             5,
                                             base,
                                             base + 1,
                                             base + 2,
                                             base + 3,
                                             base + 4,
                                             2 * base + 3,
                                             base * base + 2,
                                             std::uint64_t{1} << 32,
                                             (std::uint64_t{1} << 32) + 12345,
                                             ~std::uint64_t{0} - 7,
                                             ~std::uint64_t{0}};
        std::vector<std::uint64_t> remainders = {0, 1, rmax / 2, rmax - 1, rmax};
        std::sort(remainders.begin(), remainders.end());
        remainders.erase(std::unique(remainders.begin(), remainders.end()), remainders.end());
        std::map<std::uint64_t, std::uint64_t> oracle;
        std::uint64_t h = 0;
        for (std::uint64_t const c : counts)
        {
            // All remainders in one run (quotient h), so counters sit next to each other.
            for (std::uint64_t const x : remainders)
            {
                std::uint64_t const key = (h << r) | x;
                ASSERT_EQ(f.insert(key, c), insert_status::ok) << "r=" << r << " c=" << c;
                oracle[key] = c;
            }
            for (auto const & [k, c2] : oracle)
                ASSERT_EQ(f.count(k), c2) << "r=" << r << " key=" << k;
            h += 3;
        }
        EXPECT_EQ(contents(f), oracle) << "r=" << r;
        // Increments through the boundaries one at a time, then back down.
        std::uint64_t const key = ((h + 1) << r) | (rmax / 2);
        std::uint64_t const key0 = ((h + 1) << r) | 0;
        for (std::uint64_t c = 1; c <= std::min<std::uint64_t>(base + 10, 600); ++c)
        {
            ASSERT_EQ(f.insert(key), insert_status::ok);
            ASSERT_EQ(f.insert(key0), insert_status::ok);
            ASSERT_EQ(f.count(key), c);
            ASSERT_EQ(f.count(key0), c);
        }
        for (std::uint64_t c = std::min<std::uint64_t>(base + 10, 600); c-- > 0;)
        {
            ASSERT_TRUE(f.remove(key));
            ASSERT_TRUE(f.remove(key0));
            ASSERT_EQ(f.count(key), c);
            ASSERT_EQ(f.count(key0), c);
        }
        EXPECT_FALSE(f.remove(key));
        EXPECT_EQ(contents(f), oracle) << "r=" << r;
        EXPECT_EQ(f.distinct(), oracle.size());
    }
}

// Widest remainder (57 bits: 64-bit keys in a 128-slot table).
TEST(QuotientFilter, WidestRemainder)
{
    auto f = quotient_filter::with_geometry(64, 7, 57, 1.0, false);
    std::mt19937_64 rng{57};
    std::map<std::uint64_t, std::uint64_t> oracle;
    for (int i = 0; i < 40; ++i)
    {
        std::uint64_t const key =
            i < 4 ? (std::uint64_t{5} << 57) | (i == 0 ? 0 : mask_of(57) - i + 1) : rng();
        std::uint64_t const c = i % 3 == 0 ? (std::uint64_t{1} << 40) + i : 1 + i % 3;
        ASSERT_EQ(f.insert(key, c), insert_status::ok);
        oracle[key] += c;
    }
    for (auto const & [k, c] : oracle)
        ASSERT_EQ(f.count(k), c);
    EXPECT_EQ(contents(f), oracle);
}

TEST(QuotientFilter, SaturatingCount)
{
    auto f = quotient_filter::create(exact_config(), 62, 0);
    std::uint64_t const big = ~std::uint64_t{0} - 5;
    ASSERT_EQ(f.insert(42, big), insert_status::ok);
    EXPECT_EQ(f.count(42), big);
    ASSERT_EQ(f.insert(42, 100), insert_status::ok);
    EXPECT_EQ(f.count(42), ~std::uint64_t{0});
    ASSERT_TRUE(f.remove(42, 10));
    EXPECT_EQ(f.count(42), ~std::uint64_t{0} - 10);
    ASSERT_TRUE(f.remove(42, ~std::uint64_t{0}));
    EXPECT_EQ(f.count(42), 0u);
    EXPECT_EQ(f.distinct(), 0u);
    EXPECT_EQ(f.used_slots(), 0u);
}

// Exact mode for every small k (key_bits = 2k, padded when below 16 bits) and k = 32 (64-bit keys):
// every key of a random sample is counted exactly, iteration returns the original keys.
TEST(QuotientFilter, ExactModeAllKeyWidths)
{
    std::mt19937_64 rng{7};
    for (unsigned k = 1; k <= 32; ++k)
    {
        unsigned const kb = 2 * k;
        auto f = quotient_filter::create(exact_config(), kb, 0);
        ASSERT_TRUE(f.exact());
        std::unordered_map<std::uint64_t, std::uint64_t> oracle;
        std::size_t const n = kb <= 10 ? (std::size_t{1} << kb) * 3 : 20000;
        for (std::size_t i = 0; i < n; ++i)
        {
            std::uint64_t const key = rng() & mask_of(kb);
            std::uint64_t const c = 1 + rng() % 3;
            ASSERT_EQ(f.insert(key, c), insert_status::ok) << "k=" << k;
            oracle[key] += c;
        }
        for (auto const & [key, c] : oracle)
            ASSERT_EQ(f.count(key), c) << "k=" << k;
        for (int i = 0; i < 2000; ++i)
        {
            std::uint64_t const key = rng() & mask_of(kb);
            auto const it = oracle.find(key);
            ASSERT_EQ(f.count(key), it == oracle.end() ? 0 : it->second) << "k=" << k;
        }
        std::map<std::uint64_t, std::uint64_t> const sorted(oracle.begin(), oracle.end());
        EXPECT_EQ(contents(f), sorted) << "k=" << k;
        EXPECT_EQ(f.distinct(), oracle.size());
        EXPECT_EQ(f.stats().estimated_fpr, 0.0);
    }
}

// Random interleaving of inserts (with counts), removes (decrements and erases) and queries on a
// fixed-size exact filter, against an unordered_map, checked in full at intervals.
TEST(QuotientFilter, ExactInterleavedSmall)
{
    for (unsigned const r : {3u, 8u, 11u, 20u})
    {
        std::mt19937_64 rng{r};
        unsigned const q = 10;
        unsigned const kb = q + r;
        auto f = quotient_filter::with_geometry(kb, q, r, 1.0, false);
        std::unordered_map<std::uint64_t, std::uint64_t> oracle;
        std::vector<std::uint64_t> keys;
        for (int step = 0; step < 60000; ++step)
        {
            unsigned const op = rng() % 10;
            if (op < 5 || keys.empty())
            {
                std::uint64_t const key = (!keys.empty() && rng() % 4 == 0)
                                              ? keys[rng() % keys.size()]
                                              : (rng() & mask_of(kb));
                std::uint64_t const c = rng() % 8 == 0 ? 1 + rng() % 1000 : 1;
                if (f.insert(key, c) == insert_status::ok)
                {
                    if (oracle[key] == 0)
                        keys.push_back(key);
                    oracle[key] += c;
                }
                else
                    ASSERT_GT(f.used_slots() + 3,
                              f.slots() * 95 / 100); // full only when nearly full
            }
            else if (op < 8)
            {
                std::size_t const idx = rng() % keys.size();
                std::uint64_t const key = keys[idx];
                std::uint64_t const c = rng() % 2 == 0 ? 1 : 1 + rng() % 2000;
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
                std::uint64_t const key = rng() % 2 == 0 && !keys.empty()
                                              ? keys[rng() % keys.size()]
                                              : (rng() & mask_of(kb));
                auto const it = oracle.find(key);
                ASSERT_EQ(f.count(key), it == oracle.end() ? 0 : it->second) << "step " << step;
                if (it == oracle.end())
                {
                    ASSERT_FALSE(f.remove(key));
                }
            }
            if (step % 5000 == 4999)
            {
                std::map<std::uint64_t, std::uint64_t> const sorted(oracle.begin(), oracle.end());
                ASSERT_EQ(contents(f), sorted) << "r=" << r << " step " << step;
                ASSERT_EQ(f.distinct(), oracle.size());
            }
        }
    }
}

TEST(QuotientFilter, BatchEqualsSingle)
{
    filter_config cfg;
    cfg.fpr = 0.01;
    auto a = quotient_filter::create(cfg, 62, 0);
    auto b = quotient_filter::create(cfg, 62, 0);
    std::mt19937_64 rng{3};
    std::vector<std::uint64_t> keys(50000);
    for (auto & k : keys)
        k = rng() & mask_of(62);
    for (std::size_t i = 0; i < 10000; ++i)
        keys.push_back(keys[rng() % keys.size()]); // repeats
    ASSERT_EQ(a.insert_batch(keys), insert_status::ok);
    for (auto const k : keys)
        ASSERT_EQ(b.insert(k), insert_status::ok);
    ASSERT_EQ(a.quotient_bits(), b.quotient_bits());
    EXPECT_TRUE(std::equal(a.words().begin(), a.words().end(), b.words().begin(), b.words().end()));
    std::vector<std::uint64_t> queries = keys;
    for (int i = 0; i < 50000; ++i)
        queries.push_back(rng() & mask_of(62));
    std::vector<std::uint64_t> out(queries.size());
    a.count_batch(queries, out.data());
    for (std::size_t i = 0; i < queries.size(); ++i)
        ASSERT_EQ(out[i], b.count(queries[i]));
}

// insert_batch with old counts (the fetch-and-add dedup uses): old[i] is the count keys[i] had just
// before its own insertion, repeats inside the batch included, through growth of the table; the
// table is the one plain insert_batch builds. Oracle: an unordered_map of counts, updated key by
// key.
TEST(QuotientFilter, BatchWithOldCounts)
{
    // exact, fingerprints, and short fingerprints (r = 16 down to 10: one-digit counters fit a
    // field-wise read, so batches add to them in place)
    for (double const fpr : {0.0, 0.01, -1.0})
    {
        filter_config cfg;
        cfg.fpr = std::max(fpr, 0.0);
        auto make = [&]
        {
            return fpr < 0 ? quotient_filter::with_geometry(40, 10, 16, 0.9, true)
                           : quotient_filter::create(cfg, 40, 0);
        };
        auto a = make();
        auto b = make();
        auto c = make(); // key by key with insert()
        std::unordered_map<std::uint64_t, std::uint64_t>
            oracle; // by fingerprint: what count() reports
        std::mt19937_64 rng{5};
        std::vector<std::uint64_t> pool(20000);
        for (auto & k : pool)
            k = rng() & mask_of(40);
        unsigned const q0 = a.quotient_bits();
        for (int round = 0; round < 20; ++round)
        {
            std::vector<std::uint64_t> keys(1 + rng() % 6000);
            for (auto & k : keys)
                k = pool[rng() % (round < 10 ? pool.size() : 300)]; // later rounds: many repeats
            std::vector<std::uint64_t> old(keys.size(), 12345);
            ASSERT_EQ(a.insert_batch(keys, old.data()), insert_status::ok);
            ASSERT_EQ(b.insert_batch(keys), insert_status::ok);
            for (auto const k : keys)
                ASSERT_EQ(c.insert(k), insert_status::ok);
            for (std::size_t i = 0; i < keys.size(); ++i)
                ASSERT_EQ(old[i], oracle[a.fingerprint(keys[i])]++)
                    << "fpr " << fpr << " round " << round << " i " << i;
        }
        EXPECT_GT(a.quotient_bits(), q0); // it grew inside batches
        EXPECT_TRUE(
            std::equal(a.words().begin(), a.words().end(), b.words().begin(), b.words().end()));
        EXPECT_TRUE(
            std::equal(a.words().begin(), a.words().end(), c.words().begin(), c.words().end()));
        EXPECT_EQ(a.total_count(), c.total_count());
        for (auto const k : pool)
            ASSERT_EQ(a.count(k), oracle[a.fingerprint(k)]);
    }
}

// The table-ordered batch overloads give what the input-order ones give: the same old[] (repeats
// inside a batch see their earlier copies), the same table word for word (also across growth inside
// a batch), the same counts for present and absent keys, in exact and fingerprint mode. Oracles:
// the input-order filter and an unordered_map of counts by fingerprint. The scratch orders tables
// of any size here (tables past the default min_table_bytes would need millions of keys), and a low
// max_load makes them grow inside ordered batches; the batches are checked to take the ordered
// path.
TEST(QuotientFilter, OrderedBatchesEqualInputOrder)
{
    for (unsigned const key_bits :
         {60u, 64u}) // q + r = 61: exact for 60-bit keys, fingerprints for 64
    {
        auto a = quotient_filter::with_geometry(key_bits, 18, 43, 0.3, true); // 1.5 MB, then 2.9 MB
        auto b = quotient_filter::with_geometry(key_bits, 18, 43, 0.3, true);
        ASSERT_EQ(a.exact(), key_bits == 60);
        quotient_filter::batch_scratch scratch;
        EXPECT_FALSE(
            b.ordered_batch(50000, scratch)); // the default keeps cache-sized tables in input order
        scratch.min_table_bytes = 0;
        std::unordered_map<std::uint64_t, std::uint64_t> oracle; // by fingerprint
        std::mt19937_64 rng{23};
        std::vector<std::uint64_t> pool(100000);
        for (auto & k : pool)
            k = rng() & mask_of(key_bits);
        unsigned const q0 = a.quotient_bits();
        std::size_t ordered = 0;
        for (int round = 0; round < 10; ++round)
        {
            std::vector<std::uint64_t> keys(20000 + rng() % 30000);
            for (auto & k : keys)
                k = pool[rng() %
                         (round % 3 == 2 ? 300 : pool.size())]; // every third round: many repeats
            ordered += b.ordered_batch(keys.size(), scratch);
            std::vector<std::uint64_t> old_a(keys.size(), 777), old_b(keys.size(), 999);
            ASSERT_EQ(a.insert_batch(keys, old_a.data()), insert_status::ok);
            ASSERT_EQ(b.insert_batch(keys, old_b.data(), scratch), insert_status::ok);
            for (std::size_t i = 0; i < keys.size(); ++i)
            {
                ASSERT_EQ(old_b[i], old_a[i]) << key_bits << " bits, round " << round << " i " << i;
                ASSERT_EQ(old_b[i], oracle[b.fingerprint(keys[i])]++);
            }
            ASSERT_TRUE(
                std::equal(a.words().begin(), a.words().end(), b.words().begin(), b.words().end()))
                << "round " << round;
            // lookups: pool keys (present or not yet) and fresh random keys
            std::vector<std::uint64_t> queries(keys.size());
            for (std::size_t i = 0; i < queries.size(); ++i)
                queries[i] = i % 2 == 0 ? pool[rng() % pool.size()] : rng() & mask_of(key_bits);
            std::vector<std::uint64_t> out_a(queries.size()), out_b(queries.size(), 5);
            a.count_batch(queries, out_a.data());
            b.count_batch(queries, out_b.data(), scratch);
            for (std::size_t i = 0; i < queries.size(); ++i)
            {
                ASSERT_EQ(out_b[i], out_a[i]) << "round " << round << " i " << i;
                auto const it = oracle.find(b.fingerprint(queries[i]));
                ASSERT_EQ(out_b[i], it == oracle.end() ? 0 : it->second);
            }
        }
        EXPECT_GT(a.quotient_bits(), q0); // it grew inside ordered batches
        EXPECT_EQ(ordered, 10u);
        EXPECT_FALSE(b.ordered_batch(100, scratch)); // a sparse batch keeps its order
        // a table of one region has nothing to order
        EXPECT_FALSE(quotient_filter::with_geometry(32, 10, 8).ordered_batch(1000, scratch));
        // without old[]
        auto c = quotient_filter::with_geometry(key_bits, 18, 43, 0.9, true);
        auto d = quotient_filter::with_geometry(key_bits, 18, 43, 0.9, true);
        ASSERT_TRUE(c.ordered_batch(pool.size(), scratch));
        ASSERT_EQ(c.insert_batch(pool, nullptr, scratch), insert_status::ok);
        ASSERT_EQ(d.insert_batch(pool), insert_status::ok);
        EXPECT_TRUE(
            std::equal(c.words().begin(), c.words().end(), d.words().begin(), d.words().end()));
    }
}

// An ordered batch into a filter that cannot grow stops at `full`: everything stored before is
// kept, the keys it did insert have the old counts it reports, and no key gains more than its
// copies in the batch.
TEST(QuotientFilter, OrderedBatchFull)
{
    auto f = quotient_filter::with_geometry(40, 16, 40, 0.95, false); // 2^16 slots of 40 bits
    ASSERT_TRUE(f.exact());
    std::mt19937_64 rng{31};
    std::vector<std::uint64_t> first(30000), second(50000);
    for (auto & k : first)
        k = rng() & mask_of(40);
    for (auto & k : second)
        k = rng() & mask_of(40);
    for (std::size_t i = 0; i < second.size(); i += 10)
        second[i] = first[i % first.size()]; // some keys already stored
    for (std::size_t i = 5; i < second.size(); i += 10)
        second[i] = second[i - 5]; // some repeated in the batch
    ASSERT_EQ(f.insert_batch(first), insert_status::ok);
    std::unordered_map<std::uint64_t, std::uint64_t> before, copies;
    for (auto const k : first)
        ++before[k];
    for (auto const k : second)
        ++copies[k];
    quotient_filter::batch_scratch scratch;
    scratch.min_table_bytes = 0;
    ASSERT_TRUE(f.ordered_batch(second.size(), scratch));
    std::vector<std::uint64_t> old(second.size(), ~std::uint64_t{0});
    std::uint64_t const total0 = f.total_count();
    ASSERT_EQ(f.insert_batch(second, old.data(), scratch), insert_status::full);
    std::uint64_t inserted = 0;
    std::unordered_map<std::uint64_t, std::uint64_t>
        seen; // copies of each key inserted so far, in input order
    for (std::size_t i = 0; i < second.size(); ++i)
        if (old[i] != ~std::uint64_t{0})
        {
            ++inserted;
            ASSERT_EQ(old[i], before[second[i]] + seen[second[i]]++)
                << i; // exact mode: true counts
        }
    EXPECT_GT(inserted, 0u);
    EXPECT_LT(inserted, second.size());
    EXPECT_EQ(f.total_count(), total0 + inserted);
    for (auto const & [k, c] : before)
        ASSERT_GE(f.count(k), c);
    for (auto const & [k, c] : copies)
        ASSERT_EQ(f.count(k), before[k] + seen[k]);
}

// The table is a canonical function of the multiset: any insertion order gives identical words.
TEST(QuotientFilter, CanonicalLayout)
{
    std::mt19937_64 rng{11};
    std::vector<std::pair<std::uint64_t, std::uint64_t>> items;
    for (int i = 0; i < 30000; ++i)
        items.emplace_back(rng() & mask_of(40), 1 + (i % 7 == 0 ? rng() % 500 : 0));
    auto a = quotient_filter::with_geometry(40, 16, 24, 1.0, false);
    auto b = quotient_filter::with_geometry(40, 16, 24, 1.0, false);
    for (auto const & [k, c] : items)
        ASSERT_EQ(a.insert(k, c), insert_status::ok);
    std::shuffle(items.begin(), items.end(), rng);
    // b: insert one more of each then remove it again, in another order.
    for (auto const & [k, c] : items)
        ASSERT_EQ(b.insert(k, c + 1), insert_status::ok);
    std::shuffle(items.begin(), items.end(), rng);
    for (auto const & [k, c] : items)
        ASSERT_TRUE(b.remove(k, 1));
    EXPECT_TRUE(std::equal(a.words().begin(), a.words().end(), b.words().begin(), b.words().end()));
    EXPECT_EQ(a.params(), b.params());
    // Erasing everything leaves an all-zero table.
    for (auto const & [k, c] : items)
        b.remove(k, ~std::uint64_t{0});
    EXPECT_EQ(b.distinct(), 0u);
    EXPECT_EQ(b.used_slots(), 0u);
    EXPECT_TRUE(
        std::all_of(b.words().begin(), b.words().end(), [](std::uint64_t w) { return w == 0; }));
}

// Growth disabled: inserting until full returns `full`, nothing stored before is lost, and the
// filter keeps answering and accepting removes.
TEST(QuotientFilter, FullWithoutGrowth)
{
    for (bool const exact : {true, false})
    {
        filter_config cfg;
        cfg.fpr = exact ? 0.0 : 0.01;
        cfg.auto_grow = false;
        auto f = quotient_filter::create(cfg, 62, 5000);
        std::uint64_t const slots = f.slots();
        std::mt19937_64 rng{5};
        std::unordered_map<std::uint64_t, std::uint64_t> oracle;
        std::size_t fulls = 0;
        for (std::size_t i = 0; i < slots * 2; ++i)
        {
            std::uint64_t const key = rng() & mask_of(62);
            auto const before = f.params();
            if (f.insert(key) == insert_status::ok)
            {
                ++oracle[key];
            }
            else
            {
                ++fulls;
                ASSERT_EQ(f.params(), before); // a failed insert changes nothing
            }
        }
        EXPECT_GT(fulls, 0u);
        EXPECT_EQ(f.slots(), slots); // never grew
        EXPECT_GE(f.used_slots(), slots * 95 / 100);
        EXPECT_LE(f.used_slots(), slots);
        for (auto const & [key, c] : oracle)
            ASSERT_GE(f.count(key), c); // exact: equal; fingerprints: no false negative
        if (exact)
        {
            for (auto const & [key, c] : oracle)
                ASSERT_EQ(f.count(key), c);
        }
        // Removing frees room again.
        std::size_t removed = 0;
        for (auto const & [key, c] : oracle)
        {
            if (removed++ == 100)
                break;
            ASSERT_TRUE(f.remove(key, ~std::uint64_t{0}));
        }
        EXPECT_EQ(f.insert(rng() & mask_of(62)), insert_status::ok);
    }
}

TEST(QuotientFilter, ConfigValidation)
{
    filter_config cfg;
    cfg.fpr = 0.5;
    EXPECT_THROW((void)quotient_filter::create(cfg, 62, 0), ksieve::usage_error);
    cfg.fpr = -0.1;
    EXPECT_THROW((void)quotient_filter::create(cfg, 62, 0), ksieve::usage_error);
    cfg.fpr = 0.01;
    cfg.max_load = 0;
    EXPECT_THROW((void)quotient_filter::create(cfg, 62, 0), ksieve::usage_error);
    cfg.max_load = 0.9;
    EXPECT_THROW((void)quotient_filter::create(cfg, 0, 0), ksieve::usage_error);
    EXPECT_THROW((void)quotient_filter::with_geometry(62, 40, 30),
                 ksieve::usage_error); // q + r > 64
    EXPECT_THROW((void)quotient_filter::with_geometry(62, 5, 10), ksieve::usage_error); // q < 6
    EXPECT_THROW((void)quotient_filter::with_geometry(62, 10, 1), ksieve::usage_error);
    EXPECT_NO_THROW((void)quotient_filter::with_geometry(62, 10, 52));
}

// The fingerprint width depends only on the parameters, and the FPR estimate follows n / 2^p.
TEST(QuotientFilter, FingerprintWidthFromParameters)
{
    filter_config cfg;
    cfg.fpr = 0.001;
    auto a = quotient_filter::create(cfg, 62, 1000000);
    EXPECT_EQ(a.fingerprint_bits(), 30u); // 10^6 / 2^30 <= 0.001 < 10^6 / 2^29
    cfg.shard_bits = 4;
    auto b = quotient_filter::create(cfg, 58, 0); // unknown: 2^30 / 16 keys per shard
    EXPECT_EQ(b.fingerprint_bits(), 36u);
    cfg.fpr = 0;
    auto c = quotient_filter::create(cfg, 58, 0);
    EXPECT_EQ(c.fingerprint_bits(), 58u);
    EXPECT_TRUE(c.exact());
    cfg.fpr = 0.01;
    cfg.shard_bits = 0;
    auto d =
        quotient_filter::create(cfg, 20, 1000000); // key narrower than the design: exact anyway
    EXPECT_EQ(d.fingerprint_bits(), 26u);          // small key space: padded by 6 bits
    EXPECT_TRUE(d.exact());
    cfg.fpr = 0;
    auto e = quotient_filter::create(cfg, 20, 0);
    EXPECT_EQ(e.fingerprint_bits(), 26u); // same p as the fingerprint-mode filter above: mergeable
    auto g = quotient_filter::create(cfg, 2, 0);
    EXPECT_EQ(g.fingerprint_bits(), 16u);
}
