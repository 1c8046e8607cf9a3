// The second look of classify (anchor_rescue) against a naive classifier over an exact key set: a
// read's minimizers decide it by the rule; a short novel read with at least one hit, or a read of
// at most max_screened_bases bases without a hit whose substitutions at its lowest-quality bases
// give a minimizer it lacks that is a hit, is known where every one of its k-mers (low-complexity
// ones left out) meets the rule, or, failing that, where the best single-base substitution at
// each of its lowest-quality bases adds the hits it lacks.
// The early-decision path
// and the exact-hits path must both give the oracle's classes, and a rescued read the oracle's
// k-mers and hits.
#include <ksieve/engine/anchor_rescue.hpp>
#include <ksieve/engine/early_classify.hpp>
#include <ksieve/engine/exact_classifier.hpp>

#include <ksieve/filters/kmers/low_complexity.hpp>
#include <ksieve/filters/kmers/sampling.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace
{

std::string random_dna(std::mt19937_64 & rng, std::size_t const n)
{
    std::string s(n, 'A');
    for (auto & c : s)
        c = "ACGT"[rng() % 4];
    return s;
}

struct read
{
    std::string seq, qual; // qual empty: a FASTA record
};

// Views of `reads` as a batch (the strings outlive it).
void fill(ksieve::io::record_batch & b, std::vector<read> const & reads)
{
    for (read const & r : reads)
        b.records_.push_back(ksieve::io::record_view{"r", "r", r.seq, r.qual, r.seq});
}

struct oracle_result
{
    bool known{false};
    bool rescued{false};
    std::uint32_t kmers{0}, hits{0};
    bool substituted{false}; // rescued only with the substitutions' hits
    bool screened{false};    // rescued after a screen (no hit among its minimizers)
};

class anchor_rescue_test : public ::testing::TestWithParam<std::uint32_t>
{
protected:
    void SetUp() override
    {
        kmer_.k = 31;
        kmer_.window = 8;
        kmer_.spaced = GetParam(); // 0: plain k-mers
        engine_ = std::make_unique<ksieve::batch_engine>(kmer_, 1);
        std::mt19937_64 rng{31};
        genome_ = random_dna(rng, 40000);
        genome_.replace(10000, 60, std::string(60, 'A')); // a poly-A run
        ksieve::filter_config cfg;
        cfg.kmer = kmer_;
        cfg.fpr = 0; // exact: a hit is a stored key
        cfg.shard_bits = 2;
        filter_ = ksieve::make_filter(cfg);
        ksieve::key_scratch ks;
        engine_->for_each_key(ksieve::sequence_piece{genome_}, ks,
                              [&](std::uint64_t const key) noexcept { stored_.insert(key); });
        for (std::uint64_t const key : stored_)
            ASSERT_EQ(filter_->insert(key), ksieve::insert_status::ok);
    }

    // The read set: pieces of the genome with 0 to 9 substitutions, random reads, and reads that
    // cross the poly-A run; one in seven has an N. Qualities (one read in five has none): a wrong
    // base is of low quality (Phred 2 or 14) three times in four, a right one of Phred 10 one time
    // in twelve, else 40.
    std::vector<read> reads(std::mt19937_64 & rng, std::size_t const n) const
    {
        std::vector<read> out;
        for (std::size_t i = 0; i < n; ++i)
        {
            std::size_t const len = 40 + rng() % 161;
            read r;
            r.qual.assign(len, 'I');
            for (char & q : r.qual)
                q = rng() % 12 == 0 ? '+' : 'I';
            if (i % 10 == 9)
                r.seq = random_dna(rng, len);
            else
            {
                std::size_t const at =
                    i % 10 == 8 ? 9950 + rng() % 40 : rng() % (genome_.size() - len);
                r.seq = genome_.substr(at, len);
                for (std::size_t e = rng() % 10; e > 0; --e)
                {
                    std::size_t const p = rng() % len;
                    char const was = r.seq[p];
                    while (r.seq[p] == was)
                        r.seq[p] = "ACGT"[rng() % 4];
                    r.qual[p] = rng() % 4 == 3 ? 'I' : rng() % 2 ? '#' : '/';
                }
            }
            if (i % 7 == 6) // an unknown base: the screen's windows run over it
                r.seq[rng() % len] = 'N';
            if (i % 5 == 4)
                r.qual.clear();
            out.push_back(std::move(r));
        }
        return out;
    }

    // The bases a read's substitutions change: Phred <= max_substituted_quality, the lowest first
    // (then the first position), at most max_substituted_bases.
    static std::vector<std::size_t> low_quality_bases(read const & r)
    {
        using ksieve::anchor_rescue;
        std::vector<std::pair<int, std::size_t>> low;
        for (std::size_t p = 0; p < r.qual.size(); ++p)
            if (r.qual[p] - 33 <= anchor_rescue::max_substituted_quality &&
                std::string_view{"ACGT"}.find(r.seq[p]) != std::string_view::npos)
                low.emplace_back(r.qual[p] - 33, p);
        std::sort(low.begin(), low.end());
        low.resize(std::min(low.size(), anchor_rescue::max_substituted_bases));
        std::vector<std::size_t> out;
        for (auto const & [q, p] : low)
            out.push_back(p);
        return out;
    }

    // The minimizers of s by their definition: the canonical code of least order value in every
    // window of w consecutive valid k-mers (the whole list when it is shorter).
    std::set<std::uint64_t> naive_minimizers(std::string const & s) const
    {
        std::vector<std::uint64_t> codes;
        engine_->scanner().for_each(s, [&](std::size_t, std::uint64_t const code)
                                    { codes.push_back(code); });
        std::set<std::uint64_t> out;
        std::size_t const w = std::min<std::size_t>(kmer_.window, codes.size());
        for (std::size_t t = 0; w > 0 && t + w <= codes.size(); ++t)
        {
            std::uint64_t best = codes[t];
            for (std::size_t i = t; i < t + w; ++i)
                if (ksieve::minimizer_order(codes[i], kmer_.seed) <
                    ksieve::minimizer_order(best, kmer_.seed))
                    best = codes[i];
            out.insert(best);
        }
        return out;
    }

    // The screen of a read without a hit: whether a minimizer of one of its substitutions at its
    // low-quality bases, one that the read lacks and not of low complexity, is stored.
    bool naive_screen_hit(read const & r) const
    {
        std::set<std::uint64_t> const own = naive_minimizers(r.seq);
        for (std::size_t const p : low_quality_bases(r))
            for (char const b : std::string{"ACGT"})
            {
                if (b == r.seq[p])
                    continue;
                std::string t = r.seq;
                t[p] = b;
                for (std::uint64_t const code : naive_minimizers(t))
                    if (!own.count(code) &&
                        !ksieve::low_complexity(code, 31, ksieve::default_dust_threshold) &&
                        stored_.count(engine_->hasher()(code)))
                        return true;
            }
        return false;
    }

    // The hits of k-mer lookups over a low-quality base: per base (the lowest qualities first, at
    // most max_substituted_bases), the best of its three substitutions, counting the k-mers over
    // it whose code the substitution changes (low-complexity ones left out).
    std::uint32_t naive_substituted_hits(read const & r) const
    {
        auto const codes = [&](std::string const & s)
        {
            std::vector<std::uint64_t> c(s.size(), ~std::uint64_t{0});
            engine_->scanner().for_each(s, [&](std::size_t const at, std::uint64_t const code)
                                        { c[at] = code; });
            return c;
        };
        std::vector<std::uint64_t> const before = codes(r.seq);
        std::uint32_t total = 0;
        for (std::size_t const p : low_quality_bases(r))
        {
            std::uint32_t best = 0;
            for (char const b : std::string{"ACGT"})
            {
                if (b == r.seq[p])
                    continue;
                std::string t = r.seq;
                t[p] = b;
                std::vector<std::uint64_t> const after = codes(t);
                std::uint32_t h = 0;
                for (std::size_t s = p >= 30 ? p - 30 : 0; s <= p && s < after.size(); ++s)
                    if (after[s] != ~std::uint64_t{0} && after[s] != before[s] &&
                        !ksieve::low_complexity(after[s], 31, ksieve::default_dust_threshold) &&
                        stored_.count(engine_->hasher()(after[s])))
                        ++h;
                best = std::max(best, h);
            }
            total += best;
        }
        return total;
    }

    oracle_result naive(read const & ra, read const * rb, ksieve::decision_rule const & rule) const
    {
        std::string const & a = ra.seq;
        std::string const * const b = rb != nullptr ? &rb->seq : nullptr;
        ksieve::key_scratch ks;
        std::uint32_t n = 0, h = 0;
        auto sampled = [&](std::uint64_t const key) noexcept
        {
            ++n;
            h += stored_.count(key) ? 1 : 0;
        };
        engine_->for_each_key(ksieve::sequence_piece{a}, ks, sampled);
        if (b != nullptr)
            engine_->for_each_key(ksieve::sequence_piece{*b}, ks, sampled);
        oracle_result r{rule.known(h, n), false, n, h};
        std::size_t const bases = a.size() + (b != nullptr ? b->size() : 0);
        bool const screened = !r.known && h == 0 && n > 0 &&
                              bases <= ksieve::anchor_rescue::max_screened_bases &&
                              (naive_screen_hit(ra) || (rb != nullptr && naive_screen_hit(*rb)));
        if (r.known || (h == 0 && !screened) || n > ksieve::anchor_rescue::max_sampled)
            return r;
        std::uint32_t all = 0, all_hits = 0;
        auto every = [&](std::size_t, std::uint64_t const code)
        {
            if (ksieve::low_complexity(code, 31, ksieve::default_dust_threshold))
                return;
            ++all;
            all_hits += stored_.count(engine_->hasher()(code)) ? 1 : 0;
        };
        engine_->scanner().for_each(a, every);
        if (b != nullptr)
            engine_->scanner().for_each(*b, every);
        bool const substituted = !rule.known(all_hits, all);
        if (substituted)
            all_hits +=
                naive_substituted_hits(ra) + (rb != nullptr ? naive_substituted_hits(*rb) : 0);
        if (rule.known(all_hits, all))
            r = oracle_result{true, true, all, all_hits, substituted, screened};
        return r;
    }

    ksieve::kmer_params kmer_{};
    std::unique_ptr<ksieve::batch_engine> engine_;
    std::string genome_;
    std::set<std::uint64_t> stored_;
    std::unique_ptr<ksieve::any_filter> filter_;
};

TEST_P(anchor_rescue_test, both_paths_equal_the_naive_classifier)
{
    std::mt19937_64 rng{GetParam() + 5};
    ksieve::decision_rule const rule{1, 0.004, 2};
    ksieve::any_filter const * const f = filter_.get();
    std::span<ksieve::any_filter const * const> const filters{&f, 1};
    std::size_t rescued = 0, known = 0, substituted = 0, screened = 0;
    for (bool const pairs : {false, true})
    {
        std::vector<read> const r1 = reads(rng, 3000);
        std::vector<read> const r2 = reads(rng, 3000);
        ksieve::work_item item;
        fill(item.r1, r1);
        if (pairs)
            fill(item.r2, r2);
        std::vector<ksieve::unit_result> early;
        ksieve::early_classifier{*engine_}.classify(item.r1, &item.r2, filters, rule, early);
        ksieve::exact_classifier exact{*engine_, filters, rule};
        exact.classify(item);
        for (std::size_t u = 0; u < r1.size(); ++u)
        {
            oracle_result const o = naive(r1[u], pairs ? &r2[u] : nullptr, rule);
            ASSERT_EQ(early[u].known, o.known) << "early, read " << u << " pairs " << pairs;
            ASSERT_EQ(item.results[u].known, o.known) << "exact, read " << u;
            ASSERT_EQ(early[u].rescued, o.rescued) << "early, read " << u;
            ASSERT_EQ(item.results[u].rescued, o.rescued) << "exact, read " << u;
            ASSERT_EQ(item.results[u].kmers, o.kmers) << "exact, read " << u;
            ASSERT_EQ(item.results[u].hits, o.hits) << "exact, read " << u;
            if (o.rescued)
            {
                ASSERT_EQ(early[u].hits, o.hits) << "early, read " << u;
            }
            rescued += o.rescued ? 1 : 0;
            substituted += o.substituted ? 1 : 0;
            screened += o.screened ? 1 : 0;
            known += o.known ? 1 : 0;
        }
    }
    EXPECT_GT(rescued, 20u) << "the reads must exercise the rescue";
    EXPECT_GT(substituted, 10u) << "and the substitutions";
    EXPECT_GT(screened, 10u) << "and the screen of reads without a hit";
    EXPECT_GT(known, 3000u);
}

// Spaced k-mers make reads with errors at ignored positions keep their k-mers; plain ones too.
INSTANTIATE_TEST_SUITE_P(patterns, anchor_rescue_test, ::testing::Values(0u, 0x7def7bdfu));

} // namespace
