#include "engine_detail.hpp"
#include <ksieve/engine/dedup.hpp>
#include <ksieve/filters/error.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

#include <omp.h>

namespace ksieve
{

using detail::full_message;
using detail::partition_units_by_shard;
using detail::query_keys;

void dedup_resolver::resolve(any_filter const & filter, batch_keys const & keys, decision_rule const & rule,
                             bool const exact_hits, std::vector<unit_result> & results)
{
    std::uint64_t const min_count = rule.min_count;
    std::size_t const n = keys.units();
    results.resize(n);
    std::uint32_t longest = 0;
    for (std::size_t u = 0; u < n; ++u)
        longest = std::max(longest, keys.count[u]);
    if (slots_.size() < longest)
        slots_.resize(longest);
    // Parallel pre-pass: hits before the batch, hits needed, and the collision keys and their hashes of the
    // keys still below min_count. Only the table probes below are serial.
    std::uint64_t const total = keys.offset[n];
    if (cks_.size() < total)
    {
        cks_.resize(total);
        homes_.resize(total);
    }
    hits_before_.resize(n);
    need_.resize(n);
    std::uint64_t tracked =
        0; // keys that may be probed: below min_count, in units not decided before the batch
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 256) reduction(+ : tracked)
    for (std::size_t u = 0; u < n; ++u)
    {
        std::uint64_t const off = keys.offset[u];
        std::uint32_t const c = keys.count[u];
        std::uint32_t hits = 0;
        for (std::uint32_t j = 0; j < c; ++j)
        {
            if (keys.values[off + j] >= min_count)
            {
                ++hits;
                continue;
            }
            std::uint64_t const ck = filter.collision_key(keys.keys[off + j]);
            cks_[off + j] = ck;
            homes_[off + j] = static_cast<std::size_t>(mix64(ck));
        }
        hits_before_[u] = hits;
        need_[u] = rule.hits_needed(c);
        if (exact_hits || hits < need_[u])
            tracked += c - hits;
    }
    // Table capacity: a power of two >= 2 x the keys that may be tracked in this batch (small when most units
    // are decided before the batch, so that the table stays in cache); entries beyond it are not used.
    std::size_t cap = 1024;
    while (cap < 2 * tracked)
        cap *= 2;
    if (table_.size() < cap)
    {
        table_.assign(cap, entry{});
        epoch_ = 0;
    }
    if (++epoch_ == 0) // stamp wrap-around: clear once every 2^32 batches
    {
        std::fill(table_.begin(), table_.end(), entry{});
        epoch_ = 1;
    }
    std::size_t const mask = cap - 1;
    entry * const table = table_.data();
    std::uint32_t const epoch = epoch_;
    for (std::size_t u = 0; u < n; ++u)
    {
        std::uint64_t const off = keys.offset[u];
        std::uint64_t const * const v = keys.values.data() + off;
        std::uint64_t const * const ck = cks_.data() + off;
        std::size_t const * const home = homes_.data() + off;
        std::uint32_t const c = keys.count[u];
        std::uint32_t hits = hits_before_[u];
        std::uint64_t const need = need_[u];
        // Counts added inside the batch only raise counts: enough hits before the batch decide "known".
        if (hits >= need && !exact_hits)
        {
            results[u] = unit_result{c, hits, true};
            continue;
        }
        // The keys still below min_count: home slots prefetched, then probed.
        std::uint32_t m = 0;
        for (std::uint32_t j = 0; j < c; ++j)
            if (v[j] < min_count)
            {
                __builtin_prefetch(table + (home[j] & mask));
                slots_[m++] = j;
            }
        std::uint32_t extra = 0;
        for (std::uint32_t a = 0; a < m; ++a)
        {
            std::uint32_t const j = slots_[a];
            std::size_t i = home[j] & mask;
            while (table[i].stamp == epoch && table[i].key != ck[j])
                i = (i + 1) & mask;
            if (table[i].stamp == epoch && v[j] + table[i].count >= min_count)
                ++extra;
        }
        hits += extra;
        bool const known = hits >= need;
        results[u] = unit_result{c, hits, known};
        if (known)
            continue;
        // Novel: its keys below min_count are tracked (keys already at min_count are hits for every later
        // read).
        for (std::uint32_t a = 0; a < m; ++a)
        {
            std::uint32_t const j = slots_[a];
            std::size_t i = home[j] & mask;
            while (table[i].stamp == epoch && table[i].key != ck[j])
                i = (i + 1) & mask;
            if (table[i].stamp != epoch)
                table[i] = entry{ck[j], 0, epoch};
            ++table[i].count;
        }
    }
}

} // namespace ksieve
