// The quotient filter's CPU-level dispatch: the branch-free portable select64 and every level's
// select (x86-64-v3: pdep) against a naive select, each level's copy of the hot paths against an
// unordered_map oracle and against the generic copy (byte-identical tables), the KSIEVE_SIMD
// switch, and the regression test of the insert hang on tiny key spaces with many duplicates.
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>

#include "../../filters/src/quotient/quotient_filter_kernels.hpp"
#include "simd_fixture.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <span>
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
constexpr unsigned scale_shift = 3;
#else
constexpr unsigned scale_shift = 0;
#endif

unsigned naive_select(std::uint64_t const w, unsigned const k)
{
    unsigned seen = 0;
    for (unsigned i = 0; i < 64; ++i)
        if (((w >> i) & 1) != 0 && seen++ == k)
            return i;
    return 64;
}

// Words with all kinds of densities and byte patterns.
std::vector<std::uint64_t> test_words()
{
    std::vector<std::uint64_t> words{0,
                                     ~std::uint64_t{0},
                                     0x8000000000000000ULL,
                                     1,
                                     0x0101010101010101ULL,
                                     0x8080808080808080ULL,
                                     0xFF000000000000FFULL,
                                     0x00FFFFFFFFFFFF00ULL};
    for (unsigned i = 0; i < 64; ++i)
    {
        words.push_back(std::uint64_t{1} << i);
        words.push_back(~(std::uint64_t{1} << i));
        words.push_back(~std::uint64_t{0} << i);
        words.push_back(~std::uint64_t{0} >> i);
    }
    // Every byte value in every byte position (others empty, full or random).
    std::mt19937_64 rng{42};
    for (std::uint64_t b = 0; b < 256; ++b)
        for (unsigned pos = 0; pos < 8; ++pos)
        {
            words.push_back(b << (8 * pos));
            words.push_back((b << (8 * pos)) | ~(std::uint64_t{0xFF} << (8 * pos)));
            words.push_back((b << (8 * pos)) | (rng() & ~(std::uint64_t{0xFF} << (8 * pos))));
        }
    for (unsigned i = 0; i < 20000; ++i)
    {
        std::uint64_t const a = rng();
        std::uint64_t const b = rng();
        std::uint64_t const c = rng();
        words.push_back(a);
        words.push_back(a & b);
        words.push_back(a & b & c);
        words.push_back(a | b);
        words.push_back(a | b | c);
    }
    return words;
}

void check_select(unsigned (*sel)(std::uint64_t, unsigned), unsigned const max_k,
                  char const * const what)
{
    for (std::uint64_t const w : test_words())
    {
        for (unsigned k = 0; k <= max_k; ++k)
        {
            ASSERT_EQ(sel(w, k), naive_select(w, k))
                << what << ": w = " << std::hex << w << std::dec << ", k = " << k;
        }
    }
}

} // namespace

// Portable select: every k up to 127 (its precondition), so also k >= popcount and k >= 64 give 64.
TEST(QuotientIsa, PortableSelectMatchesNaive)
{
    check_select(&ksieve::detail::qf_select64_portable, 127, "portable");
}

// The select each copy of the hot paths uses (k < 64 at every call site).
TEST(QuotientIsa, KernelSelectMatchesNaive)
{
    for (simd_level const level : ksieve::test::distinct_copies(ksieve::detail::qf_kernel_tables))
    {
        check_select(ksieve::detail::qf_kernel_tables[static_cast<int>(level)].select64, 63,
                     ksieve::test::simd_level_label(level));
    }
}

// The automatic choice: KSIEVE_SIMD=generic forces the generic copies, KSIEVE_SIMD=x86-64-v3
// keeps the AVX-512 ones off; without them the CPU's level is chosen; forcing an unsupported level
// falls back to the generic one. The quotient filter's entries follow the level.
TEST(QuotientIsa, EnvironmentAndForcing)
{
    using ksieve::detail::active_simd_level;
    using ksieve::detail::simd_level_supported;
    auto const qf_level = []
    { return &ksieve::detail::qf_kernels() - ksieve::detail::qf_kernel_tables; };
    ASSERT_EQ(::setenv("KSIEVE_SIMD", "generic", 1), 0);
    ksieve::detail::reset_simd_level();
    EXPECT_EQ(active_simd_level(), simd_level::generic);
    EXPECT_EQ(qf_level(), 0);
    ASSERT_EQ(::unsetenv("KSIEVE_SIMD"), 0);
    ksieve::detail::reset_simd_level();
    EXPECT_EQ(active_simd_level(), ksieve::detail::cpu_simd_level());
    for (simd_level const level : ksieve::test::all_simd_levels)
    {
        ksieve::detail::force_simd_level(level);
        simd_level const want = simd_level_supported(level) ? level : simd_level::generic;
        EXPECT_EQ(active_simd_level(), want) << ksieve::test::simd_level_label(level);
        EXPECT_EQ(qf_level(), static_cast<int>(want))
            << "forced: the pdep select whatever its speed";
    }
    // KSIEVE_SIMD=x86-64-v3 keeps the AVX-512 kernels off (and the x86-64-v3 ones on where the CPU
    // has them)
    ASSERT_EQ(::setenv("KSIEVE_SIMD", "x86-64-v3", 1), 0);
    ksieve::detail::reset_simd_level();
    EXPECT_NE(active_simd_level(), simd_level::x86_64_v4);
    if (simd_level_supported(simd_level::x86_64_v3))
    {
        EXPECT_EQ(active_simd_level(), simd_level::x86_64_v3);
    }
    ASSERT_EQ(::unsetenv("KSIEVE_SIMD"), 0);
    ksieve::detail::reset_simd_level();
}

namespace
{

class QuotientIsaPath : public ksieve::test::simd_copy_fixture<ksieve::detail::qf_kernel_tables>
{
};

// Single-key and batch operations mixed, checked against the oracle with both count() and
// count_batch().
void check_counts(quotient_filter const & f,
                  std::unordered_map<std::uint64_t, std::uint64_t> const & oracle,
                  std::span<std::uint64_t const> const absent)
{
    std::vector<std::uint64_t> keys;
    std::vector<std::uint64_t> want;
    for (auto const & [k, c] : oracle)
    {
        keys.push_back(k);
        want.push_back(c);
    }
    for (std::uint64_t const k : absent)
    {
        if (oracle.count(k) == 0)
        {
            keys.push_back(k);
            want.push_back(0);
        }
    }
    std::vector<std::uint64_t> out(keys.size());
    f.count_batch(keys, out.data());
    for (std::size_t i = 0; i < keys.size(); ++i)
    {
        ASSERT_EQ(out[i], want[i]) << "count_batch, key " << keys[i];
        ASSERT_EQ(f.count(keys[i]), want[i]) << "count, key " << keys[i];
    }
    std::uint64_t total = 0;
    for (auto const c : want)
        total += c;
    EXPECT_EQ(f.distinct(), oracle.size());
    EXPECT_EQ(f.total_count(), total);
}

} // namespace

INSTANTIATE_TEST_SUITE_P(Isa, QuotientIsaPath, ::testing::ValuesIn(ksieve::test::all_simd_levels),
                         ksieve::test::simd_level_name);

// Exact filters at fixed geometry filled to 95% by batches with duplicates, for byte-aligned and
// odd remainder widths (the SWAR run scan and the chunked slot moves differ between them).
TEST_P(QuotientIsaPath, ExactBatchesTo95Percent)
{
    for (unsigned const r : {4u, 8u, 13u, 16u})
    {
        unsigned const q = 16 - scale_shift;
        auto f = quotient_filter::with_geometry(q + r, q, r, 1.0, false);
        std::uint64_t const kmask = (std::uint64_t{1} << (q + r)) - 1;
        std::mt19937_64 rng{r};
        std::unordered_map<std::uint64_t, std::uint64_t> oracle;
        std::vector<std::uint64_t> batch;
        std::vector<std::uint64_t> seen;
        auto const goal = static_cast<std::uint64_t>(0.95 * static_cast<double>(f.slots()));
        while (f.used_slots() + 2048 < goal)
        {
            batch.clear();
            for (unsigned i = 0; i < 1024; ++i)
            {
                bool const dup = !seen.empty() && rng() % 4 == 0;
                std::uint64_t const key = dup ? seen[rng() % seen.size()] : (rng() & kmask);
                batch.push_back(key);
                if (oracle[key]++ == 0)
                    seen.push_back(key);
            }
            ASSERT_EQ(f.insert_batch(batch), insert_status::ok) << "r = " << r;
            std::uint64_t const key = rng() & kmask;
            std::uint64_t const c = 1 + rng() % 1000;
            ASSERT_EQ(f.insert(key, c), insert_status::ok);
            if (oracle[key] == 0)
                seen.push_back(key);
            oracle[key] += c;
        }
        std::vector<std::uint64_t> absent(20000);
        for (auto & k : absent)
            k = rng() & kmask;
        check_counts(f, oracle, absent);
        if (HasFatalFailure())
            return;
    }
}

// count_keys of a sharded exact filter (one pipeline across the shards) equals the exact multiset
// oracle for present and absent keys: 1 and 8 shards, tables of a power of two and fitted (any
// multiple of 64 home slots), keys inserted once and several times; and shards of different sizes
// (most keys in one shard, which grows), where the pipeline cannot share one geometry.
TEST_P(QuotientIsaPath, ShardedCountKeysEqualsTheOracle)
{
    for (unsigned const shard_bits : {0u, 3u})
        for (int const shape : {0, 1, 2}) // power of two, fitted, skewed
        {
            bool const fitted = shape == 1;
            bool const skewed = shape == 2;
            filter_config cfg;
            cfg.kmer.k = 31;
            cfg.fpr = 0.0;
            cfg.expected = 40000;
            cfg.shard_bits = shard_bits;
            auto f = ksieve::make_filter(cfg);
            std::uint64_t const kmask = ksieve::kmer_mask(31);
            std::mt19937_64 rng{shard_bits * 3 + static_cast<unsigned>(shape)};
            std::unordered_map<std::uint64_t, std::uint64_t> oracle;
            std::vector<std::uint64_t> keys;
            // skewed: 9 keys in 10 in the shard of the top bits 0
            std::uint64_t const low = kmask >> shard_bits;
            for (int i = 0; i < 30000; ++i)
            {
                std::uint64_t const fresh =
                    skewed && rng() % 10 != 0 ? (rng() & low) : (rng() & kmask);
                std::uint64_t const key =
                    !keys.empty() && rng() % 5 == 0 ? keys[rng() % keys.size()] : fresh;
                ASSERT_EQ(f->insert(key), insert_status::ok);
                if (oracle[key]++ == 0)
                    keys.push_back(key);
            }
            if (fitted)
                ksieve::fit_filter(*f);
            for (int i = 0; i < 20000; ++i)
                keys.push_back(rng() & kmask); // absent, nearly all
            std::vector<std::uint64_t> got(keys.size());
            ASSERT_TRUE(f->count_keys(keys, got.data()));
            for (std::size_t i = 0; i < keys.size(); ++i)
            {
                auto const it = oracle.find(keys[i]);
                ASSERT_EQ(got[i], it == oracle.end() ? 0 : it->second)
                    << "key " << i << " shards " << (1u << shard_bits) << " shape " << shape;
            }
        }
}

// Growing exact filter (62-bit keys) and a fingerprint filter: no undercount, exact in exact mode.
TEST_P(QuotientIsaPath, GrowingExactAndFingerprint)
{
    filter_config cfg;
    cfg.fpr = 0;
    auto f = quotient_filter::create(cfg, 62, 0);
    cfg.fpr = 0.01;
    auto g = quotient_filter::create(cfg, 62, 0);
    std::mt19937_64 rng{7};
    std::unordered_map<std::uint64_t, std::uint64_t> oracle;
    std::vector<std::uint64_t> batch;
    std::size_t const n = std::size_t{300000} >> scale_shift;
    for (std::size_t i = 0; i < n; ++i)
    {
        std::uint64_t const key = rng() & ((std::uint64_t{1} << 62) - 1);
        batch.push_back(key);
        batch.push_back(key ^ 1);
        oracle[key] += 1;
        oracle[key ^ 1] += 1;
        if (batch.size() >= 4096)
        {
            ASSERT_EQ(f.insert_batch(batch), insert_status::ok);
            ASSERT_EQ(g.insert_batch(batch), insert_status::ok);
            batch.clear();
        }
    }
    ASSERT_EQ(f.insert_batch(batch), insert_status::ok);
    ASSERT_EQ(g.insert_batch(batch), insert_status::ok);
    std::vector<std::uint64_t> absent(20000);
    for (auto & k : absent)
        k = rng() & ((std::uint64_t{1} << 62) - 1);
    check_counts(f, oracle, absent);
    std::vector<std::uint64_t> keys;
    for (auto const & [k, c] : oracle)
        keys.push_back(k);
    std::vector<std::uint64_t> out(keys.size());
    g.count_batch(keys, out.data());
    for (std::size_t i = 0; i < keys.size(); ++i)
        ASSERT_GE(out[i], oracle[keys[i]]) << "fingerprint mode undercount";
}

// Regression: inserting many duplicates of few keys into a filter created for tiny keys without an
// expected count (create(cfg, key_bits <= 10, 0)) once hung in the insert path. Every count is
// checked.
TEST_P(QuotientIsaPath, TinyKeySpaceManyDuplicatesTerminates)
{
    for (unsigned const key_bits : {1u, 2u, 4u, 7u, 10u})
        for (double const fpr : {0.0, 0.01})
        {
            filter_config cfg;
            cfg.fpr = fpr;
            auto f = quotient_filter::create(cfg, key_bits, 0);
            std::uint64_t const kmask = (std::uint64_t{1} << key_bits) - 1;
            std::mt19937_64 rng{key_bits};
            std::unordered_map<std::uint64_t, std::uint64_t> oracle;
            std::vector<std::uint64_t> batch;
            for (unsigned round = 0; round < 40; ++round)
            {
                batch.clear();
                for (unsigned i = 0; i < 2000; ++i)
                {
                    // Skewed: a few keys get most of the occurrences.
                    std::uint64_t const key = (rng() % 3 == 0 ? rng() : rng() % 5) & kmask;
                    batch.push_back(key);
                    ++oracle[key];
                }
                ASSERT_EQ(f.insert_batch(batch), insert_status::ok)
                    << key_bits << " bits, round " << round;
                std::uint64_t const key = rng() & kmask;
                ASSERT_EQ(f.insert(key, 3), insert_status::ok);
                oracle[key] += 3;
            }
            EXPECT_TRUE(f.exact());
            check_counts(f, oracle, {});
            if (HasFatalFailure())
                return;
        }
}

// Every copy builds the generic copy's table from the same keys, byte for byte (the layout is
// canonical), and answers the same.
TEST(QuotientIsa, CopiesBuildIdenticalTables)
{
    auto const levels = ksieve::test::distinct_copies(ksieve::detail::qf_kernel_tables);
    if (levels.size() < 2)
        GTEST_SKIP() << "one copy only";
    std::mt19937_64 rng{99};
    // Uniform keys (as hashed k-mers are), drawn with repetition from a pool: many counters.
    std::vector<std::uint64_t> pool(std::size_t{50000} >> scale_shift);
    for (auto & k : pool)
        k = rng() % (std::uint64_t{1} << 26);
    std::vector<std::uint64_t> keys(std::size_t{200000} >> scale_shift);
    for (auto & k : keys)
        k = pool[rng() % pool.size()];
    std::vector<std::uint64_t> queries(keys.begin(),
                                       keys.begin() + static_cast<std::ptrdiff_t>(keys.size() / 4));
    for (std::size_t i = 0; i < keys.size() / 4; ++i)
        queries.push_back(rng() % (std::uint64_t{1} << 26));
    filter_config cfg;
    cfg.fpr = 0;
    std::vector<std::vector<std::uint64_t>> words;
    std::vector<std::vector<std::uint64_t>> answers;
    for (simd_level const level : levels)
    {
        ksieve::detail::force_simd_level(level);
        auto f = quotient_filter::create(cfg, 26, 0);
        ASSERT_EQ(f.insert_batch(keys), insert_status::ok);
        for (std::size_t i = 0; i < 1000; ++i)
            ASSERT_EQ(f.insert(keys[i], 5), insert_status::ok);
        auto const w = f.words();
        words.emplace_back(w.begin(), w.end());
        std::vector<std::uint64_t> out(queries.size());
        f.count_batch(queries, out.data());
        answers.push_back(out);
    }
    ksieve::detail::reset_simd_level();
    for (std::size_t i = 1; i < levels.size(); ++i)
    {
        EXPECT_TRUE(words[0] == words[i]) << "tables differ between the generic and the "
                                          << ksieve::test::simd_level_label(levels[i]) << " copy";
        EXPECT_TRUE(answers[0] == answers[i]) << ksieve::test::simd_level_label(levels[i]);
    }
}
