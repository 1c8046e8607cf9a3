// Early-decision classify: per chunk of units, the keys in spread order, rounds of lookups until
// every unit is decided, and long records in windows (early_classifier).
#include "engine_detail.hpp"
#include <ksieve/engine/early_classify.hpp>

#include <algorithm>

#include <omp.h>

namespace ksieve
{

using detail::query_keys;

early_classifier::early_classifier(batch_engine const & engine) : engine_{engine}, rescue_{engine}
{
}

// A chunk's units: their k-mers (count, offset), with the minimizers of a sampled filter computed
// once (their number is not known before), and the per-unit state of the rounds reset.
void early_classifier::count_keys(scratch & s, chunk const & c) const
{
    std::size_t const m = c.m;
    s.offset.resize(m + 1);
    s.count.resize(m);
    s.need.resize(m);
    s.hits.assign(m, 0);
    s.queried.assign(m, 0);
    s.qstart.resize(m);
    s.offset[0] = 0;
    bool const sampled = engine_.kmer().sampled();
    if (sampled) // the units' minimizers (hashed keys), computed once: their number is not known
                 // before
    {
        std::size_t used = 0; // s.skeys[0, used): the minimizers so far
        for (std::size_t i = 0; i < m; ++i)
        {
            std::size_t const before = used;
            add_minimizers(s, c.seq(i), used);
            if (c.r2 != nullptr)
                add_minimizers(s, c.seq(i, true), used);
            s.count[i] = static_cast<std::uint32_t>(used - before);
            s.offset[i + 1] = s.offset[i] + s.count[i];
        }
    }
    else
        for (std::size_t i = 0; i < m; ++i)
        {
            std::size_t cnt = engine_.scanner().count(c.seq(i));
            if (c.r2 != nullptr)
                cnt += engine_.scanner().count(c.seq(i, true));
            s.count[i] = static_cast<std::uint32_t>(cnt);
            s.offset[i + 1] = s.offset[i] + static_cast<std::uint32_t>(cnt);
        }
}

// The minimizers (hashed) of `seq` appended to s.skeys[0, used), used advanced past them. s.skeys
// grows outside the scan (whose callback must not throw): a scan that does not fit is done again
// after growth.
void early_classifier::add_minimizers(scratch & s, std::string_view const seq,
                                      std::size_t & used) const
{
    std::size_t n = used;
    auto put = [&](std::uint64_t const key) noexcept
    {
        if (n < s.skeys.size())
            s.skeys[n] = key;
        ++n;
    };
    engine_.for_each_key(sequence_piece{seq}, s.ks, put);
    if (n > s.skeys.size())
    {
        s.skeys.resize(std::max(n, 2 * s.skeys.size()));
        n = used;
        engine_.for_each_key(sequence_piece{seq}, s.ks, put);
    }
    used = n;
}

// Units of more than window_kmers k-mers keep no codes in s.keys: they are looked up in windows
// (long_units()); the offsets of the others close up.
void early_classifier::drop_long_units(scratch & s, chunk const & c) const
{
    std::size_t const m = c.m;
    bool const sampled = engine_.kmer().sampled();
    s.long_units.clear();
    for (std::size_t i = 0; i < m; ++i)
        if (s.count[i] > window_kmers && !sampled)
            s.long_units.push_back(static_cast<std::uint32_t>(i));
    if (!s.long_units.empty())
    {
        std::uint32_t dropped = 0;
        for (std::size_t i = 0; i < m; ++i)
        {
            dropped += s.count[i] > window_kmers ? s.count[i] : 0;
            s.offset[i + 1] -= dropped;
        }
    }
}

// The codes of the chunk's units in spread order (hashed minimizers for a sampled filter), how many
// hits each unit needs, and the units still to decide.
void early_classifier::spread_keys(scratch & s, chunk const & c) const
{
    std::size_t const m = c.m;
    bool const sampled = engine_.kmer().sampled();
    detail::grow(s.offset[m], s.keys);
    s.active.clear();
    for (std::size_t i = 0; i < m; ++i)
    {
        if (s.count[i] > window_kmers && !sampled)
        {
            s.need[i] = static_cast<std::uint32_t>(c.rule.hits_needed(s.count[i]));
            continue;
        }
        // Spread order: positions j = 0, 4, 2, 6, 1, 5, 3, 7 (mod 8), each residue class in
        // increasing j.
        std::uint32_t const cnt = s.count[i];
        std::uint32_t base[8];
        std::uint32_t acc = 0;
        for (unsigned const res : {0u, 4u, 2u, 6u, 1u, 5u, 3u, 7u})
        {
            base[res] = acc;
            acc += cnt > res ? (cnt - res + 7) / 8 : 0;
        }
        std::uint64_t * const dst = s.keys.data() + s.offset[i];
        std::uint32_t j = 0;
        auto emit = [&](std::size_t, std::uint64_t const code) noexcept
        {
            dst[base[j & 7] + (j >> 3)] = code; // hashed when looked up: many never are
            ++j;
        };
        if (sampled)
            for (std::uint32_t t = 0; t < cnt; ++t)
                emit(0, s.skeys[s.offset[i] + t]);
        else
        {
            engine_.scanner().for_each(c.seq(i), emit);
            if (c.r2 != nullptr)
                engine_.scanner().for_each(c.seq(i, true), emit);
        }
        std::uint64_t const need = c.rule.hits_needed(cnt);
        s.need[i] = static_cast<std::uint32_t>(need); // (at most cnt + 1)
        if (need <= cnt)
            s.active.push_back(static_cast<std::uint32_t>(i));
    }
}

// A noisy unit's next round beyond its fewest deciding lookups: doubling while it has no hit, else
// the lookups that reach its need at its hit rate so far, plus a quarter (at most doubling).
std::uint32_t early_classifier::next_lookups(scratch const & s, std::uint32_t const i)
{
    std::uint64_t const queried = s.queried[i], hits = s.hits[i];
    if (hits == 0)
        return s.queried[i];
    std::uint64_t const at_rate = ((s.need[i] - hits) * queried + hits - 1) / hits;
    return static_cast<std::uint32_t>(std::min(queried, at_rate + at_rate / 4));
}

// Rounds of lookups over a chunk's undecided units: each asks for the fewest further k-mers that
// could decide it, until every unit is decided (the last round takes all that remain).
void early_classifier::rounds(scratch & s, chunk const & c) const
{
    std::span<any_filter const * const> const filters = c.filters;
    bool const sampled = engine_.kmer().sampled();
    for (unsigned round = 0; !s.active.empty(); ++round)
    {
        // Per undecided unit: the fewest further lookups that could decide it, or more where its
        // hit rate is low (a noisy long read): as many as it has had (doubling), or, once it has
        // hits, the lookups that reach its need at the rate seen so far plus a quarter, whichever
        // is fewer. It is decided in a few rounds, not after all its lookups.
        std::size_t total = 0;
        for (std::uint32_t const i : s.active)
        {
            std::uint32_t const misses = s.queried[i] - s.hits[i];
            std::uint32_t const left = s.count[i] - s.queried[i];
            std::uint32_t const fewest =
                std::min(s.need[i] - s.hits[i], s.count[i] - s.need[i] + 1 - misses);
            std::uint32_t const d = round + 1 >= max_rounds
                                        ? left
                                        : std::min(left, std::max(fewest, next_lookups(s, i)));
            s.qstart[i] = static_cast<std::uint32_t>(total);
            total += d;
        }
        detail::grow(total, s.qkeys, s.qvalues);
        for (std::size_t a = 0; a < s.active.size(); ++a)
        {
            std::uint32_t const i = s.active[a];
            std::size_t const q1 = a + 1 < s.active.size() ? s.qstart[s.active[a + 1]] : total;
            std::uint64_t const * const src = s.keys.data() + s.offset[i] + s.queried[i];
            std::uint64_t * const dst = s.qkeys.data() + s.qstart[i];
            for (std::size_t q = 0; q < q1 - s.qstart[i]; ++q)
                dst[q] = sampled ? src[q] : engine_.hasher()(src[q]);
        }
        query_keys(filters, s.qkeys.data(), total, s.qvalues.data(), s.q);
        s.next_active.clear();
        for (std::size_t a = 0; a < s.active.size(); ++a)
        {
            std::uint32_t const i = s.active[a];
            std::uint32_t const q0 = s.qstart[i];
            std::uint32_t const q1 = a + 1 < s.active.size() ? s.qstart[s.active[a + 1]]
                                                             : static_cast<std::uint32_t>(total);
            std::uint32_t h = 0;
            for (std::uint32_t q = q0; q < q1; ++q)
                h += c.rule.hit(s.qvalues[q]);
            s.hits[i] += h;
            s.queried[i] += q1 - q0;
            std::uint32_t const misses = s.queried[i] - s.hits[i];
            if (s.hits[i] < s.need[i] && misses <= s.count[i] - s.need[i])
                s.next_active.push_back(i);
        }
        std::swap(s.active, s.next_active);
    }
}

// A chunk's long units: windows of at most window_kmers k-mers in sequence order, until decided.
void early_classifier::windowed_units(scratch & s, chunk const & c) const
{
    std::span<any_filter const * const> const filters = c.filters;
    for (std::uint32_t const i : s.long_units)
    {
        detail::grow(window_kmers, s.qkeys, s.qvalues);
        std::uint32_t const cnt = s.count[i], need = s.need[i];
        if (need > cnt)
            continue; // never known
        auto decided = [&] { return s.hits[i] >= need || s.queried[i] - s.hits[i] > cnt - need; };
        auto window = [&](sequence_piece const & w)
        {
            if (decided())
                return;
            std::size_t q = 0;
            engine_.for_each_key(w, s.ks,
                                 [&](std::uint64_t const key) noexcept { s.qkeys[q++] = key; });
            query_keys(filters, s.qkeys.data(), q, s.qvalues.data(), s.q);
            for (std::size_t j = 0; j < q; ++j)
                s.hits[i] += c.rule.hit(s.qvalues[j]);
            s.queried[i] += static_cast<std::uint32_t>(q);
        };
        engine_.for_each_window(c.seq(i), window_kmers, window);
        if (c.r2 != nullptr)
            engine_.for_each_window(c.seq(i, true), window_kmers, window);
    }
}

// The units that a rescue may take (anchor_rescue::eligible) need their hits exact: a unit decided
// novel before its last minimizers were asked, without a hit so far, asks for them.
void early_classifier::find_anchors(scratch & s, chunk const & c) const
{
    std::size_t total = 0;
    s.active.clear();
    for (std::size_t i = 0; i < c.m; ++i)
        if (s.hits[i] == 0 && s.queried[i] < s.count[i] && s.count[i] <= anchor_rescue::max_sampled)
        {
            s.active.push_back(static_cast<std::uint32_t>(i));
            total += s.count[i] - s.queried[i];
        }
    if (s.active.empty())
        return;
    detail::grow(total, s.qkeys, s.qvalues);
    std::size_t q = 0;
    for (std::uint32_t const i : s.active)
        for (std::uint32_t j = s.queried[i]; j < s.count[i]; ++j)
            s.qkeys[q++] = s.keys[s.offset[i] + j];
    query_keys(c.filters, s.qkeys.data(), total, s.qvalues.data(), s.q);
    q = 0;
    for (std::uint32_t const i : s.active)
        for (; s.queried[i] < s.count[i]; ++s.queried[i])
            s.hits[i] += c.rule.hit(s.qvalues[q++]) ? 1u : 0u;
}

void early_classifier::classify(io::record_batch const & r1, io::record_batch const * const r2,
                                std::span<any_filter const * const> const filters,
                                decision_rule const & rule, std::vector<unit_result> & results)
{
    std::size_t const n = r1.size();
    bool const pairs = r2 != nullptr && !r2->empty();
    results.resize(n);
    // Chunks of at most 512 units and about 64 Ki bases (a chunk's keys stay in the core's L2
    // cache).
    constexpr std::size_t chunk_units = 512;
    constexpr std::size_t chunk_bases = std::size_t{1} << 16;
    chunk_begin_.clear();
    std::size_t bases = 0;
    for (std::size_t u = 0; u < n; ++u)
    {
        if (u == 0 || u - chunk_begin_.back() >= chunk_units || bases >= chunk_bases)
        {
            chunk_begin_.push_back(u);
            bases = 0;
        }
        bases += r1[u].seq.size() + (pairs ? (*r2)[u].seq.size() : 0);
    }
    chunk_begin_.push_back(n);
    std::size_t const chunks = chunk_begin_.size() - 1;
    detail::grow(engine_.threads(), scratch_);
    detail::region_error failure;
#pragma omp parallel for num_threads(engine_.threads()) schedule(dynamic, 1)
    for (std::size_t c = 0; c < chunks; ++c)
        failure.run(
            [&]
            {
                std::size_t const u0 = chunk_begin_[c];
                classify_chunk(
                    scratch_[static_cast<std::size_t>(omp_get_thread_num())],
                    chunk{r1, pairs ? r2 : nullptr, u0, chunk_begin_[c + 1] - u0, filters, rule},
                    results);
            });
    failure.rethrow_if_set();
    if (rescue_.active())
        rescue_.run(r1, pairs ? r2 : nullptr, filters, rule, results);
}

// One chunk: its keys, the rounds of lookups, the long units in windows, and the results.
void early_classifier::classify_chunk(scratch & s, chunk const & c,
                                      std::vector<unit_result> & results) const
{
    count_keys(s, c);
    drop_long_units(s, c);
    spread_keys(s, c);
    rounds(s, c);
    windowed_units(s, c);
    if (rescue_.active())
        find_anchors(s, c);
    for (std::size_t i = 0; i < c.m; ++i)
        results[c.u0 + i] =
            unit_result{s.count[i], s.hits[i], s.count[i] > 0 && s.hits[i] >= s.need[i]};
}

} // namespace ksieve
