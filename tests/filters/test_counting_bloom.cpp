// Tests of the counting Bloom filter against exact oracles: a multiset (std::unordered_map) of keys
// for false negatives, deletes and the FPR, and a naive byte-per-counter model with the documented
// saturation rule for the exact counter values.
#include <ksieve/filters/bloom/counting_bloom.hpp>
#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/support/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <unistd.h>

namespace
{

using namespace ksieve;

// Two ranges hold the same elements (std::ranges::equal, which libc++ before 15 lacks).
template <typename A, typename B> bool same_elements(A const & a, B const & b)
{
    return std::equal(std::begin(a), std::end(a), std::begin(b), std::end(b));
}

#if defined(KSIEVE_SANITIZED)
constexpr std::size_t big_n = std::size_t{1} << 17;
#else
constexpr std::size_t big_n = std::size_t{1} << 20; // >= 1 M distinct keys
#endif

constexpr std::uint64_t key_mask62 = (std::uint64_t{1} << 62) - 1;

filter_config config(double const fpr)
{
    filter_config c{};
    c.type = filter_type::counting_bloom;
    c.fpr = fpr;
    return c;
}

std::vector<std::uint64_t> distinct_keys(std::size_t const n, std::uint64_t const seed,
                                         std::unordered_set<std::uint64_t> & set)
{
    std::mt19937_64 rng{seed};
    std::vector<std::uint64_t> v;
    v.reserve(n);
    while (v.size() < n)
    {
        std::uint64_t const x = rng() & key_mask62;
        if (set.insert(x).second)
            v.push_back(x);
    }
    return v;
}

double measured_fpr(counting_bloom_filter const & f, std::vector<std::uint64_t> const & absent)
{
    std::vector<std::uint64_t> out(absent.size());
    f.count_batch(absent, out.data());
    std::size_t fp = 0;
    for (auto const c : out)
        fp += c != 0;
    return static_cast<double>(fp) / static_cast<double>(absent.size());
}

// ----------------------------------------------------------------------------------------------------------

TEST(CountingBloom, SizedWithSeedFormulas)
{
    std::uint64_t const n = 1'000'000;
    auto const f = counting_bloom_filter::create(config(0.01), 62, n);
    double const seed_m =
        -static_cast<double>(n) * std::log(0.01) / (std::log(2.0) * std::log(2.0));
    EXPECT_GE(static_cast<double>(f.counters()), seed_m);
    EXPECT_LT(static_cast<double>(f.counters()), seed_m + 16);
    EXPECT_EQ(f.counters() % 16, 0u);
    EXPECT_EQ(f.hash_count(), 7u);
    EXPECT_EQ(f.words().size() * 16, f.counters()); // 4 bits per counter
    for (double const bad : {0.0, 0.5, -1.0})
        EXPECT_THROW((void)counting_bloom_filter::create(config(bad), 62, n), usage_error);
    EXPECT_THROW((void)counting_bloom_filter::create(config(0.01), 62, 0), usage_error);
    EXPECT_THROW((counting_bloom_filter{0, 3}), usage_error);
    EXPECT_THROW((counting_bloom_filter{4, 0}), usage_error);
    EXPECT_THROW((counting_bloom_filter{4, 65}), usage_error);
}

TEST(CountingBloom, OracleMillionKeysInsertDeleteExact)
{
    std::unordered_set<std::uint64_t> seen;
    auto const keys = distinct_keys(big_n, 17, seen);
    auto const absent = distinct_keys(2 * big_n, 18, seen); // disjoint from keys
    double const eps = 0.01;
    auto f = counting_bloom_filter::create(config(eps), 62, keys.size());

    // Multiset oracle: multiplicities 1..3, inserted in a shuffled order, partly by batch, partly
    // with counts.
    std::mt19937_64 rng{19};
    std::unordered_map<std::uint64_t, std::uint64_t> mult;
    std::vector<std::uint64_t> stream;
    for (auto const x : keys)
    {
        std::uint64_t const m = 1 + rng() % 3;
        mult[x] = m;
        for (std::uint64_t i = 0; i < m; ++i)
            stream.push_back(x);
    }
    std::shuffle(stream.begin(), stream.end(), rng);
    std::size_t const half = stream.size() / 2;
    f.insert_batch(std::span{stream}.first(half));
    for (std::size_t i = half; i < stream.size(); ++i)
        f.insert(stream[i]);
    std::uint64_t const saturated_after_insert = f.saturated_counters();

    auto check_present = [&](char const * phase)
    {
        std::vector<std::uint64_t> out(keys.size());
        f.count_batch(keys, out.data());
        std::size_t fn = 0;
        for (std::size_t i = 0; i < keys.size(); ++i)
        {
            std::uint64_t const m = mult[keys[i]];
            EXPECT_EQ(out[i], f.count(keys[i]));
            if (m > 0 && out[i] < std::min<std::uint64_t>(m, 15))
                ++fn;
        }
        EXPECT_EQ(fn, 0u) << phase << ": a count below the true multiplicity is a false negative";
    };
    check_present("after insert");
    double const fpr_full = measured_fpr(f, absent);
    EXPECT_LE(fpr_full, 1.5 * eps);
    auto const st = f.stats();
    EXPECT_NEAR(static_cast<double>(st.distinct) / static_cast<double>(keys.size()), 1.0, 0.02);
    if (saturated_after_insert == 0)
    {
        EXPECT_EQ(st.total_count, stream.size());
    }

    // Delete a random part of the occurrences: each key loses 0..mult occurrences.
    std::vector<std::uint64_t> removed_keys;
    std::size_t removed_occurrences = 0;
    for (auto const x : keys)
    {
        std::uint64_t const r = rng() % (mult[x] + 1);
        for (std::uint64_t i = 0; i < r; ++i)
            ASSERT_TRUE(f.remove(x)) << "an inserted key must be removable";
        mult[x] -= r;
        removed_occurrences += r;
        if (mult[x] == 0)
            removed_keys.push_back(x);
    }
    check_present("after partial delete");
    // fully removed keys are as absent as never-inserted ones (FPR at a lower load)
    EXPECT_LE(measured_fpr(f, removed_keys), fpr_full * 1.1 + 0.001);
    if (saturated_after_insert == 0)
    {
        EXPECT_EQ(f.stats().total_count, stream.size() - removed_occurrences);
    }

    // Delete everything that is left: the filter is empty again, except sticky saturated counters.
    for (auto const x : keys)
    {
        if (mult[x] > 0)
        {
            ASSERT_TRUE(f.remove(x, mult[x]));
        }
        mult[x] = 0;
    }
    std::uint64_t nonzero = 0;
    for (std::uint64_t i = 0; i < f.counters(); ++i)
    {
        if (f.counter(i) != 0)
        {
            ++nonzero;
            EXPECT_EQ(f.counter(i), 15u)
                << "only saturated counters may survive deleting everything";
        }
    }
    EXPECT_EQ(nonzero, saturated_after_insert);
    EXPECT_LE(measured_fpr(f, keys), 0.001);
    // removing an absent key is refused and changes nothing
    auto const before = std::vector<std::uint64_t>(f.words().begin(), f.words().end());
    std::size_t refused = 0;
    for (std::size_t i = 0; i < 1000; ++i)
        refused += !f.remove(absent[i]);
    EXPECT_GE(refused, 990u);
    if (refused == 1000)
    {
        EXPECT_TRUE(same_elements(before, f.words()));
    }
}

/*! Naive model of the documented semantics: one byte per counter, sticky saturation at 15. */
struct naive_counting_bloom
{
    std::vector<std::uint8_t> c;
    explicit naive_counting_bloom(std::uint64_t const m) : c(m, 0) {}
    void insert(std::vector<std::uint64_t> const & pos, std::uint64_t const n)
    {
        for (auto const p : pos)
            c[p] =
                c[p] == 15 ? 15 : static_cast<std::uint8_t>(std::min<std::uint64_t>(15, c[p] + n));
    }
    std::uint64_t count(std::vector<std::uint64_t> const & pos) const
    {
        std::uint64_t m = 15;
        for (auto const p : pos)
            m = std::min<std::uint64_t>(m, c[p]);
        return m;
    }
    bool remove(std::vector<std::uint64_t> const & pos, std::uint64_t const n)
    {
        if (count(pos) == 0)
            return false;
        for (auto const p : pos)
            if (c[p] != 15)
                c[p] = static_cast<std::uint8_t>(c[p] > n ? c[p] - n : 0);
        return true;
    }
};

TEST(CountingBloom, SaturationMatchesNaiveModel)
{
    // A small, heavily loaded filter: many counters saturate; every counter must equal the model's.
    counting_bloom_filter f{64, 5}; // 1024 counters
    naive_counting_bloom model{f.counters()};
    std::mt19937_64 rng{23};
    std::vector<std::uint64_t> keys(600);
    for (auto & x : keys)
        x = rng() & key_mask62;
    std::vector<std::uint64_t> pos(f.hash_count());
    for (int step = 0; step < 20'000; ++step)
    {
        std::uint64_t const x = keys[rng() % keys.size()];
        f.positions(x, pos.data());
        std::uint64_t const n = 1 + rng() % 4;
        if (rng() % 3 == 0)
            ASSERT_EQ(f.remove(x, n), model.remove(pos, n));
        else
        {
            f.insert(x, n);
            model.insert(pos, n);
        }
        ASSERT_EQ(f.count(x), model.count(pos));
    }
    for (std::uint64_t i = 0; i < f.counters(); ++i)
        ASSERT_EQ(f.counter(i), model.c[i]) << "counter " << i;
    EXPECT_GT(f.saturated_counters(), 0u);
    EXPECT_EQ(f.saturated_counters(),
              static_cast<std::uint64_t>(std::count(model.c.begin(), model.c.end(), 15)));
}

TEST(CountingBloom, SaturationIsStickyAndNeverCausesFalseNegatives)
{
    counting_bloom_filter f{1024, 4};
    std::uint64_t const x = 0x123456789ULL;
    std::uint64_t const y = 0x987654321ULL;
    for (int i = 0; i < 20; ++i)
        f.insert(x);
    EXPECT_EQ(f.count(x), 15u); // capped at 15
    f.insert(y, 3);
    EXPECT_EQ(f.count(y), 3u);
    // removing x 20 times: its counters are saturated, stay 15 (documented: a saturated key is
    // never forgotten; no other key loses counts through it)
    for (int i = 0; i < 20; ++i)
        EXPECT_TRUE(f.remove(x));
    EXPECT_EQ(f.count(x), 15u);
    EXPECT_EQ(f.count(y), 3u);
    EXPECT_TRUE(f.remove(y, 2));
    EXPECT_EQ(f.count(y), 1u);
    EXPECT_TRUE(f.remove(y));
    EXPECT_EQ(f.count(y), 0u);
    EXPECT_FALSE(f.remove(y)); // absent: refused
    // a single large count saturates at once
    std::uint64_t const z = 42;
    f.insert(z, 1000);
    EXPECT_EQ(f.count(z), 15u);
    // count 0 changes nothing
    auto const before = std::vector<std::uint64_t>(f.words().begin(), f.words().end());
    f.insert(7, 0);
    EXPECT_FALSE(f.remove(z, 0));
    EXPECT_TRUE(same_elements(before, f.words()));
}

TEST(CountingBloom, MergeIsSaturatingSumIntersectIsMin)
{
    std::mt19937_64 rng{29};
    counting_bloom_filter a{256, 6};
    counting_bloom_filter b{256, 6};
    counting_bloom_filter both{256, 6};
    std::vector<std::uint64_t> keys(3000);
    for (auto & x : keys)
        x = rng() & key_mask62;
    for (std::size_t i = 0; i < keys.size(); ++i)
    {
        (i % 2 ? a : b).insert(keys[i], 1 + i % 3);
        both.insert(keys[i], 1 + i % 3);
    }
    std::vector<counting_bloom_filter const *> const ptrs{&a, &b};
    auto const m = counting_bloom_filter::merge(ptrs);
    auto const u = unite(a, b);
    auto const in = intersect(a, b);
    for (std::uint64_t i = 0; i < a.counters(); ++i)
    {
        ASSERT_EQ(m.counter(i), std::min<std::uint64_t>(15, a.counter(i) + b.counter(i))) << i;
        ASSERT_EQ(u.counter(i), m.counter(i));
        ASSERT_EQ(in.counter(i), std::min(a.counter(i), b.counter(i)));
        if (m.counter(i) < 15)
        {
            ASSERT_EQ(m.counter(i), both.counter(i))
                << "unsaturated sums equal one filter of both multisets";
        }
    }
    for (std::size_t i = 0; i < keys.size(); ++i)
        ASSERT_GE(m.count(keys[i]), std::min<std::uint64_t>(15, 1 + i % 3));
    counting_bloom_filter const other{257, 6};
    counting_bloom_filter const other_k{256, 5};
    EXPECT_THROW(a.unite_with(other), incompatible_error);
    EXPECT_THROW(a.intersect_with(other_k), incompatible_error);
    std::vector<counting_bloom_filter const *> const bad{&a, &other_k};
    EXPECT_THROW((void)counting_bloom_filter::merge(bad), incompatible_error);
    EXPECT_THROW((void)counting_bloom_filter::merge({}), incompatible_error);
}

TEST(CountingBloom, ViewValidationAndFileRoundTrip)
{
    counting_bloom_filter f{8, 3};
    auto const p = f.params();
    std::vector<std::uint64_t> const w8(8, ~std::uint64_t{0});
    auto const v = counting_bloom_filter::view(p, w8, 62);
    EXPECT_EQ(v.count(5), 15u); // garbage is valid content
    std::vector<std::uint64_t> const w7(7, 0);
    EXPECT_THROW((void)counting_bloom_filter::view(p, w7, 62), format_error);
    EXPECT_THROW(
        (void)counting_bloom_filter::view(std::vector<std::uint64_t>{p[0], 120, 3}, w8, 62),
        format_error);
    EXPECT_THROW(
        (void)counting_bloom_filter::view(std::vector<std::uint64_t>{p[0], 128, 0}, w8, 62),
        format_error);
    EXPECT_THROW(
        (void)counting_bloom_filter::view(std::vector<std::uint64_t>{p[0] + 1, 128, 3}, w8, 62),
        format_error);
    EXPECT_THROW((void)counting_bloom_filter::view(std::vector<std::uint64_t>{p[0], 128}, w8, 62),
                 format_error);

    filter_config cfg = config(0.01);
    cfg.expected = 50'000;
    cfg.shard_bits = 2;
    sharded_filter<counting_bloom_filter> s{cfg};
    std::mt19937_64 rng{31};
    std::vector<std::uint64_t> keys(50'000);
    for (auto & x : keys)
    {
        x = rng() & key_mask62;
        s.insert(x, 1 + x % 4);
    }
    auto const path = std::filesystem::temp_directory_path() /
                      ("ksieve_test_counting_bloom_" + std::to_string(::getpid()));
    s.save(path);
    {
        sharded_filter<counting_bloom_filter> const loaded{mapped_filter_file::open(path)};
        for (auto const x : keys)
            ASSERT_EQ(loaded.count(x), s.count(x));
        for (int i = 0; i < 10'000; ++i)
        {
            std::uint64_t const y = rng() & key_mask62;
            ASSERT_EQ(loaded.count(y), s.count(y));
        }
        EXPECT_EQ(loaded.stats().total_count, s.stats().total_count);
    }
    std::filesystem::remove(path);
}

} // namespace
