// dedup by in-order resolution (dedup_resolver): a parallel pre-pass, then each unit decided in
// input order against the counts before the batch plus what earlier novel units added; and
// commit_round.
#include "engine_detail.hpp"
#include <ksieve/engine/dedup.hpp>
#include <ksieve/engine/resources.hpp>
#include <ksieve/filters/support/error.hpp>

#include <algorithm>

#include <omp.h>

namespace ksieve
{

dedup_resolver::dedup_resolver(unsigned const threads) : threads_{threads < 1 ? 1u : threads}
{
    reserve_openmp_threads(threads_);
}

void dedup_resolver::resolve(any_filter const & filter, batch_keys const & keys,
                             decision_rule const & rule, bool const exact_hits,
                             std::vector<unit_result> & results)
{
    std::size_t const n = keys.units();
    results.resize(n);
    std::uint64_t const tracked = prepare(filter, keys, rule, exact_hits);
    // Table capacity: a power of two >= 2 x the keys that may be tracked in this batch (small when
    // most units are decided before the batch, so that the table stays in cache).
    table_.reset(tracked, 1024);
    for (std::size_t u = 0; u < n; ++u)
    {
        std::uint32_t const c = keys.count[u];
        std::uint32_t hits = hits_before_[u];
        std::uint64_t const need = need_[u];
        // Counts added inside the batch only raise counts: enough hits before the batch decide
        // "known".
        if (hits >= need && !exact_hits)
        {
            results[u] = unit_result{c, hits, true};
            continue;
        }
        std::uint32_t const below = keys_below(keys, u, rule);
        hits += hits_added(keys, u, rule, below);
        bool const known = hits >= need;
        results[u] = unit_result{c, hits, known};
        if (!known && u + 1 < n) // (no later unit of the batch looks at the last one's keys)
            track(keys, u, below);
    }
}

// Parallel pre-pass: hits before the batch, hits needed, and the collision keys and their hashes of
// the keys still below min_count. Only the table probes of resolve() are serial.
std::uint64_t dedup_resolver::prepare(any_filter const & filter, batch_keys const & keys,
                                      decision_rule const & rule, bool const exact_hits)
{
    std::size_t const n = keys.units();
    std::uint32_t longest = 0;
    for (std::size_t u = 0; u < n; ++u)
        longest = std::max(longest, keys.count[u]);
    detail::grow(longest, slots_);
    std::uint64_t const total = keys.offset[n];
    detail::grow(total, cks_, homes_);
    hits_before_.resize(n);
    need_.resize(n);
    // keys that may be tracked: below min_count, in units not decided before the batch but the last
    // one (a long record alone in its batch needs no table)
    std::uint64_t tracked = 0;
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 256) reduction(+ : tracked)
    for (std::size_t u = 0; u < n; ++u)
    {
        std::uint64_t const off = keys.offset[u];
        std::uint32_t const c = keys.count[u];
        std::uint32_t hits = 0;
        for (std::uint32_t j = 0; j < c; ++j)
        {
            if (rule.hit(keys.values[off + j]))
            {
                ++hits;
                continue;
            }
            std::uint64_t const ck = filter.growable()->collision_key(keys.keys[off + j]);
            cks_[off + j] = ck;
            homes_[off + j] = detail::stamp_table::hash_of(ck);
        }
        hits_before_[u] = hits;
        need_[u] = rule.hits_needed(c);
        if ((exact_hits || hits < need_[u]) && u + 1 < n) // the last unit is never tracked
            tracked += c - hits;
    }
    return tracked;
}

// slots_[0, m) = the indices in unit u of its keys below min_count (m returned), their home slots
// prefetched.
std::uint32_t dedup_resolver::keys_below(batch_keys const & keys, std::size_t const u,
                                         decision_rule const & rule)
{
    std::uint64_t const off = keys.offset[u];
    std::uint32_t m = 0;
    for (std::uint32_t j = 0; j < keys.count[u]; ++j)
        if (!rule.hit(keys.values[off + j]))
        {
            table_.prefetch(homes_[off + j]);
            slots_[m++] = j;
        }
    return m;
}

// The keys of unit u below min_count (slots_[0, m)) that the additions of earlier novel units of
// the batch raise to min_count.
std::uint32_t dedup_resolver::hits_added(batch_keys const & keys, std::size_t const u,
                                         decision_rule const & rule, std::uint32_t const m) const
{
    std::uint64_t const off = keys.offset[u];
    std::uint32_t extra = 0;
    for (std::uint32_t a = 0; a < m; ++a)
    {
        std::uint64_t const p = off + slots_[a];
        extra += rule.hit(keys.values[p] + table_.find(cks_[p], homes_[p]));
    }
    return extra;
}

// Unit u is novel: its keys below min_count (slots_[0, m)) are counted in the table (keys already
// at min_count are hits for every later unit anyway).
void dedup_resolver::track(batch_keys const & keys, std::size_t const u, std::uint32_t const m)
{
    std::uint64_t const off = keys.offset[u];
    for (std::uint32_t a = 0; a < m; ++a)
    {
        std::uint64_t const p = off + slots_[a];
        ++table_.at(cks_[p], homes_[p]);
    }
}

void commit_round(prefiltered_filter & filter, unsigned const threads)
{
    std::size_t const shards = filter.num_shards();
#pragma omp parallel for num_threads(threads < 1 ? 1u : threads) schedule(dynamic, 4)
    for (std::size_t s = 0; s < shards; ++s)
        filter.commit_shard(s);
}

} // namespace ksieve
