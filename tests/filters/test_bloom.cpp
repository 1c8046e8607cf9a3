// Tests of the blocked and classic Bloom filters against exact oracles (std::unordered_set, serial
// runs, the FPR formulas), plus the file-format round trip and corruption detection through
// sharded_filter.
#include <ksieve/filters/bloom/bloom.hpp>
#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/support/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <thread>
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
constexpr std::size_t big_n = std::size_t{1} << 17; // sanitizer builds: same logic, smaller sets
#else
constexpr std::size_t big_n = std::size_t{1} << 20; // >= 1 M keys
#endif

constexpr std::uint64_t key_mask62 = (std::uint64_t{1} << 62) - 1;

std::vector<std::uint64_t> random_keys(std::size_t const n, std::uint64_t const seed,
                                       std::uint64_t const mask = key_mask62)
{
    std::mt19937_64 rng{seed};
    std::vector<std::uint64_t> v(n);
    for (auto & x : v)
        x = rng() & mask;
    return v;
}

/*! Keys that are certainly not in `present` (oracle check), `n` of them. */
std::vector<std::uint64_t> absent_keys(std::unordered_set<std::uint64_t> const & present,
                                       std::size_t const n, std::uint64_t const seed)
{
    std::mt19937_64 rng{seed};
    std::vector<std::uint64_t> v;
    v.reserve(n);
    while (v.size() < n)
    {
        std::uint64_t const x = rng() & key_mask62;
        if (!present.contains(x))
            v.push_back(x);
    }
    return v;
}

filter_config bloom_config(double const fpr, filter_type const t = filter_type::bloom)
{
    filter_config c{};
    c.type = t;
    c.fpr = fpr;
    return c;
}

struct fpr_result
{
    std::size_t false_negatives{0};
    double fpr{0};
};

/*! Insert `keys` (batch for half, single for the other half), then check every key (zero false
 * negatives, single and batch answers agree) and measure the FPR on `absent`. */
template <typename F>
fpr_result oracle_run(F & f, std::vector<std::uint64_t> const & keys,
                      std::vector<std::uint64_t> const & absent)
{
    std::size_t const half = keys.size() / 2;
    f.insert_batch(std::span{keys}.first(half));
    for (std::size_t i = half; i < keys.size(); ++i)
        EXPECT_EQ(f.insert(keys[i]), insert_status::ok);
    fpr_result r;
    std::vector<std::uint64_t> out(keys.size());
    f.count_batch(keys, out.data());
    for (std::size_t i = 0; i < keys.size(); ++i)
        r.false_negatives += (out[i] != 1) + (f.count(keys[i]) != 1);
    out.assign(absent.size(), 7);
    f.count_batch(absent, out.data());
    std::size_t fp = 0;
    for (std::size_t i = 0; i < absent.size(); ++i)
    {
        EXPECT_LE(out[i], 1u);
        EXPECT_EQ(out[i], f.count(absent[i])) << "batch and single lookup disagree";
        fp += out[i];
    }
    r.fpr = static_cast<double>(fp) / static_cast<double>(absent.size());
    return r;
}

struct oracle_data
{
    std::vector<std::uint64_t> keys;
    std::unordered_set<std::uint64_t> set;
    std::vector<std::uint64_t> absent;
};

oracle_data const & big_data()
{
    static oracle_data const d = []
    {
        oracle_data x;
        x.keys = random_keys(big_n, 42);
        x.set.insert(x.keys.begin(), x.keys.end());
        x.absent = absent_keys(x.set, 4 * big_n, 4242);
        return x;
    }();
    return d;
}

// ----------------------------------------------------------------------------------------------------------
// Sizing

TEST(BloomSizing, BlockedShapeMeetsCorrectedFormulaAndIsMinimal)
{
    for (double const eps : {0.2, 0.05, 0.01, 0.001, 0.0001})
    {
        for (std::uint64_t const n :
             {std::uint64_t{1000}, std::uint64_t{1} << 20, std::uint64_t{3} << 30})
        {
            auto const s = blocked_bloom_filter::shape_for(n, eps);
            EXPECT_LE(blocked_bloom_filter::predicted_fpr(n, s.blocks, s.k), eps);
            // minimal: one block less breaks the target for every k
            for (unsigned k = 1; k <= blocked_bloom_filter::max_hashes; ++k)
                EXPECT_GT(blocked_bloom_filter::predicted_fpr(n, s.blocks - 1, k), eps)
                    << "eps " << eps << " k " << k;
        }
    }
}

TEST(BloomSizing, CorrectionAgainstSeedFormula)
{
    // Documented values (bloom.hpp, docs): the blocked layout needs more bits per key than the
    // classic m = -n ln(eps) / (ln 2)^2, and the classic size would give a blocked FPR above eps.
    struct row
    {
        double eps;
        double bits_per_key; // corrected
        unsigned k;
        double classic_size_fpr_ratio; // blocked FPR at the classic size, in units of eps
    };
    std::uint64_t const n = std::uint64_t{1} << 24;
    double const ln2sq = std::log(2.0) * std::log(2.0);
    for (row const r :
         {row{0.01, 9.90, 6, 1.14}, row{0.001, 15.49, 9, 1.54}, row{0.0001, 21.91, 12, 2.56}})
    {
        auto const s = blocked_bloom_filter::shape_for(n, r.eps);
        double const bpk = static_cast<double>(s.blocks) * 512 / static_cast<double>(n);
        double const classic_bpk = -std::log(r.eps) / ln2sq;
        EXPECT_NEAR(bpk, r.bits_per_key, 0.02) << r.eps;
        EXPECT_GT(bpk, classic_bpk * 1.02) << r.eps;
        EXPECT_EQ(s.k, r.k) << r.eps;
        auto const classic_blocks =
            static_cast<std::uint64_t>(std::ceil(classic_bpk * static_cast<double>(n) / 512));
        double best_at_classic = 1;
        for (unsigned k = 1; k <= 32; ++k)
            best_at_classic = std::min(best_at_classic,
                                       blocked_bloom_filter::predicted_fpr(n, classic_blocks, k));
        EXPECT_NEAR(best_at_classic / r.eps, r.classic_size_fpr_ratio, 0.01) << r.eps;
    }
}

TEST(BloomSizing, ClassicUsesSeedFormula)
{
    std::uint64_t const n = 1'000'000;
    for (double const eps : {0.1, 0.01, 0.001})
    {
        auto const f =
            classic_bloom_filter::create(bloom_config(eps, filter_type::bloom_classic), 62, n);
        double const classic_m =
            -static_cast<double>(n) * std::log(eps) / (std::log(2.0) * std::log(2.0));
        EXPECT_GE(static_cast<double>(f.bits()), classic_m);
        EXPECT_LT(static_cast<double>(f.bits()), classic_m + 64);
        double const kopt = static_cast<double>(f.bits()) / static_cast<double>(n) * std::log(2.0);
        EXPECT_LE(std::abs(f.hash_count() - kopt), 1.0);
        // integer k costs at most ~3%
        EXPECT_LE(classic_bloom_filter::predicted_fpr(n, f.bits(), f.hash_count()), eps * 1.03);
    }
}

TEST(BloomSizing, InvalidConfigurationsAreUsageErrors)
{
    for (double const bad : {0.0, -0.1, 0.5, 0.9, std::numeric_limits<double>::quiet_NaN()})
    {
        EXPECT_THROW((void)blocked_bloom_filter::create(bloom_config(bad), 62, 1000), usage_error)
            << bad;
        EXPECT_THROW((void)classic_bloom_filter::create(bloom_config(bad), 62, 1000), usage_error)
            << bad;
    }
    try
    {
        (void)blocked_bloom_filter::create(bloom_config(0.01), 62, 0);
        ADD_FAILURE() << "expected 0 must be refused";
    }
    catch (usage_error const & e)
    {
        EXPECT_NE(std::string{e.what()}.find("--expected"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)classic_bloom_filter::create(bloom_config(0.01), 62, 0), usage_error);
    EXPECT_THROW((blocked_bloom_filter{0, 3}), usage_error);
    EXPECT_THROW((blocked_bloom_filter{10, 0}), usage_error);
    EXPECT_THROW((blocked_bloom_filter{10, 33}), usage_error);
    EXPECT_THROW((classic_bloom_filter{0, 3}), usage_error);
    EXPECT_THROW((classic_bloom_filter{10, 65}), usage_error);
}

TEST(BloomSizing, ExpectedIsCappedByKeyUniverse)
{
    // 4-bit keys (k = 2): at most 16 distinct keys, whatever --expected says.
    auto const f = blocked_bloom_filter::create(bloom_config(0.01), 4, 1'000'000);
    auto const s = blocked_bloom_filter::shape_for(16, 0.01);
    EXPECT_EQ(f.blocks(), s.blocks);
    EXPECT_EQ(f.hash_count(), s.k);
}

// ----------------------------------------------------------------------------------------------------------
// Oracle tests at design load

TEST(BlockedBloom, OracleMillionKeysNoFalseNegativesFprAsPredicted)
{
    auto const & d = big_data();
    for (double const eps : {0.01, 0.001})
    {
        auto f = blocked_bloom_filter::create(bloom_config(eps), 62, d.keys.size());
        auto const r = oracle_run(f, d.keys, d.absent);
        EXPECT_EQ(r.false_negatives, 0u);
        EXPECT_LE(r.fpr, 1.5 * eps);
        double const predicted =
            blocked_bloom_filter::predicted_fpr(d.keys.size(), f.blocks(), f.hash_count());
#if !defined(KSIEVE_SANITIZED)
        // the corrected formula predicts the measured FPR (4 M queries: ~2% statistical error at
        // 0.1%)
        EXPECT_NEAR(r.fpr / predicted, 1.0, 0.1) << "eps " << eps << " measured " << r.fpr;
        EXPECT_NEAR(f.stats().estimated_fpr / r.fpr, 1.0, 0.1);
#endif
        (void)predicted;
    }
}

TEST(BlockedBloom, SeedSizedBlockedFilterMissesTargetCorrectedMeetsIt)
{
    // The reason for the correction, measured: at eps = 0.1% a blocked filter of the classic size
    // has an FPR of about 1.54 eps (formula), the corrected one at most eps.
    auto const & d = big_data();
    double const eps = 0.001;
    std::uint64_t const n = d.keys.size();
    double const classic_bits =
        -static_cast<double>(n) * std::log(eps) / (std::log(2.0) * std::log(2.0));
    auto const classic_blocks = static_cast<std::uint64_t>(std::ceil(classic_bits / 512));
    unsigned best_k = 1;
    for (unsigned k = 2; k <= 32; ++k)
        if (blocked_bloom_filter::predicted_fpr(n, classic_blocks, k) <
            blocked_bloom_filter::predicted_fpr(n, classic_blocks, best_k))
            best_k = k;
    blocked_bloom_filter classic_sized{classic_blocks, best_k};
    auto const r_classic = oracle_run(classic_sized, d.keys, d.absent);
    auto corrected = blocked_bloom_filter::create(bloom_config(eps), 62, n);
    auto const r_corr = oracle_run(corrected, d.keys, d.absent);
    EXPECT_EQ(r_classic.false_negatives + r_corr.false_negatives, 0u);
#if !defined(KSIEVE_SANITIZED)
    EXPECT_GT(r_classic.fpr, 1.35 * eps) << "classic-sized blocked filter";
    EXPECT_NEAR(r_classic.fpr / blocked_bloom_filter::predicted_fpr(n, classic_blocks, best_k), 1.0,
                0.1);
    EXPECT_LE(r_corr.fpr, 1.1 * eps) << "corrected blocked filter";
#endif
    EXPECT_LE(r_corr.fpr, 1.5 * eps);
}

TEST(ClassicBloom, OracleMillionKeysNoFalseNegativesFprAsPredicted)
{
    auto const & d = big_data();
    for (double const eps : {0.01, 0.001})
    {
        auto f = classic_bloom_filter::create(bloom_config(eps, filter_type::bloom_classic), 62,
                                              d.keys.size());
        auto const r = oracle_run(f, d.keys, d.absent);
        EXPECT_EQ(r.false_negatives, 0u);
        EXPECT_LE(r.fpr, 1.5 * eps);
#if !defined(KSIEVE_SANITIZED)
        double const predicted =
            classic_bloom_filter::predicted_fpr(d.keys.size(), f.bits(), f.hash_count());
        EXPECT_NEAR(r.fpr / predicted, 1.0, 0.1) << "eps " << eps << " measured " << r.fpr;
        EXPECT_NEAR(f.stats().estimated_fpr / r.fpr, 1.0, 0.1);
#endif
    }
}

TEST(BlockedBloom, FewBitKeysOfSmallK)
{
    // k = 3: 6-bit keys, all 64 of them; then the 32 even ones only.
    auto f = blocked_bloom_filter::create(bloom_config(0.01), 6, 64);
    for (std::uint64_t x = 0; x < 64; x += 2)
        f.insert(x);
    std::size_t fp = 0;
    for (std::uint64_t x = 0; x < 64; ++x)
    {
        if (x % 2 == 0)
        {
            EXPECT_TRUE(f.contains(x)) << x;
        }
        else
            fp += f.contains(x);
    }
    EXPECT_LE(fp, 3u); // 32 absent keys at eps 1% (half load): P(fp > 3) < 1e-4
}

TEST(BlockedBloom, BatchEqualsSingleInsert)
{
    auto const keys = random_keys(100'000, 7);
    auto a = blocked_bloom_filter::create(bloom_config(0.01), 62, keys.size());
    auto b = blocked_bloom_filter::create(bloom_config(0.01), 62, keys.size());
    a.insert_batch(keys);
    for (auto const x : keys)
        b.insert(x);
    EXPECT_TRUE(same_elements(a.words(), b.words()));
    // count 0 inserts nothing
    auto c = blocked_bloom_filter::create(bloom_config(0.01), 62, keys.size());
    c.insert(keys[0], 0);
    EXPECT_EQ(c.stats().used, 0u);
    // empty batches are fine
    c.insert_batch({});
    c.count_batch({}, nullptr);
}

TEST(BlockedBloom, BatchLookupMatchesScalarForEveryK)
{
    // count_batch has unrolled (k <= 16) and SIMD (groups of 8 or 16 positions) kernels; count() is
    // the plain scalar loop. Both must agree for every k, and inserted keys are always found.
    auto const keys = random_keys(3'000, 3);
    auto const probe = random_keys(20'000, 4);
    std::vector<std::uint64_t> out(probe.size());
    for (unsigned k = 1; k <= blocked_bloom_filter::max_hashes; ++k)
    {
        blocked_bloom_filter f{100, k};
        blocked_bloom_filter g{100, k};
        blocked_bloom_filter c{100, k};
        f.insert_batch(keys);
        for (auto const x : keys)
        {
            g.insert(x);
            c.insert_concurrent(x);
        }
        ASSERT_TRUE(same_elements(f.words(), g.words())) << "k " << k;
        ASSERT_TRUE(same_elements(f.words(), c.words())) << "k " << k;
        f.count_batch(keys, out.data());
        for (std::size_t i = 0; i < keys.size(); ++i)
            ASSERT_EQ(out[i], 1u) << "k " << k;
        f.count_batch(probe, out.data());
        std::size_t positives = 0;
        for (std::size_t i = 0; i < probe.size(); ++i)
        {
            ASSERT_EQ(out[i], f.count(probe[i])) << "k " << k << " key " << probe[i];
            positives += out[i];
        }
        // 30 keys per block: neither empty nor saturated, so both answers occur
        EXPECT_GT(positives, 0u);
        EXPECT_LT(positives, probe.size());
    }
}

// ----------------------------------------------------------------------------------------------------------
// Concurrent insert

template <typename F> void concurrent_equals_serial(F serial, F concurrent)
{
#if defined(KSIEVE_SANITIZED)
    std::size_t const n = 40'000;
#else
    std::size_t const n = 400'000;
#endif
    auto const keys = random_keys(n, 99);
    for (auto const x : keys)
        serial.insert(x);
    // 4 threads over overlapping ranges: thread t inserts keys [t n/5, (t + 2) n/5), half single,
    // half batch.
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < 4; ++t)
    {
        threads.emplace_back(
            [&, t]
            {
                auto const part = std::span{keys}.subspan(t * n / 5, 2 * n / 5);
                auto const half = part.size() / 2;
                for (auto const x : part.first(half))
                    concurrent.insert_concurrent(x);
                concurrent.insert_batch_concurrent(part.subspan(half));
            });
    }
    for (auto & th : threads)
        th.join();
    EXPECT_TRUE(same_elements(serial.words(), concurrent.words()));
}

TEST(BlockedBloom, ConcurrentInsertBitIdenticalToSerial)
{
    concurrent_equals_serial(blocked_bloom_filter{20'000, 7}, blocked_bloom_filter{20'000, 7});
}

TEST(ClassicBloom, ConcurrentInsertBitIdenticalToSerial)
{
    concurrent_equals_serial(classic_bloom_filter{100'000, 7}, classic_bloom_filter{100'000, 7});
}

// ----------------------------------------------------------------------------------------------------------
// Union, intersection, merge

template <typename F> void set_operations(F const & proto)
{
    auto const a_keys = random_keys(60'000, 1);
    auto b_keys = random_keys(60'000, 2);
    // overlap: the first 20k keys of b are keys of a
    std::copy(a_keys.begin(), a_keys.begin() + 20'000, b_keys.begin());
    F a = proto.clone();
    F b = proto.clone();
    F both = proto.clone();
    a.insert_batch(a_keys);
    b.insert_batch(b_keys);
    both.insert_batch(a_keys);
    both.insert_batch(b_keys);

    F const u = unite(a, b);
    EXPECT_TRUE(same_elements(u.words(), both.words())) << "union = filter of the union";
    F const i = intersect(a, b);
    for (std::size_t w = 0; w < i.words().size(); ++w)
        ASSERT_EQ(i.words()[w], a.words()[w] & b.words()[w]);
    for (std::size_t x = 0; x < 20'000; ++x)
        EXPECT_TRUE(i.contains(a_keys[x]));

    std::vector<F const *> const ptrs{&a, &b, &both};
    F const m = F::merge(ptrs);
    EXPECT_TRUE(same_elements(m.words(), both.words()));
    EXPECT_THROW((void)F::merge({}), incompatible_error);
}

TEST(BlockedBloom, UnionIntersectionMerge)
{
    set_operations(blocked_bloom_filter{2'000, 7});
    blocked_bloom_filter a{2'000, 7};
    blocked_bloom_filter const other_size{2'001, 7};
    blocked_bloom_filter const other_k{2'000, 6};
    EXPECT_THROW(a.unite_with(other_size), incompatible_error);
    EXPECT_THROW(a.intersect_with(other_k), incompatible_error);
    EXPECT_THROW((void)unite(a, other_k), incompatible_error);
    EXPECT_THROW((void)intersect(a, other_size), incompatible_error);
    std::vector<blocked_bloom_filter const *> const ptrs{&a, &other_k};
    EXPECT_THROW((void)blocked_bloom_filter::merge(ptrs), incompatible_error);
}

TEST(ClassicBloom, UnionIntersectionMerge)
{
    set_operations(classic_bloom_filter{16'000, 7});
    classic_bloom_filter a{16'000, 7};
    classic_bloom_filter const other_size{16'001, 7};
    classic_bloom_filter const other_k{16'000, 8};
    EXPECT_THROW(a.unite_with(other_size), incompatible_error);
    EXPECT_THROW(a.intersect_with(other_k), incompatible_error);
    std::vector<classic_bloom_filter const *> const ptrs{&a, &other_size};
    EXPECT_THROW((void)classic_bloom_filter::merge(ptrs), incompatible_error);
}

// ----------------------------------------------------------------------------------------------------------
// Cardinality estimate

TEST(BloomCardinality, SeedEstimateWithinFewPercentAtDesignLoad)
{
    auto const & d = big_data();
    std::size_t const distinct = d.set.size();
    // insert every key twice: the estimate counts distinct keys
    auto b = blocked_bloom_filter::create(bloom_config(0.01), 62, distinct);
    b.insert_batch(d.keys);
    b.insert_batch(d.keys);
    auto c =
        classic_bloom_filter::create(bloom_config(0.01, filter_type::bloom_classic), 62, distinct);
    c.insert_batch(d.keys);
    c.insert_batch(d.keys);
    auto const sb = b.stats();
    auto const sc = c.stats();
    // blocked: documented bias -(k - 1)/1024 (about -0.5%), plus noise
    EXPECT_NEAR(static_cast<double>(sb.distinct) / static_cast<double>(distinct), 1.0, 0.02);
    EXPECT_NEAR(static_cast<double>(sc.distinct) / static_cast<double>(distinct), 1.0, 0.02);
    EXPECT_EQ(sb.slots, b.bits());
    EXPECT_EQ(sb.bytes, b.bits() / 8);
    EXPECT_NEAR(sb.load, 0.5, 0.05); // an optimally sized Bloom filter is about half full
    // special cases of the standard estimate
    EXPECT_EQ(detail::bloom_cardinality(0, 1000, 5), 0u);
    EXPECT_EQ(detail::bloom_cardinality(4, 1000, 5), 0u);
    EXPECT_EQ(detail::bloom_cardinality(5, 1000, 5), 1u);
    EXPECT_EQ(detail::bloom_cardinality(1000, 1000, 5), 200u);
    blocked_bloom_filter const empty{100, 5};
    EXPECT_EQ(empty.stats().distinct, 0u);
    EXPECT_EQ(empty.stats().estimated_fpr, 0.0);
    blocked_bloom_filter one{100, 5};
    one.insert(12345);
    EXPECT_EQ(one.stats().distinct, 1u);
}

// ----------------------------------------------------------------------------------------------------------
// view(), clone(), file round trip, corruption

TEST(BlockedBloom, ViewValidatesParameters)
{
    blocked_bloom_filter f{4, 5};
    f.insert(1);
    auto const p = f.params();
    ASSERT_EQ(p.size(), 3u);
    std::vector<std::uint64_t> const words(f.words().begin(), f.words().end());
    auto const v = blocked_bloom_filter::view(p, words, 62);
    EXPECT_TRUE(v.is_view());
    EXPECT_TRUE(v.contains(1));
    auto const bad = [&](std::vector<std::uint64_t> params, std::size_t nwords)
    {
        std::vector<std::uint64_t> const w(nwords, ~std::uint64_t{0});
        EXPECT_THROW((void)blocked_bloom_filter::view(params, w, 62), format_error);
    };
    bad({p[0], p[1]}, 32);
    bad({p[0], p[1], p[2], 0}, 32);
    bad({p[0] + 1, p[1], p[2]}, 32);
    bad({p[0], 0, p[2]}, 0);
    bad({p[0], p[1], 0}, 32);
    bad({p[0], p[1], 33}, 32);
    bad({p[0], p[1], p[2]}, 31);
    bad({p[0], p[1], p[2]}, 33);
    bad({p[0], std::uint64_t{1} << 61, p[2]}, 0); // 8 * blocks overflows
    bad({p[0], ~std::uint64_t{0}, p[2]}, 32);
    // garbage words are valid content: all ones answer "maybe" for everything
    std::vector<std::uint64_t> const ones(32, ~std::uint64_t{0});
    auto const g = blocked_bloom_filter::view(p, ones, 62);
    EXPECT_TRUE(g.contains(987654321));
    auto const s = g.stats();
    EXPECT_EQ(s.used, 4u * 512);
    EXPECT_EQ(s.estimated_fpr, 1.0);
    // clone of a view owns its words and can be modified
    auto c = v.clone();
    EXPECT_FALSE(c.is_view());
    c.insert(2);
    EXPECT_TRUE(c.contains(2));
    EXPECT_TRUE(same_elements(v.words(), words));
}

TEST(ClassicBloom, ViewValidatesParameters)
{
    classic_bloom_filter f{10, 5};
    auto const p = f.params();
    std::vector<std::uint64_t> const w10(10, 0);
    EXPECT_NO_THROW((void)classic_bloom_filter::view(p, w10, 62));
    std::vector<std::uint64_t> const w9(9, 0);
    EXPECT_THROW((void)classic_bloom_filter::view(p, w9, 62), format_error);
    EXPECT_THROW((void)classic_bloom_filter::view(std::vector<std::uint64_t>{p[0], 10, 0}, w10, 62),
                 format_error);
    EXPECT_THROW(
        (void)classic_bloom_filter::view(std::vector<std::uint64_t>{p[0], 10, 65}, w10, 62),
        format_error);
    EXPECT_THROW((void)classic_bloom_filter::view(std::vector<std::uint64_t>{9, 10, 5}, w10, 62),
                 format_error);
    EXPECT_THROW((void)classic_bloom_filter::view(std::vector<std::uint64_t>{p[0], 10}, w10, 62),
                 format_error);
}

struct temp_file
{
    std::filesystem::path path;
    explicit temp_file(std::string const & name)
        : path{std::filesystem::temp_directory_path() /
               ("ksieve_test_bloom_" + std::to_string(::getpid()) + "_" + name)}
    {
    }
    ~temp_file()
    {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
};

std::vector<std::byte> read_bytes(std::filesystem::path const & p)
{
    std::ifstream in{p, std::ios::binary};
    std::vector<char> c{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
    std::vector<std::byte> b(c.size());
    std::memcpy(b.data(), c.data(), c.size());
    return b;
}

filter_config sharded_config(filter_type const t, std::uint64_t const expected,
                             unsigned const shard_bits)
{
    filter_config c{};
    c.type = t;
    c.fpr = 0.01;
    c.expected = expected;
    c.shard_bits = shard_bits;
    c.kmer.k = 31;
    return c;
}

template <typename F> void round_trip(filter_type const t)
{
    auto const keys = random_keys(200'000, 5);
    sharded_filter<F> f{sharded_config(t, keys.size(), 3)};
    for (auto const x : keys)
        ASSERT_EQ(f.insert(x), insert_status::ok);
    temp_file const tmp{"round_trip_" + std::string{to_string(t)}};
    f.save(tmp.path);
    auto const file = mapped_filter_file::open(tmp.path);
    EXPECT_EQ(file->header().type, t);
    sharded_filter<F> const v{file};
    for (std::size_t s = 0; s < f.num_shards(); ++s)
    {
        EXPECT_TRUE(v.shard(s).is_view());
        EXPECT_TRUE(same_elements(v.shard(s).words(), f.shard(s).words()));
    }
    auto const probe = random_keys(200'000, 6);
    for (std::size_t i = 0; i < keys.size(); ++i)
    {
        ASSERT_EQ(v.count(keys[i]), 1u);
        ASSERT_EQ(v.count(probe[i]), f.count(probe[i]));
    }
    // batched per shard, as the pipeline does
    std::vector<std::uint64_t> local(probe.size()), out_f(probe.size()), out_v(probe.size());
    for (std::size_t i = 0; i < probe.size(); ++i)
        local[i] = v.local_key(probe[i]);
    f.count_batch(2, local, out_f.data());
    v.count_batch(2, local, out_v.data());
    EXPECT_EQ(out_f, out_v);
    EXPECT_EQ(v.stats().distinct, f.stats().distinct);
    EXPECT_EQ(v.stats().bytes, f.stats().bytes);
    // a clone of the view is an independent, mutable filter
    auto c = v.clone();
    EXPECT_EQ(c->count(keys[0]), 1u);
    EXPECT_EQ(c->insert(probe[0]), insert_status::ok);
    EXPECT_EQ(c->count(probe[0]), 1u);
}

TEST(BloomFile, RoundTripBlocked)
{
    round_trip<blocked_bloom_filter>(filter_type::bloom);
}
TEST(BloomFile, RoundTripClassic)
{
    round_trip<classic_bloom_filter>(filter_type::bloom_classic);
}

/*! Loading as the CLI does: open + sharded views. Returns the error message or "" when accepted. */
std::string load_error(std::vector<std::byte> const & bytes, bool verify_payload = true)
{
    try
    {
        auto const file = mapped_filter_file::from_bytes(bytes, "corrupt.ksf", verify_payload);
        sharded_filter<blocked_bloom_filter> const f{file};
        (void)f.count(12345); // answering must never crash
        return "";
    }
    catch (format_error const & e)
    {
        return e.what();
    }
}

TEST(BloomFile, CorruptedFilesAreRefusedWithFormatError)
{
    auto const keys = random_keys(3'000, 8);
    sharded_filter<blocked_bloom_filter> f{sharded_config(filter_type::bloom, keys.size(), 2)};
    for (auto const x : keys)
        f.insert(x);
    temp_file const tmp{"corrupt"};
    f.save(tmp.path);
    auto const good = read_bytes(tmp.path);
    ASSERT_EQ(load_error(good), "");
    ASSERT_GT(good.size(), 1000u);

    // Every byte of the file, three different flips each (single bit, all bits, a random non-zero
    // xor).
    std::mt19937_64 rng{11};
    std::size_t undetected = 0;
    for (std::size_t pos = 0; pos < good.size(); ++pos)
    {
        for (unsigned const x : {1u << (pos % 8), 0xFFu, static_cast<unsigned>(1 + rng() % 255)})
        {
            auto bad = good;
            bad[pos] ^= static_cast<std::byte>(x);
            std::string const msg = load_error(bad);
            if (msg.empty())
            {
                ++undetected;
                ADD_FAILURE() << "flip 0x" << std::hex << x << " at byte " << std::dec << pos
                              << " of " << good.size() << " was not detected";
            }
            else
                EXPECT_NE(msg.find("corrupt.ksf"), std::string::npos) << msg;
        }
    }
    EXPECT_EQ(undetected, 0u);

    // Truncation and appended bytes.
    for (std::size_t const len : {std::size_t{0}, std::size_t{7}, std::size_t{64}, good.size() / 2,
                                  good.size() - 24, good.size() - 1})
        EXPECT_NE(load_error(std::vector<std::byte>(
                      good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len))),
                  "")
            << "truncated to " << len;
    auto longer = good;
    longer.push_back(std::byte{0});
    EXPECT_NE(load_error(longer), "");

    // The same through the file system (mmap path).
    {
        auto bad = good;
        bad[bad.size() / 2] ^= std::byte{0x10};
        temp_file const t2{"corrupt_disk"};
        {
            std::ofstream out{t2.path, std::ios::binary};
            out.write(reinterpret_cast<char const *>(bad.data()),
                      static_cast<std::streamsize>(bad.size()));
        }
        EXPECT_THROW(
            {
                auto const file = mapped_filter_file::open(t2.path);
                sharded_filter<blocked_bloom_filter> const g{file};
            },
            format_error);
    }

    // Without payload verification a flipped payload byte is accepted (documented in
    // filter_file.hpp): the view answers without crashing.
    {
        auto const w = f.shard(1).words();
        auto const * const wb = reinterpret_cast<std::byte const *>(w.data());
        auto const it = std::search(good.begin(), good.end(), wb, wb + w.size_bytes());
        ASSERT_NE(it, good.end());
        auto bad = good;
        bad[static_cast<std::size_t>(it - good.begin()) + 100] ^= std::byte{0xFF};
        EXPECT_NE(load_error(bad, true), "");
        EXPECT_EQ(load_error(bad, false), "");
    }
}

} // namespace
