// Set operations over quotient filters of different layouts (shard counts and fingerprint widths,
// as filters sized for their own inputs have): the inputs moved to the narrowest layout hold
// exactly the fingerprints and counts of per-key insertion into that layout, and the result has the
// same bytes; the ordered builder those moves use; and the stop request (cancel.hpp) that the long
// loops act on.
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/quotient/quotient_builder.hpp>
#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace ksieve;

namespace
{

using contents =
    std::map<std::pair<std::size_t, std::uint64_t>, std::uint64_t>; // (shard, value) -> count

constexpr unsigned key_bits = 62; // k = 31

filter_config layout(double const fpr, std::uint64_t const expected, unsigned const shard_bits)
{
    filter_config cfg;
    cfg.kmer.k = 31;
    cfg.fpr = fpr;
    cfg.expected = expected;
    cfg.shard_bits = shard_bits;
    return cfg;
}

sharded_filter<quotient_filter> const & as_quotient(any_filter const & f)
{
    return static_cast<sharded_filter<quotient_filter> const &>(f);
}

contents contents_of(any_filter const & f)
{
    contents m;
    auto const & q = as_quotient(f);
    for (std::size_t s = 0; s < f.num_shards(); ++s)
        q.shard(s).for_each([&](std::uint64_t const v, std::uint64_t const c) { m[{s, v}] += c; });
    return m;
}

// n keys, a third shared between seeds, some with counts above 1 (a few above 255 and far above).
std::vector<std::pair<std::uint64_t, std::uint64_t>> sample(std::size_t const n,
                                                            std::uint64_t const seed)
{
    std::mt19937_64 shared{99};
    std::mt19937_64 own{seed};
    std::vector<std::pair<std::uint64_t, std::uint64_t>> items;
    for (std::size_t i = 0; i < n; ++i)
    {
        std::uint64_t const key = (i % 3 == 0 ? shared() : own()) >> (64 - key_bits);
        std::uint64_t const r = own() % 100;
        items.emplace_back(key, r < 85 ? 1 : r < 98 ? 2 + own() % 200 : 1 + own() % 100000);
    }
    return items;
}

std::unique_ptr<any_filter>
filled(filter_config const & cfg,
       std::vector<std::pair<std::uint64_t, std::uint64_t>> const & items)
{
    auto f = make_filter(cfg);
    for (auto const & [key, count] : items)
        EXPECT_EQ(f->insert(key, count), insert_status::ok);
    return f;
}

// The bits of each key's hash that a quotient filter's fingerprints keep.
unsigned kept_bits_of(any_filter const & f)
{
    auto const & q = as_quotient(f);
    return q.shard(0).exact() ? f.key_bits() : f.shard_bits() + q.shard(0).fingerprint_bits();
}

// The naive move to another layout: each fingerprint of `in`, cut to the kept bits of `cfg`,
// inserted key by key into a filter of that layout.

std::unique_ptr<any_filter> moved_by_insertion(any_filter const & in, filter_config const & cfg)
{
    auto out = make_filter(cfg);
    auto const & src = as_quotient(in);
    auto const & dst = as_quotient(*out);
    unsigned const s_in = in.shard_bits();
    unsigned const s_out = cfg.shard_bits;
    bool const exact_out = dst.shard(0).exact();
    unsigned const p_out = dst.shard(0).fingerprint_bits();
    unsigned const g_out = exact_out ? key_bits : s_out + p_out;
    for (std::size_t i = 0; i < in.num_shards(); ++i)
    {
        quotient_filter const & sh = src.shard(i);
        unsigned const v_bits = sh.exact() ? key_bits - s_in : sh.fingerprint_bits();
        unsigned const g_in = sh.exact() ? key_bits : s_in + sh.fingerprint_bits();
        sh.for_each(
            [&](std::uint64_t const v, std::uint64_t const c)
            {
                std::uint64_t const g = ((std::uint64_t{i} << v_bits) | v) >> (g_in - g_out);
                // (the key of the new layout whose kept bits are g: g at the top, zeros below)
                std::uint64_t const key = exact_out ? g : g << (key_bits - g_out);
                EXPECT_EQ(out->insert(key, c), insert_status::ok);
            });
    }
    return out;
}

std::string file_bytes(std::filesystem::path const & p)
{
    std::ifstream in{p, std::ios::binary};
    return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

class reshard : public ::testing::Test
{
protected:
    void TearDown() override { request_stop(false); }
    std::filesystem::path dir_ = std::filesystem::temp_directory_path() /
                                 ("ksieve-reshard-" + std::to_string(std::random_device{}()));
    void SetUp() override { std::filesystem::create_directories(dir_); }
    ~reshard() override { std::filesystem::remove_all(dir_); }
};

struct layout_case
{
    char const * what;
    filter_config wide;   // the input of more kept bits (moved)
    filter_config narrow; // the layout of the result
};

} // namespace

// Unequal layouts in both directions (more shards to fewer, fewer to more) and exact filters of
// different shard counts: the result holds exactly the contents of the narrow layout built from
// every key, and has the bytes of the merge of the narrow input with the wide one moved to its
// layout by per-key insertion.
TEST_F(reshard, unequal_layouts_combine_as_per_key_insertion_into_the_narrowest)
{
    std::vector<layout_case> const cases{
        {"16 wide shards into 1", layout(0.001, 400000, 4), layout(0.001, 3000, 0)},
        {"1 wide shard into 8", layout(0.01, 1000000, 0), layout(0.01, 20000, 3)},
        {"exact, 16 shards into 4", layout(0.0, 0, 4), layout(0.0, 0, 2)},
        {"unknown size, 64 shards into 2", layout(0.0001, 0, 6), layout(0.0001, 20000, 1)},
    };
    for (auto const & c : cases)
    {
        SCOPED_TRACE(c.what);
        auto const wide_items = sample(60000, 1);
        auto const narrow_items = sample(5000, 2);
        auto const wide = filled(c.wide, wide_items);
        auto const narrow = filled(c.narrow, narrow_items);
        bool const exact = as_quotient(*wide).shard(0).exact();
        // (the wide filter keeps more bits, else its layout would be the result's)
        ASSERT_TRUE(exact ||
                    wide->shard_bits() + as_quotient(*wide).shard(0).fingerprint_bits() >
                        narrow->shard_bits() + as_quotient(*narrow).shard(0).fingerprint_bits());
        auto all_items = wide_items;
        all_items.insert(all_items.end(), narrow_items.begin(), narrow_items.end());
        for (bool const wide_first : {true, false})
        {
            SCOPED_TRACE(wide_first ? "wide first" : "narrow first");
            // The result's layout: the narrowest input's (exact filters keep every bit: the first
            // input's), with the other's shards where that layout keeps as many bits of each hash.
            filter_config target = exact && wide_first ? c.wide : c.narrow;
            filter_config const & other = exact && wide_first ? c.narrow : c.wide;
            if (other.shard_bits > target.shard_bits)
            {
                filter_config more = target;
                more.shard_bits = other.shard_bits;
                if (kept_bits_of(*filled(more, {})) == kept_bits_of(*filled(target, {})))
                    target.shard_bits = more.shard_bits;
            }
            bool const wide_stays = wide->shard_bits() == target.shard_bits;
            any_filter const & stays = wide_stays ? *wide : *narrow;
            any_filter const & moves = wide_stays ? *narrow : *wide;
            auto const all = filled(target, all_items); // the result's layout built from every key
            std::vector<any_filter const *> const in =
                wide_first ? std::vector<any_filter const *>{wide.get(), narrow.get()}
                           : std::vector<any_filter const *>{narrow.get(), wide.get()};
            std::vector<std::string> const names{"a", "b"};
            for (unsigned const threads : {1u, 3u})
            {
                auto const r = combine_filters(in, names, set_operation::unite, 1, threads);
                EXPECT_EQ(r->shard_bits(), target.shard_bits);
                EXPECT_TRUE(contents_of(*r) == contents_of(*all));
                combine_filters_into(dir_ / ("new" + std::to_string(threads)), in, names,
                                     set_operation::unite, 1, threads);
            }
            // the old way: the other input moved by per-key insertion, then the equal layouts
            // combined
            auto const moved = moved_by_insertion(moves, target);
            std::vector<any_filter const *> const old_in =
                wide_first == !wide_stays ? std::vector<any_filter const *>{moved.get(), &stays}
                                          : std::vector<any_filter const *>{&stays, moved.get()};
            combine_filters_into(dir_ / "old", old_in, names, set_operation::unite, 1, 1);
            EXPECT_TRUE(file_bytes(dir_ / "new1") == file_bytes(dir_ / "old"));
            EXPECT_TRUE(file_bytes(dir_ / "new3") == file_bytes(dir_ / "old"));
            EXPECT_TRUE(contents_of(*load_filter(dir_ / "old")) == contents_of(*all));
            // intersect and subtract move their inputs too
            for (auto const op : {set_operation::intersect, set_operation::subtract,
                                  set_operation::subtract_counts})
            {
                combine_filters_into(dir_ / "new_op", in, names, op, 1, 2);
                combine_filters_into(dir_ / "old_op", old_in, names, op, 1, 1);
                EXPECT_TRUE(file_bytes(dir_ / "new_op") == file_bytes(dir_ / "old_op"))
                    << static_cast<int>(op);
            }
        }
    }
}

// The builder gives the filter of its entries whatever chunks they come in, also where the counters
// take more slots than measured (a retry at a larger table).
TEST_F(reshard, builder_holds_its_entries_whatever_the_chunks_and_retries)
{
    quotient_filter const like = quotient_filter::create(layout(0.001, 0, 0), key_bits, 100000);
    std::mt19937_64 rng{5};
    std::map<std::uint64_t, std::uint64_t> want;
    unsigned const p = like.fingerprint_bits();
    while (want.size() < 50000)
        want[rng() >> (64 - p)] = rng() % 4 == 0 ? 1 + rng() % 1000000 : 1;
    std::vector<quotient_builder::entry> const entries(want.begin(), want.end());
    std::vector<std::uint64_t> first_words;
    for (unsigned const r_ref : {quotient_filter::max_remainder_bits, 2u, 20u})
        for (std::size_t const chunk : {std::size_t{1}, std::size_t{7}, std::size_t{100000}})
        {
            SCOPED_TRACE(std::to_string(r_ref) + " " + std::to_string(chunk));
            quotient_builder b{like.key_bits(), p, like.max_load(), like.auto_grow(), r_ref};
            auto pieces = [&](auto && fn)
            {
                for (std::size_t i = 0; i < entries.size(); i += chunk)
                    fn(std::span<quotient_builder::entry const>{entries}.subspan(
                        i, std::min(chunk, entries.size() - i)));
            };
            pieces([&](auto const e) { b.measure(e); });
            unsigned tries = 0;
            for (bool done = false; !done; ++tries)
            {
                ASSERT_LT(tries, 50u);
                b.start();
                pieces([&](auto const e) { (void)b.append(e); });
                done = b.finish();
            }
            quotient_filter const f = b.take();
            std::map<std::uint64_t, std::uint64_t> got;
            f.for_each([&](std::uint64_t const v, std::uint64_t const c) { got[v] += c; });
            EXPECT_TRUE(got == want);
            EXPECT_LE(static_cast<double>(f.used_slots()),
                      f.max_load() * static_cast<double>(f.slots()));
            if (r_ref == quotient_filter::max_remainder_bits)
            {
                EXPECT_GT(
                    tries,
                    1u); // (counters measured at a wide remainder take more slots than measured)
            }
            else if (r_ref == 20u && chunk == 1)
                first_words.assign(f.words().begin(), f.words().end());
            else if (r_ref == 20u)
            {
                EXPECT_TRUE(std::equal(first_words.begin(), first_words.end(), f.words().begin(),
                                       f.words().end()));
            }
        }
}

// A builder of the table an empty filter grows to by insertion gives the bytes of per-key
// insertion, for distinct estimates off by up to a factor of two.
TEST_F(reshard, builder_of_a_grown_table_gives_the_bytes_of_per_key_insertion)
{
    std::mt19937_64 rng{11};
    for (std::uint64_t const expected :
         {std::uint64_t{0}, std::uint64_t{1000}, std::uint64_t{40000}})
        for (std::size_t const n :
             {std::size_t{0}, std::size_t{300}, std::size_t{30000}, std::size_t{90000}})
        {
            SCOPED_TRACE(std::to_string(expected) + " expected, " + std::to_string(n) + " entries");
            quotient_filter const like =
                quotient_filter::create(layout(0.0001, 0, 0), key_bits, expected);
            unsigned const p = like.fingerprint_bits();
            std::map<std::uint64_t, std::uint64_t> m;
            while (m.size() < n)
                m[rng() >> (64 - p)] =
                    rng() % 5 == 0 ? 2 + rng() % (rng() % 2 == 0 ? 20 : 100000) : 1;
            std::vector<quotient_builder::entry> const entries(m.begin(), m.end());
            quotient_filter inserted = like.clone();
            for (auto const & [fp, count] : entries)
                ASSERT_EQ(inserted.insert(fp << (key_bits - p), count), insert_status::ok);
            for (std::uint64_t const estimate : {n / 2, n, 2 * n})
            {
                quotient_builder b{like, estimate};
                b.measure(entries);
                bool done = false;
                for (unsigned tries = 0; !done && tries < 20; ++tries)
                {
                    b.start();
                    (void)b.append(entries);
                    done = b.finish();
                }
                ASSERT_TRUE(done);
                quotient_filter const f = b.take();
                EXPECT_EQ(f.slots(), inserted.slots()) << estimate;
                EXPECT_TRUE(std::equal(f.words().begin(), f.words().end(), inserted.words().begin(),
                                       inserted.words().end()))
                    << estimate;
            }
        }
}

// A stop request ends re-sharding, the set operations' walks and refitting with interrupted_error
// (exit status 128 + the signal), before a result is written.
TEST_F(reshard, a_stop_request_interrupts_set_operations_and_refitting)
{
    auto const wide = filled(layout(0.001, 400000, 4), sample(40000, 1));
    auto const narrow = filled(layout(0.001, 3000, 0), sample(3000, 2));
    auto const same = filled(layout(0.001, 3000, 0), sample(3000, 3));
    std::vector<std::string> const names{"a", "b"};
    request_stop(true, SIGTERM);
    for (auto const & in : {std::vector<any_filter const *>{wide.get(), narrow.get()},
                            std::vector<any_filter const *>{narrow.get(), same.get()}})
        for (auto const op :
             {set_operation::unite, set_operation::intersect, set_operation::subtract})
        {
            std::filesystem::path const out = dir_ / "out";
            try
            {
                combine_filters_into(out, in, names, op, 1, 2);
                ADD_FAILURE() << "not interrupted";
            }
            catch (interrupted_error const & e)
            {
                EXPECT_EQ(e.exit_status(), 128 + SIGTERM);
                EXPECT_EQ(std::string{e.what()}, "interrupted (SIGTERM)");
            }
            EXPECT_THROW((void)combine_filters(in, names, op, 1, 1), interrupted_error);
        }
    auto grown = make_filter(layout(0.001, 0, 2));
    EXPECT_THROW(fit_filter(*grown, 0.0, 2), interrupted_error);
    request_stop(false);
    // without the request, the same calls complete
    EXPECT_NO_THROW(fit_filter(*grown, 0.0, 2));
    auto const r = combine_filters(std::vector<any_filter const *>{wide.get(), narrow.get()}, names,
                                   set_operation::unite, 1, 2);
    EXPECT_GT(r->stats().distinct, 40000u);
}
