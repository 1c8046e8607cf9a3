// table_counting_filter against a plain quotient filter of the same parameters (the oracle): the
// same operations give the same counts, old counts and statistics, whether the shards stay in their
// tables or move into the quotient filter along the way, and the settled filter saves to the same
// bytes.
#include <ksieve/filters/quotient/table_counting_filter.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <unistd.h>

namespace
{

ksieve::filter_config config(unsigned const k, double const fpr, unsigned const shard_bits)
{
    ksieve::filter_config cfg;
    cfg.kmer.k = k;
    cfg.fpr = fpr;
    cfg.shard_bits = shard_bits;
    return cfg; // expected 0: a growing filter
}

std::string file_bytes(std::filesystem::path const & path)
{
    std::ifstream in{path, std::ios::binary};
    return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

// Rounds of batched additions (per shard, with old counts), single insertions with counts, removals
// and lookups of every kind, on both filters; every answer is compared.
void run_against_oracle(ksieve::filter_config const & cfg, std::uint64_t const cap_bytes,
                        bool const expect_moves)
{
    auto oracle = ksieve::make_filter(cfg);
    ksieve::table_counting_filter f{ksieve::make_filter(cfg), cap_bytes};
    ASSERT_EQ(f.table_shards(), f.num_shards());
    std::mt19937_64 rng{11};
    std::uint64_t const key_mask = (std::uint64_t{1} << cfg.kmer.key_bits()) - 1;
    std::vector<std::uint64_t> pool(60000);
    for (auto & k : pool)
        k = rng() & key_mask;
    std::vector<std::uint64_t> added;
    for (int round = 0; round < 40; ++round)
    {
        std::vector<std::vector<std::uint64_t>> by_shard(f.num_shards());
        std::size_t const n = 1 + rng() % 6000;
        for (std::size_t i = 0; i < n; ++i)
        {
            // a growing set of keys, with repeats
            std::uint64_t const key = pool[rng() % (1500 * (round + 1))];
            by_shard[f.shard_of(key)].push_back(f.local_key(key));
            added.push_back(key);
        }
        for (std::size_t s = 0; s < by_shard.size(); ++s)
        {
            std::vector<std::uint64_t> old_f(by_shard[s].size()), old_o(by_shard[s].size());
            ASSERT_EQ(f.add_batch(s, by_shard[s], old_f.data()), ksieve::insert_status::ok);
            ASSERT_EQ(oracle->add_batch(s, by_shard[s], old_o.data()), ksieve::insert_status::ok);
            ASSERT_EQ(old_f, old_o) << "round " << round << " shard " << s;
        }
        for (int i = 0; i < 50; ++i)
        {
            std::uint64_t const key = pool[rng() % pool.size()];
            std::uint64_t const c = 1 + rng() % 3;
            ASSERT_EQ(f.insert(key, c), oracle->insert(key, c));
            added.insert(added.end(), c, key);
        }
        // removals: one copy, or every copy (the entry leaves the table)
        for (int i = 0; i < 300 && !added.empty(); ++i)
        {
            std::uint64_t const key = added[rng() % added.size()];
            std::uint64_t const c = rng() % 2 == 0 ? 1 : oracle->count(key);
            ASSERT_EQ(f.remove(key, c), oracle->remove(key, c));
        }
        std::vector<std::uint64_t> probe(2000);
        for (auto & k : probe)
            k = rng() % 2 == 0 ? pool[rng() % pool.size()] : rng() & key_mask;
        std::vector<std::uint64_t> got(probe.size()), want(probe.size());
        if (f.count_keys(probe, got.data()))
        {
            for (std::size_t i = 0; i < probe.size(); ++i)
                want[i] = oracle->count(probe[i]);
            ASSERT_EQ(got, want) << "round " << round;
        }
        for (std::uint64_t const key : probe)
            ASSERT_EQ(f.count(key), oracle->count(key));
        for (std::size_t s = 0; s < f.num_shards(); ++s)
        {
            std::vector<std::uint64_t> local;
            for (std::uint64_t const key : probe)
                if (f.shard_of(key) == s)
                    local.push_back(f.local_key(key));
            std::vector<std::uint64_t> a(local.size()), b(local.size());
            f.count_batch(s, local, a.data());
            oracle->count_batch(s, local, b.data());
            ASSERT_EQ(a, b);
        }
        ASSERT_EQ(f.stats().distinct, oracle->stats().distinct);
        ASSERT_EQ(f.stats().total_count, oracle->stats().total_count);
    }
    EXPECT_EQ(f.table_shards() < f.num_shards(), expect_moves);
    auto const dir = std::filesystem::temp_directory_path();
    auto const a = dir / ("ksieve_table_" + std::to_string(::getpid()) + ".ksf");
    auto const b = dir / ("ksieve_oracle_" + std::to_string(::getpid()) + ".ksf");
    if (f.table_shards() != 0)
        EXPECT_THROW(f.save(a), ksieve::error); // counts still in tables
    f.settle();
    EXPECT_EQ(f.table_shards(), 0u);
    ksieve::fit_filter(f);
    ksieve::fit_filter(*oracle);
    f.save(a);
    oracle->save(b);
    EXPECT_EQ(file_bytes(a), file_bytes(b));
    std::filesystem::remove(a);
    std::filesystem::remove(b);
}

TEST(table_counting_filter, equals_a_quotient_filter_while_in_tables)
{
    run_against_oracle(config(15, 0.01, 2), std::uint64_t{1} << 30, false);
}

TEST(table_counting_filter, equals_a_quotient_filter_across_moves)
{
    // 64 KiB tables hold about 6500 fingerprints: the shards move along the way
    run_against_oracle(config(15, 0.01, 2), std::uint64_t{64} << 10, true);
}

TEST(table_counting_filter, equals_an_exact_quotient_filter)
{
    run_against_oracle(config(13, 0.0, 1), std::uint64_t{1} << 30, false);
}

// 29-mers in 4 shards: exact 56-bit fingerprints leave 8 bits for a count, so a count above 255
// moves the shard, and the count goes on in the quotient filter.
TEST(table_counting_filter, a_count_beyond_its_field_moves_the_shard)
{
    ksieve::table_counting_filter f{ksieve::make_filter(config(29, 0.0, 2)),
                                    std::uint64_t{1} << 30};
    ASSERT_EQ(f.table_shards(), 4u);
    std::uint64_t const key = 0x123456789abULL;
    std::vector<std::uint64_t> keys(300, f.local_key(key)), old(300);
    ASSERT_EQ(f.add_batch(f.shard_of(key), keys, old.data()), ksieve::insert_status::ok);
    for (std::uint64_t i = 0; i < old.size(); ++i)
        ASSERT_EQ(old[i], i);
    EXPECT_EQ(f.count(key), 300u);
    EXPECT_EQ(f.table_shards(), 3u);
    EXPECT_TRUE(f.remove(key, 299));
    EXPECT_EQ(f.count(key), 1u);
}

// Fingerprints too wide for a count beside them: every shard is in the quotient filter from the
// start, and the filter is the quotient filter.
TEST(table_counting_filter, wide_fingerprints_start_in_the_quotient_filter)
{
    ksieve::table_counting_filter f{ksieve::make_filter(config(31, 0.0, 0)),
                                    std::uint64_t{1} << 30};
    EXPECT_EQ(f.table_shards(), 0u);
    EXPECT_EQ(f.insert(42, 2), ksieve::insert_status::ok);
    EXPECT_EQ(f.count(42), 2u);
}

} // namespace
