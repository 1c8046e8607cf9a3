// Unit tests of the batch engine: decision rule, dedup resolver, windows of long records.
#include <ksieve/engine/dedup.hpp>

#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>

#include <algorithm>
#include <array>
#include <random>
#include <unordered_map>

#include <gtest/gtest.h>

namespace
{

// decision_rule::hits_needed(n) must be the smallest h with known(h, n) (n + 1 if none): brute
// force is the oracle.
TEST(engine, hits_needed_is_the_smallest_known_hit_count)
{
    for (std::uint64_t const min_hits : {0u, 2u})
        for (double const f :
             {1e-9, 0.01, 0.1, 0.25, 1.0 / 3.0, 0.3, 0.5, 0.6, 0.7, 0.77, 0.8, 0.9, 0.999, 1.0})
            for (std::uint64_t n = 0; n <= 600; ++n)
            {
                ksieve::decision_rule const rule{1, f, min_hits};
                std::uint64_t expect = n + 1;
                for (std::uint64_t h = 0; h <= n; ++h)
                    if (rule.known(h, n))
                    {
                        expect = h;
                        break;
                    }
                if (n == 0)
                    expect = 1; // a unit without k-mers is never known
                ASSERT_EQ(rule.hits_needed(n), expect)
                    << "n " << n << " F " << f << " min_hits " << min_hits;
            }
}

} // namespace

namespace
{

// dedup_resolver against a naive serial oracle on random batches: small key universes and pre-batch
// counts around min_count make in-batch additions decide many units. With exact_hits the hits must
// be exact; without, the classes must still be exact and the hits a lower bound.
TEST(engine, dedup_resolver_equals_the_serial_definition)
{
    ksieve::filter_config cfg;
    cfg.kmer.k = 15;
    cfg.fpr = 0; // exact: collision keys are the keys
    cfg.shard_bits = 2;
    auto const filter = ksieve::make_filter(cfg);
    ASSERT_NE(filter->growable(), nullptr);
    std::mt19937_64 rng{2026};
    std::size_t known_from_batch = 0;
    // One pair of resolvers for all batches, as in dedup: their tables are reused across batches of
    // different sizes (stale entries of earlier batches must read as empty).
    ksieve::dedup_resolver exact{3}, fast{2}; // parallel pre-pass with several threads
    for (int trial = 0; trial < 300; ++trial)
    {
        std::uint64_t const min_count = 1 + rng() % 3;
        double const fraction = std::array{0.3, 0.5, 0.8, 1.0}[rng() % 4];
        std::uint64_t const universe = 5 + rng() % 60;
        std::vector<std::uint64_t> key_of(universe), before(universe);
        for (std::uint64_t i = 0; i < universe; ++i)
        {
            key_of[i] = rng() & ((std::uint64_t{1} << 30) - 1);
            before[i] = rng() % (min_count + 2);
        }
        ksieve::batch_keys keys;
        std::size_t const units = 1 + rng() % (trial % 3 == 0 ? 400 : 40);
        keys.offset.push_back(0);
        for (std::size_t u = 0; u < units; ++u)
        {
            std::uint32_t const c =
                static_cast<std::uint32_t>(rng() % 12); // 0 = a unit without k-mers
            for (std::uint32_t j = 0; j < c; ++j)
            {
                std::uint64_t const i = rng() % universe;
                keys.keys.push_back(key_of[i]);
                keys.values.push_back(before[i]);
            }
            keys.count.push_back(c);
            keys.offset.push_back(keys.keys.size());
        }
        // Oracle: serial, with a map of in-batch additions per collision key.
        std::unordered_map<std::uint64_t, std::uint64_t> added;
        std::vector<ksieve::unit_result> expect(units);
        for (std::size_t u = 0; u < units; ++u)
        {
            std::uint32_t hits = 0;
            for (std::uint64_t p = keys.offset[u]; p < keys.offset[u + 1]; ++p)
                hits += keys.values[p] + added[filter->growable()->collision_key(keys.keys[p])] >=
                        min_count;
            bool const known =
                ksieve::decision_rule{min_count, fraction, 0}.known(hits, keys.count[u]);
            expect[u] = ksieve::unit_result{keys.count[u], hits, known};
            if (!known)
                for (std::uint64_t p = keys.offset[u]; p < keys.offset[u + 1]; ++p)
                    ++added[filter->growable()->collision_key(keys.keys[p])];
        }
        std::vector<ksieve::unit_result> got_exact, got_fast;
        exact.resolve(*filter, keys, ksieve::decision_rule{min_count, fraction, 0}, true,
                      got_exact);
        fast.resolve(*filter, keys, ksieve::decision_rule{min_count, fraction, 0}, false, got_fast);
        for (std::size_t u = 0; u < units; ++u)
        {
            ASSERT_EQ(got_exact[u].known, expect[u].known) << trial << " unit " << u;
            ASSERT_EQ(got_exact[u].hits, expect[u].hits) << trial << " unit " << u;
            ASSERT_EQ(got_exact[u].kmers, expect[u].kmers);
            ASSERT_EQ(got_fast[u].known, expect[u].known) << trial << " unit " << u;
            ASSERT_LE(got_fast[u].hits, expect[u].hits);
            known_from_batch += got_fast[u].hits < expect[u].hits;
        }
    }
    EXPECT_GT(known_from_batch,
              20u); // the shortcut (and so the exact_hits distinction) was exercised
}

} // namespace

namespace
{

// A batch of 1 to max_units units drawn from `universe` keys of the pool: a unit has 0 k-mers
// (none), up to 100 (every fourth unit, so that samples of several k-mers are taken) or up to 11,
// with repeats.
ksieve::batch_keys random_units(std::mt19937_64 & rng, std::vector<std::uint64_t> const & pool,
                                std::uint64_t const universe, std::size_t const max_units)
{
    std::vector<std::uint64_t> key_of(universe);
    for (auto & key : key_of)
        key = pool[rng() % pool.size()];
    ksieve::batch_keys keys;
    std::size_t const units = 1 + rng() % max_units;
    keys.offset.push_back(0);
    for (std::size_t u = 0; u < units; ++u)
    {
        std::uint32_t const c = static_cast<std::uint32_t>(rng() % (u % 4 == 0 ? 101 : 12));
        for (std::uint32_t j = 0; j < c; ++j)
            keys.keys.push_back(key_of[rng() % universe]);
        keys.count.push_back(c);
        keys.offset.push_back(keys.keys.size());
    }
    return keys;
}

// dedup_speculator against the serial definition run on a second filter: after every batch the
// classes must be equal and every key's count too. Small key universes, repeated keys inside units,
// counts around min_count before the batch and small fingerprints (collisions) make in-batch
// additions, rollbacks and copies inside a unit decide many units. The state carries over between
// batches, as in dedup.
TEST(engine, dedup_speculator_equals_the_serial_definition)
{
    // fixed_min_count: one min_count for the whole run, as in dedup, so that lookups go to the set
    // of hits learnt from the additions (else min_count changes between batches, and they go to the
    // filter)
    for (bool const fixed_min_count : {false, true})
        for (double const fpr : {0.0, 0.2})
            for (unsigned const threads : {1u, 3u})
            {
                ksieve::filter_config cfg;
                cfg.kmer.k = 15;
                cfg.fpr = fpr; // 0.2 with a small design size: short fingerprints, many collisions
                cfg.expected = fpr > 0 ? 16384 : 64;
                cfg.shard_bits = 2;
                auto const fast = ksieve::make_filter(cfg);
                auto const slow = ksieve::make_filter(cfg);
                ASSERT_NE(fast->growable(), nullptr);
                std::mt19937_64 rng{2026 + threads};
                ksieve::dedup_speculator speculator{threads};
                // a pool of 3000 keys (within the filter's design size); each batch draws a small
                // universe from it
                std::vector<std::uint64_t> all_keys(3000);
                for (auto & key : all_keys)
                    key = rng() & ((std::uint64_t{1} << 30) - 1);
                std::size_t known_units = 0, novel_units = 0;
                for (int trial = 0; trial < 150; ++trial)
                {
                    // (the first batches at 2, 3, 4, ...: the set of hits starts, and must stop
                    // when min_count changes)
                    std::uint64_t const min_count =
                        fixed_min_count ? 3 : (trial < 20 ? 2 + trial % 3 : 1 + rng() % 4);
                    // 1e-6 and 0.05: the sample alone can make a unit known
                    double const fraction = std::array{1e-6, 0.05, 0.3, 0.5, 0.8, 1.0}[rng() % 6];
                    std::uint64_t const universe = 5 + rng() % 80;
                    ksieve::batch_keys const keys =
                        random_units(rng, all_keys, universe, trial % 3 == 0 ? 300 : 30);
                    std::size_t const units = keys.units();
                    // Oracle: read by read on the other filter (lookups before the unit's own
                    // insertions).
                    std::vector<bool> expect(units);
                    for (std::size_t u = 0; u < units; ++u)
                    {
                        std::uint32_t hits = 0;
                        for (std::uint64_t p = keys.offset[u]; p < keys.offset[u + 1]; ++p)
                            hits += slow->count(keys.keys[p]) >= min_count;
                        expect[u] = ksieve::decision_rule{min_count, fraction, 0}.known(
                            hits, keys.count[u]);
                        if (!expect[u])
                        {
                            for (std::uint64_t p = keys.offset[u]; p < keys.offset[u + 1]; ++p)
                                ASSERT_EQ(slow->insert(keys.keys[p]), ksieve::insert_status::ok);
                        }
                    }
                    std::vector<ksieve::unit_result> got;
                    speculator.run(*fast, keys, ksieve::decision_rule{min_count, fraction, 0}, got,
                                   "test");
                    ASSERT_EQ(got.size(), units);
                    for (std::size_t u = 0; u < units; ++u)
                    {
                        ASSERT_EQ(got[u].known, expect[u])
                            << "fpr " << fpr << " trial " << trial << " unit " << u;
                        ASSERT_EQ(got[u].kmers, keys.count[u]);
                        (expect[u] ? known_units : novel_units) += 1;
                    }
                    for (std::uint64_t const key : all_keys)
                        ASSERT_EQ(fast->count(key), slow->count(key))
                            << "fpr " << fpr << " trial " << trial;
                    ASSERT_EQ(fast->stats().total_count, slow->stats().total_count);
                    ASSERT_EQ(fast->stats().distinct, slow->stats().distinct);
                }
                // every path was taken: samples predicting both classes, rollbacks, copies inside a
                // unit
                auto const & w = speculator.work();
                EXPECT_GT(known_units, 500u);
                EXPECT_GT(novel_units, 500u);
                EXPECT_GT(w.rolled_back_units, 20u) << "fpr " << fpr;
                EXPECT_GT(w.removed, 100u);
                EXPECT_GT(w.lookups + w.hit_lookups, 1000u);
                if (fixed_min_count)
                {
                    EXPECT_GT(w.hit_lookups, 1000u);
                }
                // What dedup --save-filter writes: every shard at the fewest slots that hold it
                // (undoing growth that only rolled-back additions needed); then the tables are
                // those of the read-by-read run, word for word.
                std::uint64_t const grown = fast->stats().slots;
                ksieve::fit_filter(*fast, 0.0, 2);
                ksieve::fit_filter(*slow, 0.0, 1);
                EXPECT_EQ(fast->stats().slots, slow->stats().slots)
                    << "fpr " << fpr << " slots before " << grown;
                auto const & a =
                    dynamic_cast<ksieve::sharded_filter<ksieve::quotient_filter> const &>(*fast);
                auto const & b =
                    dynamic_cast<ksieve::sharded_filter<ksieve::quotient_filter> const &>(*slow);
                for (std::size_t sh = 0; sh < a.num_shards(); ++sh)
                {
                    auto const wa = a.shard(sh).words(), wb = b.shard(sh).words();
                    EXPECT_TRUE(std::equal(wa.begin(), wa.end(), wb.begin(), wb.end()))
                        << "shard " << sh;
                }
            }
}

} // namespace

namespace
{

// A long record hashed window by window (build's bounded-memory path) must give exactly the keys of
// the whole record, in order: every k-mer position in exactly one window, none across an N lost or
// doubled. Oracles: the whole sequence as one window, and a naive count of the ACGT-only k-mer
// positions.
TEST(engine, windows_of_a_record_give_exactly_its_keys)
{
    std::mt19937_64 rng{7};
    for (unsigned const k : {1u, 5u, 21u, 31u, 32u})
    {
        ksieve::kmer_params p;
        p.k = k;
        ksieve::batch_engine const engine{p, 2};
        for (std::size_t const len :
             {std::size_t{0}, std::size_t{1}, std::size_t{k - 1}, std::size_t{k},
              std::size_t{k + 1}, std::size_t{1000}, std::size_t{70000}})
        {
            std::string seq(len, 'A');
            for (auto & c : seq)
                c = "ACGTacgtN"[rng() % (rng() % 50 == 0 ? 9 : 8)]; // a few N and lowercase bases
            std::size_t naive = 0;
            for (std::size_t i = 0; i + k <= len; ++i)
                naive += seq.substr(i, k).find('N') == std::string::npos;
            ksieve::batch_keys whole;
            ksieve::sequence_piece const all[] = {ksieve::sequence_piece{seq}};
            engine.extract_windows(all, whole);
            ASSERT_EQ(whole.count[0], naive) << "k " << k << " len " << len;
            std::vector<std::uint64_t> const expect(whole.keys.begin(),
                                                    whole.keys.begin() + whole.count[0]);
            for (std::size_t const window :
                 {std::size_t{1}, std::size_t{2}, std::size_t{k}, std::size_t{7}, std::size_t{300},
                  std::size_t{1} << 20})
            {
                std::vector<ksieve::sequence_piece> windows;
                engine.for_each_window(
                    seq, window, [&](ksieve::sequence_piece const & w) { windows.push_back(w); });
                ASSERT_FALSE(windows.empty());
                for (auto const & w : windows)
                    ASSERT_LE(w.end - w.begin, window);
                ksieve::batch_keys cut;
                engine.extract_windows(windows, cut);
                std::vector<std::uint64_t> got;
                for (std::size_t u = 0; u < cut.units(); ++u)
                    got.insert(got.end(),
                               cut.keys.begin() + static_cast<std::ptrdiff_t>(cut.offset[u]),
                               cut.keys.begin() +
                                   static_cast<std::ptrdiff_t>(cut.offset[u] + cut.count[u]));
                EXPECT_EQ(got, expect) << "k " << k << " len " << len << " window " << window;
            }
        }
    }
}

// add_to_sketch on several threads equals one sketch fed every key in order (the estimate is a
// function of the registers alone), for units of different sizes and with sampling.
TEST(engine, sketches_of_several_threads_equal_the_serial_sketch)
{
    std::mt19937_64 rng{11};
    for (std::size_t const window : {std::size_t{1}, std::size_t{11}})
    {
        ksieve::kmer_params p;
        p.k = 31;
        p.window = window;
        std::vector<std::string> seqs;
        for (std::size_t const len :
             {std::size_t{0}, std::size_t{40}, std::size_t{150}, std::size_t{9000},
              std::size_t{150}, std::size_t{70000}, std::size_t{31}})
        {
            std::string seq(len, 'A');
            for (auto & c : seq)
                c = "ACGTN"[rng() % (rng() % 100 == 0 ? 5 : 4)];
            seqs.push_back(std::move(seq));
        }
        std::vector<ksieve::sequence_piece> pieces;
        for (auto const & seq : seqs)
            pieces.push_back(ksieve::sequence_piece{seq});
        ksieve::hyperloglog serial;
        double first = -1;
        for (unsigned const threads : {1u, 2u, 3u})
        {
            ksieve::batch_engine const engine{p, threads};
            ksieve::batch_keys keys;
            engine.extract_windows(pieces, keys);
            if (threads == 1)
                for (std::size_t u = 0; u < keys.units(); ++u)
                    for (std::uint32_t j = 0; j < keys.count[u]; ++j)
                        serial.add(keys.keys[keys.offset[u] + j]);
            ksieve::hyperloglog sketch;
            engine.add_to_sketch(keys, sketch);
            engine.add_to_sketch(keys, sketch); // a second time: nothing new
            EXPECT_EQ(sketch.estimate(), serial.estimate())
                << "window " << window << ", " << threads << " threads";
            first = first < 0 ? sketch.estimate() : first;
        }
        EXPECT_GT(first, 1000.0) << "the sketch saw the keys";
    }
}

// Filters of some key parts (build --part) together answer as the full build. Bloom parts answer
// only for keys of their parts: a key's value is the answer of the filter holding its part, never a
// false positive from another part's filter (oracle: each key asked of its part's filter alone).
// Quotient filter parts all answer, their counts added (oracle: one filter of all the keys).
TEST(engine, filters_of_key_parts_answer_as_the_full_build)
{
    std::mt19937_64 rng{11};
    ksieve::kmer_params p;
    p.k = 15;
    for (auto const type : {ksieve::filter_type::bloom, ksieve::filter_type::quotient})
    {
        SCOPED_TRACE(static_cast<int>(type));
        ksieve::filter_config cfg;
        cfg.type = type;
        cfg.kmer = p;
        cfg.fpr = 0.3; // many false positives: each would show
        cfg.expected = 3000;
        cfg.shard_bits = 2;
        std::uint64_t const split = 3;
        std::vector<std::unique_ptr<ksieve::any_filter>> parts;
        for (std::uint64_t i = 0; i < split; ++i)
        {
            parts.push_back(ksieve::make_filter(cfg));
            parts.back()->set_parts(ksieve::key_parts::one(i, split));
        }
        auto const full = ksieve::make_filter(cfg); // the same keys in one filter: the full build
        for (int j = 0; j < 3000; ++j)
        {
            std::uint64_t const key = rng() & ksieve::kmer_mask(p.k);
            ASSERT_EQ(parts[ksieve::key_parts::part_of(key, split)]->insert(key),
                      ksieve::insert_status::ok);
            ASSERT_EQ(full->insert(key), ksieve::insert_status::ok);
        }
        std::vector<ksieve::any_filter const *> const filters{parts[0].get(), parts[1].get(),
                                                              parts[2].get()};
        ksieve::batch_keys keys;
        keys.keys.resize(20000);
        for (auto & key : keys.keys)
            key = rng() & ksieve::kmer_mask(p.k);
        keys.offset = {0, keys.keys.size()};
        keys.count = {static_cast<std::uint32_t>(keys.keys.size())};
        keys.values.assign(keys.keys.size(), 99);
        ksieve::batch_engine const engine{p, 2};
        engine.query(filters, keys);
        std::size_t unrouted_extra = 0, summed = 0;
        for (std::size_t i = 0; i < keys.keys.size(); ++i)
        {
            std::uint64_t const key = keys.keys[i];
            std::uint64_t const own = parts[ksieve::key_parts::part_of(key, split)]->count(key);
            std::uint64_t any = 0;
            for (auto const & f : parts)
                any = std::max(any, f->count(key));
            // Bloom: only the key's own part answers; quotient filter: every part, their counts
            // added, as the full build counts (a fingerprint shared with another part's key is a
            // hit of the full build too)
            ASSERT_EQ(keys.values[i], type == ksieve::filter_type::bloom ? own : full->count(key))
                << "key " << i;
            unrouted_extra += any > own;
            summed += type == ksieve::filter_type::quotient && full->count(key) > any;
        }
        // many keys answered by another part than their own: the two rules above differ on them;
        // and keys whose fingerprint two parts hold, where the sum differs from the largest count
        EXPECT_GT(unrouted_extra, 100u);
        if (type == ksieve::filter_type::quotient)
        {
            EXPECT_GT(summed, 10u);
            // parts that overlap (part 0 twice) are not one filter: each answers alone, the largest
            // count wins
            std::vector<ksieve::any_filter const *> const twice{parts[0].get(), parts[1].get(),
                                                                parts[2].get(), parts[0].get()};
            keys.values.assign(keys.keys.size(), 99);
            engine.query(twice, keys);
            for (std::size_t i = 0; i < keys.keys.size(); ++i)
            {
                std::uint64_t any = 0;
                for (auto const & f : parts)
                    any = std::max(any, f->count(keys.keys[i]));
                ASSERT_EQ(keys.values[i], any) << "key " << i;
            }
        }
    }
}

} // namespace

namespace
{

// dedup with a prefilter (prefiltered_filter): dedup_speculator on one filter against the
// read-by-read definition on another (lookups before the unit's own additions, then its additions),
// with a round committed after every batch on both. Short fingerprints (collisions) and a small
// prefilter (false positives) included: classes and every key's count must be equal after every
// batch.
TEST(engine, dedup_speculator_with_a_prefilter_equals_the_serial_definition)
{
    for (std::uint64_t const prefilter_bytes : {std::uint64_t{1024}, std::uint64_t{1} << 20})
        for (unsigned const threads : {1u, 3u})
        {
            ksieve::filter_config cfg;
            cfg.kmer.k = 15;
            cfg.fpr = 0.2;
            cfg.expected = 16384;
            cfg.shard_bits = 2;
            ksieve::prefiltered_filter fast{ksieve::make_filter(cfg), prefilter_bytes};
            ksieve::prefiltered_filter slow{ksieve::make_filter(cfg), prefilter_bytes};
            std::mt19937_64 rng{99 + threads};
            ksieve::dedup_speculator speculator{threads};
            std::vector<std::uint64_t> all_keys(3000);
            for (auto & key : all_keys)
                key = rng() & ((std::uint64_t{1} << 30) - 1);
            std::size_t known_units = 0, novel_units = 0;
            for (int trial = 0; trial < 120; ++trial)
            {
                std::uint64_t const min_count = trial < 60 ? 3 : 2 + rng() % 3;
                double const fraction = std::array{0.05, 0.3, 0.5, 0.8, 1.0}[rng() % 5];
                std::uint64_t const universe = 5 + rng() % 200;
                ksieve::batch_keys const keys = random_units(rng, all_keys, universe, 200);
                std::size_t const units = keys.units();
                ksieve::decision_rule const rule{min_count, fraction, 0};
                std::vector<bool> expect(units);
                for (std::size_t u = 0; u < units; ++u)
                {
                    std::uint32_t hits = 0;
                    for (std::uint64_t p = keys.offset[u]; p < keys.offset[u + 1]; ++p)
                        hits += slow.count(keys.keys[p]) >= min_count;
                    expect[u] = rule.known(hits, keys.count[u]);
                    if (!expect[u])
                    {
                        for (std::uint64_t p = keys.offset[u]; p < keys.offset[u + 1]; ++p)
                            ASSERT_EQ(slow.insert(keys.keys[p]), ksieve::insert_status::ok);
                    }
                }
                std::vector<ksieve::unit_result> got;
                speculator.run(fast, keys, rule, got, "test");
                ksieve::commit_round(fast, threads);
                ksieve::commit_round(slow, 1);
                for (std::size_t u = 0; u < units; ++u)
                {
                    ASSERT_EQ(got[u].known, expect[u]) << "trial " << trial << " unit " << u;
                    (expect[u] ? known_units : novel_units) += 1;
                }
                for (std::uint64_t const key : all_keys)
                    ASSERT_EQ(fast.count(key), slow.count(key)) << "trial " << trial;
                ASSERT_EQ(fast.main().stats().total_count, slow.main().stats().total_count);
                ASSERT_EQ(fast.prefiltered(), slow.prefiltered());
            }
            EXPECT_GT(known_units, 500u);
            EXPECT_GT(novel_units, 500u);
            EXPECT_GT(speculator.work().rolled_back_units, 20u);
            // k-mers seen once stayed out of the main filter
            EXPECT_LT(fast.main().stats().distinct, fast.prefiltered());
        }
}

} // namespace
