// Merge and resize of quotient filters against multiset oracles: merge(A, B, ...) iterates exactly
// the union with counts added and answers like one filter built from all inputs; resize (grow and
// shrink) preserves every fingerprint and count.
#include <bit>
#include <ksieve/filters/quotient/quotient_filter.hpp>
#include <ksieve/filters/support/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <span>
#include <vector>

using ksieve::filter_config;
using ksieve::insert_status;
using ksieve::quotient_filter;

namespace
{

#ifdef KSIEVE_SANITIZED
constexpr std::size_t merge_keys = 40000;
#else
constexpr std::size_t merge_keys = 300000;
#endif

using multiset = std::map<std::uint64_t, std::uint64_t>;

multiset contents(quotient_filter const & f)
{
    multiset m;
    f.for_each([&](std::uint64_t const v, std::uint64_t const c) { m[v] += c; });
    return m;
}

// n keys for filter i: a shared pool (overlap between inputs) plus private keys, with some counts
// > 1.
std::vector<std::pair<std::uint64_t, std::uint64_t>>
sample(std::size_t const n, std::uint64_t const seed, unsigned const key_bits)
{
    std::mt19937_64 shared{12345};
    std::mt19937_64 own{seed};
    std::uint64_t const mask =
        key_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << key_bits) - 1;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> items;
    for (std::size_t i = 0; i < n; ++i)
    {
        std::uint64_t const key = (i % 3 == 0 ? shared() : own()) & mask;
        std::uint64_t const c = own() % 9 == 0 ? 1 + own() % 5000 : 1;
        items.emplace_back(key, c);
    }
    return items;
}

void check_merge(filter_config const & cfg, std::size_t const inputs, unsigned const key_bits)
{
    std::vector<quotient_filter> filters;
    auto all = quotient_filter::create(cfg, key_bits, 0); // one filter built from every input
    multiset expected_union;
    for (std::size_t i = 0; i < inputs; ++i)
    {
        filters.push_back(quotient_filter::create(cfg, key_bits, 0));
        for (auto const & [k, c] : sample(merge_keys / inputs * (i % 2 + 1), 1000 + i, key_bits))
        {
            ASSERT_EQ(filters.back().insert(k, c), insert_status::ok);
            ASSERT_EQ(all.insert(k, c), insert_status::ok);
        }
        for (auto const & [v, c] : contents(filters.back()))
            expected_union[v] += c;
    }
    std::vector<quotient_filter const *> ptrs;
    for (auto const & f : filters)
        ptrs.push_back(&f);
    auto const merged = quotient_filter::merge(ptrs);
    // Iteration: exactly the multiset union (fingerprints in fingerprint mode, keys in exact mode).
    auto const got = contents(merged);
    EXPECT_EQ(got, expected_union);
    EXPECT_EQ(got, contents(all));
    EXPECT_EQ(merged.fingerprint_bits(), all.fingerprint_bits());
    EXPECT_EQ(merged.distinct(), expected_union.size());
    std::uint64_t total = 0;
    for (auto const & [v, c] : expected_union)
        total += c;
    EXPECT_EQ(merged.total_count(), total);
    // Sized for the union: at most max_load, at least a quarter of it.
    EXPECT_LE(merged.stats().load, merged.max_load());
    EXPECT_GT(merged.stats().load, merged.max_load() / 4);
    // Same answers as the filter built from everything, for inserted and random keys.
    std::mt19937_64 rng{77};
    std::uint64_t const mask = (std::uint64_t{1} << key_bits) - 1;
    for (auto const & [k, c] : sample(2000, 1000, key_bits))
        ASSERT_EQ(merged.count(k), all.count(k));
    for (int i = 0; i < 100000; ++i)
    {
        std::uint64_t const k = rng() & mask;
        ASSERT_EQ(merged.count(k), all.count(k));
    }
}

} // namespace

TEST(QuotientMerge, TwoExact)
{
    filter_config cfg;
    cfg.fpr = 0;
    check_merge(cfg, 2, 62);
}

TEST(QuotientMerge, ThreeFingerprint)
{
    filter_config cfg;
    cfg.fpr = 0.001;
    check_merge(cfg, 3, 62);
}

TEST(QuotientMerge, ManyInputsScanPath)
{
    filter_config cfg;
    cfg.fpr = 0.01;
    cfg.shard_bits = 3;
    check_merge(cfg, 12, 59);
}

TEST(QuotientMerge, ManyInputsHeapPath)
{
    filter_config cfg;
    cfg.fpr = 0.01;
    cfg.shard_bits = 3;
    check_merge(cfg, 20, 59);
}

// Every operation gives the same filter whether the walk's result is kept (fingerprint gaps of 2^32
// and more and counts of 255 and more in the side lists) or walked again (a buffer of no bytes);
// the pages the walk reports as passed cover each input's words once, in order.
TEST(QuotientMerge, KeptAndRewalkedResultsAgreeAndWordsArePassedInOrder)
{
    for (double const fpr : {0.0, 0.001})
    {
        filter_config cfg;
        cfg.fpr = fpr;
        std::vector<quotient_filter> filters;
        for (std::size_t i = 0; i < 3; ++i)
        {
            filters.push_back(quotient_filter::create(cfg, 62, 0));
            for (auto const & [k, c] : sample(merge_keys / 3, 2000 + i, 62))
                ASSERT_EQ(filters.back().insert(k, c), insert_status::ok);
        }
        std::vector<quotient_filter const *> const ptrs{&filters[0], &filters[1], &filters[2]};
        for (auto const op :
             {ksieve::set_operation::unite, ksieve::set_operation::intersect,
              ksieve::set_operation::subtract, ksieve::set_operation::subtract_counts})
        {
            quotient_filter::combine_scratch kept;
            std::vector<std::uint64_t> passed(ptrs.size(), 0);
            quotient_filter::consumed_fn const consumed =
                [&](std::size_t const i, std::span<std::uint64_t const> const words)
            {
                ASSERT_LT(i, ptrs.size());
                auto const all = ptrs[i]->words();
                ASSERT_EQ(words.data(), all.data() + passed[i]); // in order, no gap, no overlap
                passed[i] += words.size();
                ASSERT_LE(passed[i], all.size());
            };
            auto const a = quotient_filter::combine(ptrs, op, 1, &kept, consumed);
            for (std::size_t i = 0; i < ptrs.size(); ++i)
                EXPECT_EQ(passed[i], ptrs[i]->words().size());
            quotient_filter::combine_scratch none;
            none.max_bytes = 0;
            auto const b = quotient_filter::combine(ptrs, op, 1, &none);
            auto const c = quotient_filter::combine(ptrs, op, 2); // no scratch, min count 2
            multiset const ma = contents(a);
            EXPECT_EQ(ma, contents(b));
            EXPECT_EQ(a.slots(), b.slots());
            EXPECT_EQ(a.words().size(), b.words().size());
            EXPECT_TRUE(std::equal(a.words().begin(), a.words().end(), b.words().begin()));
            // the oracle: the inputs' multisets combined by the operation's rule
            std::vector<multiset> in;
            for (auto const * f : ptrs)
                in.push_back(contents(*f));
            for (std::uint64_t const min_count : {std::uint64_t{1}, std::uint64_t{2}})
            {
                multiset want;
                std::map<std::uint64_t, std::vector<std::uint64_t>> by_key;
                for (std::size_t i = 0; i < in.size(); ++i)
                    for (auto const & [v, n] : in[i])
                        if (n >= min_count)
                        {
                            auto & cs = by_key[v];
                            cs.resize(in.size(), 0);
                            cs[i] = n;
                        }
                for (auto const & [v, cs] : by_key)
                {
                    std::uint64_t sum = 0, least = ~std::uint64_t{0};
                    std::size_t present = 0;
                    for (auto const n : cs)
                        if (n != 0)
                        {
                            sum += n;
                            least = std::min(least, n);
                            ++present;
                        }
                    std::uint64_t r = 0;
                    if (op == ksieve::set_operation::unite)
                        r = sum;
                    else if (op == ksieve::set_operation::intersect)
                        r = present == cs.size() ? least : 0;
                    else if (op == ksieve::set_operation::subtract)
                        r = cs[0] != 0 && present == 1 ? cs[0] : 0;
                    else
                        r = cs[0] > sum - cs[0] ? cs[0] - (sum - cs[0]) : 0;
                    if (r != 0)
                        want[v] = r;
                }
                EXPECT_EQ(min_count == 1 ? ma : contents(c), want)
                    << "operation " << static_cast<int>(op) << ", min count " << min_count;
            }
        }
    }
}

TEST(QuotientMerge, SingleInputAndEmptyInputs)
{
    filter_config cfg;
    cfg.fpr = 0;
    auto a = quotient_filter::create(cfg, 40, 0);
    auto e = quotient_filter::create(cfg, 40, 0);
    for (auto const & [k, c] : sample(20000, 5, 40))
        ASSERT_EQ(a.insert(k, c), insert_status::ok);
    std::vector<quotient_filter const *> one{&a};
    EXPECT_EQ(contents(quotient_filter::merge(one)), contents(a));
    std::vector<quotient_filter const *> with_empty{&e, &a, &e};
    EXPECT_EQ(contents(quotient_filter::merge(with_empty)), contents(a));
    std::vector<quotient_filter const *> empties{&e, &e};
    auto const m = quotient_filter::merge(empties);
    EXPECT_EQ(m.distinct(), 0u);
    EXPECT_EQ(m.count(1), 0u);
}

// A merged filter of mmap-style views (read-only inputs) equals the merge of the owners.
TEST(QuotientMerge, ViewsAsInputs)
{
    filter_config cfg;
    cfg.fpr = 0.01;
    auto a = quotient_filter::create(cfg, 62, 50000);
    auto b = quotient_filter::create(cfg, 62, 50000);
    for (auto const & [k, c] : sample(50000, 1, 62))
        ASSERT_EQ(a.insert(k, c), insert_status::ok);
    for (auto const & [k, c] : sample(50000, 2, 62))
        ASSERT_EQ(b.insert(k, c), insert_status::ok);
    auto const pa = a.params();
    auto const pb = b.params();
    auto const va = quotient_filter::view(pa, a.words(), 62);
    auto const vb = quotient_filter::view(pb, b.words(), 62);
    std::vector<quotient_filter const *> owners{&a, &b};
    std::vector<quotient_filter const *> views{&va, &vb};
    auto const m1 = quotient_filter::merge(owners);
    auto const m2 = quotient_filter::merge(views);
    EXPECT_EQ(contents(m1), contents(m2));
    EXPECT_TRUE(
        std::equal(m1.words().begin(), m1.words().end(), m2.words().begin(), m2.words().end()));
}

TEST(QuotientMerge, IncompatibleInputsThrow)
{
    filter_config cfg;
    cfg.fpr = 0.01;
    auto a = quotient_filter::create(cfg, 62, 1000);
    auto b =
        quotient_filter::create(cfg, 62, 1000000); // other expected count: other fingerprint width
    auto c = quotient_filter::create(cfg, 60, 1000); // other key width
    ASSERT_NE(a.fingerprint_bits(), b.fingerprint_bits());
    std::vector<quotient_filter const *> ac{&a, &c};
    EXPECT_THROW((void)quotient_filter::merge(ac), ksieve::incompatible_error);
    std::vector<quotient_filter const *> none;
    EXPECT_THROW((void)quotient_filter::merge(none), ksieve::usage_error);
}

// Filters of different fingerprint widths merge at the narrowest: the same filter as a merge with
// the wider input built at the narrow width from the same keys.
TEST(QuotientMerge, DifferentWidthsMergeAtTheNarrowest)
{
    filter_config cfg;
    cfg.fpr = 0.01;
    auto a = quotient_filter::create(cfg, 62, 1000); // fingerprints for fewer keys are narrower
    auto wide = quotient_filter::create(cfg, 62, 1000000);
    auto narrow = quotient_filter::create(cfg, 62, 1000);
    ASSERT_LT(a.fingerprint_bits(), wide.fingerprint_bits());
    std::mt19937_64 rng{7};
    std::vector<std::uint64_t> keys;
    for (int i = 0; i < 3000; ++i)
        keys.push_back(rng() >> 2);
    for (int i = 0; i < 2000; ++i)
        ASSERT_EQ(a.insert(keys[static_cast<std::size_t>(i)]), ksieve::insert_status::ok);
    for (int i = 1000; i < 3000; ++i)
        for (int n = 0; n < 1 + i % 3; ++n)
        {
            ASSERT_EQ(wide.insert(keys[static_cast<std::size_t>(i)]), ksieve::insert_status::ok);
            ASSERT_EQ(narrow.insert(keys[static_cast<std::size_t>(i)]), ksieve::insert_status::ok);
        }
    std::vector<quotient_filter const *> const mixed{&a, &wide}, same{&a, &narrow};
    auto const m = quotient_filter::merge(mixed);
    auto const r = quotient_filter::merge(same);
    EXPECT_EQ(m.fingerprint_bits(), a.fingerprint_bits());
    EXPECT_EQ(m.distinct(), r.distinct());
    EXPECT_EQ(m.total_count(), r.total_count());
    for (int i = 0; i < 3000; ++i)
    {
        std::uint64_t const k = keys[static_cast<std::size_t>(i)];
        EXPECT_EQ(m.count(k), r.count(k));
        EXPECT_GE(m.count(k),
                  static_cast<std::uint64_t>((i < 2000 ? 1 : 0) + (i >= 1000 ? 1 + i % 3 : 0)));
    }
}

// resize to larger and smaller tables keeps every fingerprint and count; exact stays exact;
// impossible sizes are refused without change.
TEST(QuotientMerge, ResizeGrowAndShrink)
{
    for (double const fpr : {0.0, 0.001})
    {
        filter_config cfg;
        cfg.fpr = fpr;
        cfg.auto_grow = false;
        auto f = quotient_filter::create(cfg, 62, 100000);
        for (auto const & [k, c] : sample(80000, 9, 62))
            ASSERT_EQ(f.insert(k, c), insert_status::ok);
        auto const before = contents(f);
        auto const words_before = std::vector<std::uint64_t>(f.words().begin(), f.words().end());
        unsigned const q = f.quotient_bits();
        std::uint64_t const slots = f.slots(); // sized to fit: not a power of two
        ASSERT_FALSE(std::has_single_bit(slots));
        ASSERT_TRUE(f.grow());
        EXPECT_EQ(f.slots(), 2 * slots);
        EXPECT_EQ(f.quotient_bits(), q + 1);
        EXPECT_EQ(contents(f), before);
        ASSERT_TRUE(f.resize(q + 3)); // 2^(q+3) slots: the power-of-two geometry
        EXPECT_EQ(f.slots(), std::uint64_t{1} << (q + 3));
        EXPECT_EQ(contents(f), before);
        EXPECT_EQ(f.exact(), fpr == 0);
        ASSERT_TRUE(f.shrink());
        ASSERT_TRUE(f.shrink());
        EXPECT_EQ(f.quotient_bits(), q + 1);
        EXPECT_EQ(contents(f), before);
        ASSERT_TRUE(f.resize_slots(2 * slots + 640));
        EXPECT_EQ(contents(f), before);
        // fit: the fewest slots that hold it within max_load, whatever the size it came from
        ASSERT_TRUE(f.fit());
        EXPECT_GE(f.slots(), f.fit_slots());
        EXPECT_LE(f.slots(), f.fit_slots() + 64 * 16);
        EXPECT_LE(f.stats().load, f.max_load());
        EXPECT_EQ(contents(f), before);
        EXPECT_FALSE(f.fit()); // already fitted
        // Back at the original size: the same canonical table.
        ASSERT_TRUE(f.resize_slots(slots));
        EXPECT_TRUE(std::equal(f.words().begin(), f.words().end(), words_before.begin(),
                               words_before.end()));
        EXPECT_FALSE(f.shrink()); // would exceed max_load (and is no multiple of 128 slots)
        EXPECT_FALSE(f.resize_slots(slots + 1)); // not a multiple of 64
        auto const params = f.params();
        EXPECT_FALSE(f.resize(q - 2)); // does not fit at all
        EXPECT_FALSE(f.resize(70));
        EXPECT_FALSE(f.resize(f.fingerprint_bits()));
        EXPECT_EQ(f.params(), params);
        for (auto const & [k, c] : sample(2000, 9, 62))
            ASSERT_GE(f.count(k), c);
    }
}

// Growth stops when the remainder reaches its minimum width: then a full status, nothing lost.
TEST(QuotientMerge, GrowthStopsAtMinimumRemainder)
{
    auto f = quotient_filter::with_geometry(62, 10, 4, 0.9, true); // p = 14 fingerprint bits
    std::mt19937_64 rng{4};
    multiset inserted;
    insert_status st = insert_status::ok;
    std::size_t n = 0;
    while (st == insert_status::ok && n < 200000)
    {
        std::uint64_t const k = rng() & ((std::uint64_t{1} << 62) - 1);
        st = f.insert(k);
        if (st == insert_status::ok)
            ++inserted[f.fingerprint(k)];
        ++n;
    }
    EXPECT_EQ(st, insert_status::full);
    EXPECT_EQ(f.remainder_bits(), quotient_filter::min_remainder_bits);
    EXPECT_EQ(f.quotient_bits(), 12u);
    EXPECT_EQ(contents(f), inserted);
}
