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

namespace
{
// Sampled positions are 0, 16, 32, ... (dedup_speculator stride 16); the others are visited offset by offset
// in this order (bit-reversed, so the first ones spread over the read), each offset's positions increasing.
constexpr std::uint32_t stride = 16;
constexpr std::array<std::uint32_t, stride - 1> spread{8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};

// fn(j) for the non-sampled positions j of a unit of c keys with ranks t0 <= t < t1 in the spread order.
template <typename Fn>
void for_rest(std::uint32_t const c, std::uint32_t const t0, std::uint32_t const t1, Fn && fn) noexcept
{
    std::uint32_t t = 0;
    for (std::uint32_t const o : spread)
    {
        if (t >= t1)
            return;
        if (o >= c)
            continue;
        std::uint32_t const count = (c - o + stride - 1) / stride;
        for (std::uint32_t m = t0 > t ? t0 - t : 0; m < count && t + m < t1; ++m)
            fn(o + m * stride);
        t += count;
    }
}
} // namespace

void dedup_speculator::stamp_table::reset(std::size_t const need)
{
    std::size_t cap = 64;
    while (cap < 2 * need)
        cap *= 2;
    if (slots.size() < cap)
    {
        slots.assign(cap, entry{});
        epoch = 0;
    }
    if (++epoch == 0) // stamp wrap-around
    {
        std::fill(slots.begin(), slots.end(), entry{});
        epoch = 1;
    }
}

std::uint32_t & dedup_speculator::stamp_table::at(std::uint64_t const key) noexcept
{
    std::size_t const mask = slots.size() - 1;
    std::size_t i = static_cast<std::size_t>(mix64(key)) & mask;
    while (slots[i].stamp == epoch && slots[i].key != key)
        i = (i + 1) & mask;
    if (slots[i].stamp != epoch)
        slots[i] = entry{key, 0, epoch};
    return slots[i].count;
}

std::uint32_t dedup_speculator::stamp_table::find(std::uint64_t const key) const noexcept
{
    std::size_t const mask = slots.size() - 1;
    std::size_t i = static_cast<std::size_t>(mix64(key)) & mask;
    while (slots[i].stamp == epoch && slots[i].key != key)
        i = (i + 1) & mask;
    return slots[i].stamp == epoch ? slots[i].count : 0;
}

dedup_speculator::dedup_speculator(unsigned const threads)
    : threads_{threads < 1 ? 1u : threads}, scratch_(threads_), part_count_(threads_), dups_(threads_)
{
}

// flat_values_[i] = count of flat_keys_[i] for i < n, in parallel over contiguous ranges.
void dedup_speculator::lookup(any_filter const & filter, std::size_t const n)
{
    if (flat_values_.size() < n)
        flat_values_.resize(n);
    any_filter const * const one[1] = {&filter};
    std::span<any_filter const * const> const filters{one, 1};
#pragma omp parallel num_threads(threads_)
    {
        std::size_t const t = static_cast<std::size_t>(omp_get_thread_num());
        std::size_t const nt = static_cast<std::size_t>(omp_get_num_threads());
        std::size_t const k0 = n * t / nt, k1 = n * (t + 1) / nt;
        query_keys(filters, flat_keys_.data() + k0, k1 - k0, flat_values_.data() + k0, scratch_[t]);
    }
    work_.lookups += n;
}

// Like lookup(), for keys that only need to be told hit (count >= min_count before the batch) or not:
// flat_values_[i] = min_count if flat_keys_[i] is in hit_keys_, else 0. hit_keys_ holds only keys that are
// hits, so a unit's hits counted this way never exceed its true hits (a few keys sharing a fingerprint with
// a hit may be missed): a unit it makes known is known, and any other unit is speculated, which is exact.
void dedup_speculator::lookup_hits(any_filter const & filter, std::size_t const n,
                                   std::uint64_t const min_count)
{
    if (!use_hit_keys_)
    {
        lookup(filter, n);
        return;
    }
    if (flat_values_.size() < n)
        flat_values_.resize(n);
#pragma omp parallel num_threads(threads_)
    {
        std::size_t const t = static_cast<std::size_t>(omp_get_thread_num());
        std::size_t const nt = static_cast<std::size_t>(omp_get_num_threads());
        std::size_t const k0 = n * t / nt, k1 = n * (t + 1) / nt;
        hit_keys_.lookup(flat_keys_.data() + k0, k1 - k0, flat_values_.data() + k0, min_count);
    }
    work_.hit_lookups += n;
}

// After a batch: the keys whose addition found min_count - 1 (candidates_, per shard, at the front of
// each shard's part_pos_ range) and whose count is still >= min_count after the rollbacks join hit_keys_.
// Counts before a batch never fall, and a key can only reach min_count through such an addition, so
// hit_keys_ is then every key added with a count >= min_count. Its tables may take at most twice the
// filter's bytes (16 MiB at least), growth included; beyond, hit_keys_ is dropped and lookups go to the
// filter again.
void dedup_speculator::learn_hits(any_filter const & filter, batch_keys const & keys,
                                  std::uint64_t const min_count, bool const rolled_back)
{
    if (!use_hit_keys_)
        return;
    // A candidate's count is >= min_count unless a rolled-back key shares its collision key: only those
    // (the front of flat_keys_; the others fill it from the back) are looked up again.
    std::size_t total = 0, doubtful = 0;
    for (std::uint64_t const c : candidates_)
        total += c;
    if (flat_keys_.size() < total)
        flat_keys_.resize(total);
    // in parallel over shards: each shard's candidates go to their place in cand_keys_ (shard order), with
    // a flag for the doubtful ones; then, serially, the split
    std::size_t const shards = candidates_.size();
    remove_start_.assign(shards + 1, 0);
    for (std::size_t s = 0; s < shards; ++s)
        remove_start_[s + 1] = remove_start_[s] + candidates_[s];
    if (cand_keys_.size() < total)
    {
        cand_keys_.resize(total);
        cand_doubt_.resize(total);
    }
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 4)
    for (std::size_t s = 0; s < shards; ++s)
        for (std::uint64_t j = 0; j < candidates_[s]; ++j)
        {
            std::uint64_t const key = keys.keys[part_pos_[start_[s] + j]];
            bool doubt = false;
            if (rolled_back)
            {
                std::uint64_t const ck = filter.collision_key(key);
                std::uint64_t const bit = mix64(ck) & (correction_bits_.size() * 64 - 1);
                doubt = ((correction_bits_[bit / 64] >> (bit % 64)) & 1) != 0 && corrections_.find(ck) != 0;
            }
            cand_keys_[remove_start_[s] + j] = key;
            cand_doubt_[remove_start_[s] + j] = doubt;
        }
    std::size_t sure = 0;
    for (std::size_t i = 0; i < total; ++i)
    {
        if (cand_doubt_[i])
            flat_keys_[doubtful++] = cand_keys_[i];
        else
            flat_keys_[total - ++sure] = cand_keys_[i];
    }
    lookup(filter, doubtful);
    std::size_t first = doubtful; // flat_keys_[first, total): the keys to learn
    for (std::size_t i = doubtful; i-- > 0;)
        if (flat_values_[i] >= min_count)
            flat_keys_[--first] = flat_keys_[i];
    std::size_t const cap = std::max<std::size_t>(2 * filter.stats().bytes, std::size_t{16} << 20);
    if (!hit_keys_.reserve(total - first, cap))
    {
        use_hit_keys_ = false;
        hit_keys_ = hit_set{};
        return;
    }
    hit_keys_.insert(flat_keys_.data() + first, total - first);
}

void dedup_speculator::run(any_filter & filter, batch_keys const & keys, decision_rule const & rule,
                           std::vector<unit_result> & results, std::string const & filter_name)
{
    std::uint64_t const min_count = rule.min_count;
    // Every stride-th k-mer is sampled. A unit is predicted known when its sample has at least 0.6 x the hit
    // fraction asked: leaning to "known" because a wrong guess of known costs some lookups, a wrong guess of
    // novel adding and removing all its k-mers (on 2 M reads at C = 20, sampling every 8th k-mer: 0.3% of the
    // units rolled back, against 1.5% with the plain fraction; every 16th: 0.4%).
    constexpr double lean_known = 0.6;
    decision_rule const leaning{rule.min_count, rule.min_hit_fraction * lean_known, 0}; // on the sample
    // hit_keys_ holds the hits of one min_count: from another min_count on, lookups go to the filter (with
    // min_count 1 every key is a hit, and the set would copy the filter)
    if (hit_keys_min_count_ == 0 && filter.stats().total_count == 0)
        hit_keys_min_count_ = min_count;
    if (min_count <= 1 || min_count != hit_keys_min_count_)
    {
        use_hit_keys_ = false;
        hit_keys_ = hit_set{};
    }
    std::size_t const n = keys.units();
    results.assign(n, unit_result{});
    hits_.assign(n, 0);
    speculated_.assign(n, 0);
    flat_offset_.resize(n + 1);
    auto gather = [&](auto && take)
    {
        // flat_offset_ from per-unit sizes, then the keys; take(u, fn) calls fn(key) for the keys of u
        flat_offset_[0] = 0;
        for (std::size_t u = 0; u < n; ++u)
            flat_offset_[u + 1] += flat_offset_[u];
        std::size_t const total = flat_offset_[n];
        if (flat_keys_.size() < total)
            flat_keys_.resize(total);
#pragma omp parallel for num_threads(threads_) schedule(static)
        for (std::size_t u = 0; u < n; ++u)
        {
            std::uint64_t * dst = flat_keys_.data() + flat_offset_[u];
            take(u, [&](std::uint64_t const key) noexcept { *dst++ = key; });
        }
        return total;
    };

    // 1. the sample: k-mers 0, 16, 32, ... of each unit
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::size_t u = 0; u < n; ++u)
        flat_offset_[u + 1] = (keys.count[u] + stride - 1) / stride;
    std::size_t const sampled = gather(
        [&](std::size_t const u, auto && put) noexcept
        {
            std::uint64_t const * const k = keys.keys.data() + keys.offset[u];
            for (std::uint32_t j = 0; j < keys.count[u]; j += stride)
                put(k[j]);
        });
    lookup_hits(filter, sampled, min_count);
    // prediction; the other k-mers of predicted-known units
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::size_t u = 0; u < n; ++u)
    {
        std::uint32_t const c = keys.count[u];
        std::uint32_t h = 0;
        for (std::uint64_t i = flat_offset_[u]; i < flat_offset_[u + 1]; ++i)
            h += flat_values_[i] >= min_count;
        std::uint32_t const s = (c + stride - 1) / stride;
        bool const predicted_known = c > 0 && leaning.known(h, s);
        hits_[u] = h;
        speculated_[u] = c > 0 && !predicted_known;
    }
    // The other k-mers of predicted-known units, in rounds: each asks an undecided unit for the fewest
    // further k-mers that could make it known (its last round for all the rest), in a spread order so that
    // the k-mers lost to one sequencing error do not all come first. A unit stops when it is known, or
    // speculated when its misses leave too few k-mers for that.
    need_.resize(n);
    looked_.assign(n, 0);
    active_.clear();
    for (std::size_t u = 0; u < n; ++u)
        if (keys.count[u] > 0 && !speculated_[u])
        {
            need_[u] = static_cast<std::uint32_t>(rule.hits_needed(keys.count[u]));
            if (hits_[u] >= need_[u]) // the sample alone decides (small fractions)
                results[u] = unit_result{keys.count[u], hits_[u], true};
            else
                active_.push_back(static_cast<std::uint32_t>(u));
        }
    auto rest_of = [](std::uint32_t const c) noexcept { return c - (c + stride - 1) / stride; };
    for (unsigned round = 0; !active_.empty(); ++round)
    {
        std::fill(flat_offset_.begin(), flat_offset_.end(), 0);
        for (std::uint32_t const u : active_)
        {
            std::uint32_t const left = rest_of(keys.count[u]) - looked_[u];
            if (hits_[u] + left >= need_[u]) // else it cannot be known before the batch: speculated below
            {
                // rounds 0 to 2 ask for the fewest k-mers that could make the unit known (from round 1 on
                // 1.5 x that: earlier misses show the unit needs more), round 3 for all the rest
                double const ask = round == 0 ? 1.0 : 1.5;
                std::uint32_t const want = static_cast<std::uint32_t>(
                    std::min<double>(left, std::ceil(ask * static_cast<double>(need_[u] - hits_[u]))));
                flat_offset_[u + 1] = round < 3 ? want : left;
            }
        }
        std::size_t const taken = gather(
            [&](std::size_t const u, auto && put) noexcept
            {
                std::uint32_t const want = static_cast<std::uint32_t>(flat_offset_[u + 1] - flat_offset_[u]);
                if (want == 0)
                    return;
                std::uint64_t const * const k = keys.keys.data() + keys.offset[u];
                for_rest(keys.count[u], looked_[u], looked_[u] + want,
                         [&](std::uint32_t const j) noexcept { put(k[j]); });
            });
        lookup_hits(filter, taken, min_count);
        std::size_t still = 0;
        for (std::uint32_t const u : active_)
        {
            std::uint32_t const c = keys.count[u];
            std::uint32_t h = hits_[u];
            for (std::uint64_t i = flat_offset_[u]; i < flat_offset_[u + 1]; ++i)
                h += flat_values_[i] >= min_count;
            hits_[u] = h;
            looked_[u] += static_cast<std::uint32_t>(flat_offset_[u + 1] - flat_offset_[u]);
            if (h >= need_[u])
                results[u] = unit_result{c, h, true}; // known before the batch: known for certain
            else if (h + (rest_of(c) - looked_[u]) < need_[u])
                speculated_[u] = 1;
            else
                active_[still++] = u;
        }
        active_.resize(still);
    }

    // 2. add the keys of speculated units, by shard in input order
    std::size_t const shards = filter.num_shards();
    auto for_each_key = [&](std::size_t const u0, std::size_t const u1, auto && fn) noexcept
    {
        for (std::size_t u = u0; u < u1; ++u)
            if (speculated_[u])
                for (std::uint64_t p = keys.offset[u]; p < keys.offset[u] + keys.count[u]; ++p)
                    fn(p);
    };
    std::uint64_t const total_keys = keys.offset[n];
    if (old_.size() < total_keys)
    {
        old_.resize(total_keys);
        cks_.resize(total_keys);
    }
    partition_units_by_shard(filter, keys, threads_, for_each_key, part_count_, start_, part_, &part_pos_);
    work_.added += start_[shards];
    candidates_.assign(shards, 0);
    std::atomic<bool> full{false};
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
    for (std::size_t s = 0; s < shards; ++s)
    {
        std::uint64_t const a = start_[s], b = start_[s + 1];
        if (a == b)
            continue;
        // old counts land in cks_ (by part position) first, then move to their key's position
        if (filter.add_batch(s, std::span<std::uint64_t const>{part_.data() + a, b - a}, cks_.data() + a) !=
            insert_status::ok)
            full.store(true, std::memory_order_relaxed);
        // the positions of keys that reached min_count here move to the front of the shard's part_pos_
        std::uint64_t m = a;
        for (std::uint64_t i = a; i < b; ++i)
        {
            std::uint64_t const p = part_pos_[i];
            old_[p] = cks_[i];
            part_pos_[m] = p;
            m += cks_[i] + 1 == min_count;
        }
        candidates_[s] = m - a;
    }
    if (full.load())
        throw full_error{full_message(filter, filter_name)};

    // 3. per speculated unit, the hits it would have while every earlier speculated unit is novel. The counts
    // seen include the unit's own earlier copies of a key, so they only overstate hits: a unit that is not
    // known by them is novel, and only the others need those copies taken off (exact_ = 1).
    exact_.assign(n, 0);
    auto make_exact = [&](std::size_t const u, stamp_table & dup) noexcept
    {
        std::uint64_t const off = keys.offset[u];
        std::uint32_t const c = keys.count[u];
        dup.reset(c);
        for (std::uint32_t j = 0; j < c; ++j)
        {
            std::uint64_t const ck = filter.collision_key(keys.keys[off + j]);
            cks_[off + j] = ck;
            old_[off + j] -= dup.at(ck)++;
        }
        exact_[u] = 1;
    };
    // the per-thread tables get their size here, outside the parallel loop (which must not allocate)
    std::uint32_t longest = 0;
    for (std::size_t u = 0; u < n; ++u)
        if (speculated_[u])
            longest = std::max(longest, keys.count[u]);
    for (auto & dup : dups_)
        dup.reset(longest);
    auto count_hits = [&](std::size_t const u) noexcept
    {
        std::uint32_t h = 0;
        std::uint64_t const * const v = old_.data() + keys.offset[u];
        for (std::uint32_t j = 0; j < keys.count[u]; ++j)
            h += v[j] >= min_count;
        return h;
    };
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 256)
    for (std::size_t u = 0; u < n; ++u)
    {
        if (!speculated_[u])
            continue;
        std::uint32_t h = count_hits(u);
        if (rule.known(h, keys.count[u]))
        {
            make_exact(u, dups_[static_cast<std::size_t>(omp_get_thread_num())]);
            h = count_hits(u);
        }
        hits_[u] = h;
    }

    // 4. in input order: decide; a speculated unit that is known is rolled back
    rollback_.clear();
    bool corrected = false;
    // hits of u with the copies of earlier rolled-back units taken off
    auto corrected_hits = [&](std::size_t const u) noexcept
    {
        std::uint64_t const off = keys.offset[u];
        std::uint32_t h = 0;
        for (std::uint32_t j = 0; j < keys.count[u]; ++j)
        {
            std::uint64_t v = old_[off + j];
            if (v >= min_count)
            {
                std::uint64_t const ck = exact_[u] ? cks_[off + j] : filter.collision_key(keys.keys[off + j]);
                std::uint64_t const bit = mix64(ck) & (correction_bits_.size() * 64 - 1);
                if ((correction_bits_[bit / 64] >> (bit % 64)) & 1)
                    v -= corrections_.find(ck);
            }
            h += v >= min_count;
        }
        return h;
    };
    for (std::size_t u = 0; u < n; ++u)
    {
        if (!speculated_[u])
            continue;
        std::uint64_t const off = keys.offset[u];
        std::uint32_t const c = keys.count[u];
        // hits_[u] is an upper bound (corrections and copies only take hits off): a unit it leaves novel is
        // novel, without a look at its keys
        std::uint32_t h = corrected && rule.known(hits_[u], c) ? corrected_hits(u) : hits_[u];
        if (rule.known(h, c) && !exact_[u])
        {
            make_exact(u, dups_[0]);
            h = corrected ? corrected_hits(u) : count_hits(u);
        }
        bool const known = rule.known(h, c);
        results[u] = unit_result{c, h, known};
        if (!known)
            continue;
        if (!corrected)
        {
            corrected = true;
            corrections_.reset(c);
            correction_bits_.assign(1024, 0); // 65536 bits
        }
        else if (2 * (rollback_.size() + c) > corrections_.slots.size())
        {
            // grow: re-insert every rolled-back key
            stamp_table bigger;
            bigger.reset(rollback_.size() + c);
            for (std::uint64_t const key : rollback_)
                ++bigger.at(filter.collision_key(key));
            corrections_ = std::move(bigger);
        }
        for (std::uint32_t j = 0; j < c; ++j)
        {
            std::uint64_t const ck = cks_[off + j];
            ++corrections_.at(ck);
            std::uint64_t const bit = mix64(ck) & (correction_bits_.size() * 64 - 1);
            correction_bits_[bit / 64] |= std::uint64_t{1} << (bit % 64);
            rollback_.push_back(keys.keys[off + j]);
        }
        ++work_.rolled_back_units;
    }
    // 5. the rolled-back units' keys leave the filter, shard by shard in parallel (a table is the same for
    // any order of removals: deterministic). part_ is free again after step 2.
    if (!rollback_.empty())
    {
        remove_start_.assign(shards + 1, 0);
        for (std::uint64_t const key : rollback_)
            ++remove_start_[filter.shard_of(key) + 1];
        for (std::size_t sh = 0; sh < shards; ++sh)
            remove_start_[sh + 1] += remove_start_[sh];
        if (part_.size() < rollback_.size())
            part_.resize(rollback_.size());
        for (std::uint64_t const key : rollback_)
            part_[remove_start_[filter.shard_of(key)]++] = key;
        for (std::size_t sh = shards; sh > 0; --sh)
            remove_start_[sh] = remove_start_[sh - 1];
        remove_start_[0] = 0;
        std::atomic<bool> failed{false};
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
        for (std::size_t sh = 0; sh < shards; ++sh)
            for (std::uint64_t i = remove_start_[sh]; i < remove_start_[sh + 1]; ++i)
                if (!filter.remove(part_[i], 1))
                    failed.store(true, std::memory_order_relaxed);
        if (failed.load())
            throw error{"internal error: dedup could not remove a k-mer it added (" + filter_name + ")"};
    }
    work_.removed += rollback_.size();
    learn_hits(filter, keys, min_count, corrected);
}

} // namespace ksieve
