// Quotient filter <-> filter file: save through sharded_filter, mmap through mapped_filter_file,
// query the read-only views; params()/view() validation; garbage never crashes.
#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>
#include <ksieve/filters/support/error.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <unistd.h>
#include <unordered_map>
#include <vector>

using ksieve::filter_config;
using ksieve::insert_status;
using ksieve::quotient_filter;
using qf_sharded = ksieve::sharded_filter<quotient_filter>;

static_assert(ksieve::shard_filter<quotient_filter>);

namespace
{

#ifdef KSIEVE_SANITIZED
constexpr std::size_t file_keys = 100000;
#else
constexpr std::size_t file_keys = 1000000;
#endif

class temp_file
{
public:
    explicit temp_file(std::string const & tag)
        : path_{std::filesystem::temp_directory_path() /
                ("ksieve-qf-" + tag + "-" + std::to_string(::getpid()) + ".ksf")}
    {
    }
    ~temp_file()
    {
        std::error_code ec;
        std::filesystem::remove(path_, ec);
    }
    std::filesystem::path const & path() const { return path_; }

private:
    std::filesystem::path path_;
};

std::map<std::uint64_t, std::uint64_t> contents(quotient_filter const & f)
{
    std::map<std::uint64_t, std::uint64_t> m;
    f.for_each([&](std::uint64_t const v, std::uint64_t const c) { m[v] = c; });
    return m;
}

void round_trip(double const fpr, unsigned const shard_bits, unsigned const k)
{
    filter_config cfg;
    cfg.kmer.k = k;
    cfg.fpr = fpr;
    cfg.shard_bits = shard_bits;
    qf_sharded f{cfg};
    std::mt19937_64 rng{shard_bits * 100 + k};
    std::uint64_t const mask = ksieve::kmer_mask(k);
    std::unordered_map<std::uint64_t, std::uint64_t> oracle;
    for (std::size_t i = 0; i < file_keys; ++i)
    {
        std::uint64_t const key = rng() & mask;
        std::uint64_t const c = i % 10 == 0 ? 1 + rng() % 100000 : 1;
        ASSERT_EQ(f.insert(key, c), insert_status::ok);
        oracle[key] += c;
    }
    temp_file tf{"rt" + std::to_string(shard_bits)};
    f.save(tf.path());
    auto const mapped = ksieve::mapped_filter_file::open(tf.path());
    EXPECT_EQ(mapped->header().type, ksieve::filter_type::quotient);
    qf_sharded const v{mapped};
    ASSERT_EQ(v.num_shards(), f.num_shards());
    for (std::size_t s = 0; s < v.num_shards(); ++s)
    {
        quotient_filter const & a = f.shard(s);
        quotient_filter const & b = v.shard(s);
        EXPECT_TRUE(b.is_view());
        // No copy: the view reads the mapped payload itself.
        EXPECT_EQ(b.words().data(), mapped->shards()[s].words.data());
        EXPECT_EQ(a.params(), b.params());
        EXPECT_EQ(contents(a), contents(b));
        auto const sa = a.stats();
        auto const sb = b.stats();
        EXPECT_EQ(sa.used, sb.used);
        EXPECT_EQ(sa.distinct, sb.distinct);
        EXPECT_EQ(sa.total_count, sb.total_count);
        EXPECT_EQ(sa.bytes, sb.bytes);
    }
    // Identical answers for present and absent keys, single and batched.
    std::vector<std::uint64_t> queries;
    for (auto const & [key, c] : oracle)
        queries.push_back(key);
    for (std::size_t i = 0; i < file_keys; ++i)
        queries.push_back(rng() & mask);
    for (auto const key : queries)
    {
        std::uint64_t const cv = v.count(key);
        ASSERT_EQ(cv, f.count(key));
        auto const it = oracle.find(key);
        std::uint64_t const truth = it == oracle.end() ? 0 : it->second;
        if (fpr == 0)
            ASSERT_EQ(cv, truth);
        else
            ASSERT_GE(cv, truth);
    }
    std::vector<std::vector<std::uint64_t>> per_shard(v.num_shards());
    for (auto const key : queries)
        per_shard[v.shard_of(key)].push_back(v.local_key(key));
    for (std::size_t s = 0; s < v.num_shards(); ++s)
    {
        std::vector<std::uint64_t> out_v(per_shard[s].size()), out_f(per_shard[s].size());
        v.count_batch(s, per_shard[s], out_v.data());
        f.count_batch(s, per_shard[s], out_f.data());
        ASSERT_EQ(out_v, out_f);
    }
    // A view refuses modification; its clone is an owning, mutable copy with the same answers.
    EXPECT_EQ(v.shard(0).clone().params(), f.shard(0).params());
    auto c = v.clone();
    std::uint64_t const key = queries.front();
    std::uint64_t const before = c->count(key);
    ASSERT_EQ(c->insert(key, 5), insert_status::ok);
    EXPECT_EQ(c->count(key), before + 5);
    EXPECT_EQ(v.count(key), before);
}

} // namespace

TEST(QuotientFile, RoundTripExactSharded)
{
    round_trip(0.0, 2, 31);
}
TEST(QuotientFile, RoundTripFingerprint)
{
    round_trip(0.001, 0, 31);
}
TEST(QuotientFile, RoundTripSmallK)
{
    round_trip(0.0, 1, 9);
}

// A set operation written shard by shard as it is made (combine_filters_into) gives the filter that
// combine_filters() returns: the same shards, parameters, words and statistics, from inputs mapped
// from files (pages given back as they are passed), for any thread count; a file of shards that are
// all 2^q home slots (fewer parameters than the room kept for them) is still read.
TEST(QuotientFile, StreamedSetOperationsEqualTheFilterInMemory)
{
    for (double const fpr : {0.0, 0.001})
    {
        filter_config cfg;
        cfg.fpr = fpr;
        cfg.shard_bits = 3;
        std::vector<temp_file> files;
        files.reserve(3); // (a temp_file removes its file when destroyed: no reallocation)
        std::mt19937_64 rng{42};
        for (int i = 0; i < 3; ++i)
        {
            qf_sharded f{cfg};
            for (std::size_t j = 0; j < file_keys / 4; ++j)
            {
                std::uint64_t const key =
                    (j % 3 == 0 ? j * 0x9E3779B97F4A7C15ULL : rng()) & ksieve::kmer_mask(31);
                ASSERT_EQ(f.insert(key, 1 + (j % 7 == 0 ? rng() % 1000 : 0)), insert_status::ok);
            }
            files.emplace_back("in" + std::to_string(i));
            f.save(files.back().path());
        }
        std::vector<std::unique_ptr<ksieve::any_filter>> owned;
        std::vector<ksieve::any_filter const *> inputs;
        std::vector<std::string> const names{"a", "b", "c"};
        for (auto const & tf : files)
        {
            owned.push_back(ksieve::load_filter(tf.path()));
            inputs.push_back(owned.back().get());
        }
        for (auto const op : {ksieve::set_operation::unite, ksieve::set_operation::intersect,
                              ksieve::set_operation::subtract})
            for (unsigned const threads : {1u, 3u})
                for (std::uint64_t const min_count : {std::uint64_t{1}, std::uint64_t{1} << 40})
                {
                    // (a min count above every count: empty shards of 2^9 home slots, 11 parameters
                    // each)
                    auto const whole =
                        ksieve::combine_filters(inputs, names, op, min_count, threads);
                    temp_file out{"streamed"};
                    ksieve::filter_stats const st = ksieve::combine_filters_into(
                        out.path(), inputs, names, op, min_count, threads);
                    if (min_count > 1)
                    {
                        EXPECT_LT(static_cast<qf_sharded const &>(*whole).shard(0).params().size(),
                                  quotient_filter::max_param_count);
                    }
                    auto const mapped = ksieve::mapped_filter_file::open(out.path());
                    qf_sharded const v{mapped};
                    auto const & w = static_cast<qf_sharded const &>(*whole);
                    ASSERT_EQ(v.num_shards(), w.num_shards());
                    for (std::size_t sh = 0; sh < v.num_shards(); ++sh)
                    {
                        EXPECT_EQ(v.shard(sh).params(), w.shard(sh).params());
                        auto const a = v.shard(sh).words();
                        auto const b = w.shard(sh).words();
                        ASSERT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()))
                            << "shard " << sh;
                    }
                    EXPECT_EQ(st.distinct, whole->stats().distinct);
                    EXPECT_EQ(st.used, whole->stats().used);
                    EXPECT_EQ(st.bytes, whole->stats().bytes);
                    EXPECT_EQ(v.stats().distinct, st.distinct);
                    EXPECT_EQ(mapped->header().fpr, cfg.fpr);
                    EXPECT_EQ(mapped->header().kmer, inputs[0]->kmer());
                }
    }
}

TEST(QuotientFile, ViewRefusesMutation)
{
    auto f = quotient_filter::with_geometry(40, 10, 30); // exact
    ASSERT_EQ(f.insert(77, 3), insert_status::ok);
    auto const params = f.params();
    auto v = quotient_filter::view(params, f.words(), 40);
    EXPECT_EQ(v.count(77), 3u);
    EXPECT_EQ(v.insert(78), insert_status::full);
    EXPECT_EQ(v.insert_concurrent(78), insert_status::full);
    std::vector<std::uint64_t> const batch{1, 2, 3};
    EXPECT_EQ(v.insert_batch(batch), insert_status::full);
    EXPECT_FALSE(v.remove(77));
    EXPECT_FALSE(v.resize(11));
    EXPECT_EQ(v.count(77), 3u);
    EXPECT_EQ(v.count(78), 0u);
}

// Every single-field corruption of the parameters is refused with format_error (or, if it happens
// to describe a consistent filter, gives a working view); wrong payload sizes are refused.
TEST(QuotientFile, GarbageParamsThrowFormatError)
{
    auto f = quotient_filter::with_geometry(40, 12, 20);
    std::mt19937_64 rng{1};
    for (int i = 0; i < 3000; ++i)
        ASSERT_EQ(f.insert(rng() & ((std::uint64_t{1} << 40) - 1)), insert_status::ok);
    auto const good = f.params();
    auto const words = f.words();
    EXPECT_NO_THROW((void)quotient_filter::view(good, words, 40));
    EXPECT_THROW((void)quotient_filter::view(good, words, 41), ksieve::format_error);
    EXPECT_THROW((void)quotient_filter::view(good, words.first(words.size() - 1), 40),
                 ksieve::format_error);
    EXPECT_THROW((void)quotient_filter::view({good.data(), good.size() - 1}, words, 40),
                 ksieve::format_error);
    std::vector<std::uint64_t> longer = good;
    longer.push_back(0);
    EXPECT_THROW((void)quotient_filter::view(longer, words, 40), ksieve::format_error);
    EXPECT_THROW((void)quotient_filter::view({}, {}, 40), ksieve::format_error);
    std::vector<std::uint64_t> const specials = {0,
                                                 1,
                                                 2,
                                                 5,
                                                 6,
                                                 7,
                                                 31,
                                                 32,
                                                 48,
                                                 49,
                                                 57,
                                                 58,
                                                 63,
                                                 64,
                                                 65,
                                                 255,
                                                 std::uint64_t{1} << 32,
                                                 ~std::uint64_t{0},
                                                 std::bit_cast<std::uint64_t>(0.0),
                                                 std::bit_cast<std::uint64_t>(-1.0),
                                                 std::bit_cast<std::uint64_t>(1.5)};
    std::size_t accepted = 0;
    for (std::size_t field = 0; field < good.size(); ++field)
    {
        std::vector<std::uint64_t> vals = specials;
        for (int i = 0; i < 20; ++i)
            vals.push_back(rng());
        for (std::uint64_t const val : vals)
        {
            std::vector<std::uint64_t> p = good;
            p[field] = val;
            try
            {
                auto const v = quotient_filter::view(p, words, 40);
                ++accepted;
                // Accepted: it must answer without crashing.
                for (std::uint64_t k = 0; k < 200; ++k)
                    (void)v.count(k * 7919);
                std::size_t n = 0;
                v.for_each([&](std::uint64_t, std::uint64_t) { ++n; });
            }
            catch (ksieve::format_error const &)
            {
            }
        }
    }
    EXPECT_GT(accepted, 0u); // e.g. the counts and the auto-grow flag are free values
}

// Random payload words under valid parameters (a corrupted file read with verification off):
// queries, batches and iteration stay in bounds and terminate.
TEST(QuotientFile, GarbageWordsDoNotCrash)
{
    std::mt19937_64 rng{99};
    for (unsigned const r : {3u, 8u, 21u})
    {
        auto f = quotient_filter::with_geometry(40, 10, r);
        std::vector<std::uint64_t> junk(f.words().size());
        for (int round = 0; round < 20; ++round)
        {
            for (auto & w : junk)
                w = round % 2 == 0 ? rng() : (rng() & rng() & rng()); // dense and sparse garbage
            auto const v = quotient_filter::view(f.params(), junk, 40);
            std::vector<std::uint64_t> keys(2000);
            for (auto & k : keys)
                k = rng() & ((std::uint64_t{1} << 40) - 1);
            std::vector<std::uint64_t> out(keys.size());
            v.count_batch(keys, out.data());
            for (std::size_t i = 0; i < keys.size(); ++i)
                ASSERT_EQ(out[i], v.count(keys[i]));
            std::size_t n = 0;
            v.for_each([&](std::uint64_t, std::uint64_t) { ++n; });
            EXPECT_LE(n, v.slots() * 2);
            auto m = v.clone();
            (void)m.count(keys[0]);
        }
    }
}
