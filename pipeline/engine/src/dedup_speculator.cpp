// dedup by speculation (dedup_speculator): a sample predicts each unit's class, the units predicted
// novel add their k-mers at once, and those that turn out known are rolled back, for the serial
// definition's classes and filter contents.
#include "engine_detail.hpp"
#include <ksieve/engine/dedup.hpp>
#include <ksieve/engine/resources.hpp>
#include <ksieve/filters/support/error.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

#include <omp.h>

namespace ksieve
{

namespace
{
// Sampled positions are 0, 16, 32, ...; the others are visited offset by offset in this order
// (bit-reversed, so the first ones spread over the read), each offset's positions increasing.
constexpr std::uint32_t stride = 16;
constexpr std::array<std::uint32_t, stride - 1> spread{8, 4, 12, 2, 10, 6, 14, 1,
                                                       9, 5, 13, 3, 11, 7, 15};

// fn(j) for the non-sampled positions j of a unit of c keys of ranks [t0, t1) in the spread order.
template <typename Fn>
void for_rest(std::uint32_t const c, std::uint32_t const t0, std::uint32_t const t1,
              Fn && fn) noexcept
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

// The sampled k-mers of a unit of c k-mers, and the others.
constexpr std::uint32_t sampled_of(std::uint32_t const c) noexcept
{
    return (c + stride - 1) / stride;
}
constexpr std::uint32_t rest_of(std::uint32_t const c) noexcept
{
    return c - sampled_of(c);
}

// A unit is predicted known when its sample has at least 0.6 x the hit fraction asked: a wrong
// guess of known costs some lookups, one of novel adding and removing all its k-mers (on 2 M reads
// at C = 20: 0.4% of the units rolled back, against 1.5% with the plain fraction).
constexpr double lean_known = 0.6;

// Rounds 0 to 2 of a predicted-known unit ask for the fewest k-mers that could make it known (from
// round 1 on 1.5 x that: earlier misses show it needs more), round 3 for all the rest.
constexpr unsigned last_round = 3;

// A unit of more k-mers than this has its own earlier copies counted by sorting
// (make_exact_sorted), not in a table: every thread's table sized for it would cost 32 to 64 bytes
// per k-mer of it.
constexpr std::uint32_t table_keys = std::uint32_t{1} << 16;
} // namespace

dedup_speculator::dedup_speculator(unsigned const threads)
    : threads_{threads < 1 ? 1u : threads}, scratch_(threads_), part_count_(threads_),
      dups_(threads_)
{
    reserve_openmp_threads(threads_);
}

void dedup_speculator::run(any_filter & filter, batch_keys const & keys, decision_rule const & rule,
                           std::vector<unit_result> & results, std::string const & filter_name)
{
    choose_hit_lookups(filter, rule.min_count);
    std::size_t const n = keys.units();
    results.assign(n, unit_result{});
    hits_.assign(n, 0);
    speculated_.assign(n, 0);
    flat_offset_.resize(n + 1);
    predict(filter, keys, rule);
    confirm_predicted_known(filter, keys, rule, results);
    add_speculated(filter, keys, rule.min_count, filter_name);
    count_speculated_hits(filter, keys, rule);
    bool const rolled_back = decide_in_order(filter, keys, rule, results);
    remove_rolled_back(filter, filter_name);
    learn_hits(filter, keys, rule.min_count, rolled_back);
}

// hit_keys_ holds the hits of one min_count: from another min_count on, lookups go to the filter
// (with min_count 1 every key is a hit, and the set would copy the filter).
void dedup_speculator::choose_hit_lookups(any_filter const & filter, std::uint64_t const min_count)
{
    if (hit_keys_min_count_ == 0 && filter.stats().total_count == 0)
        hit_keys_min_count_ = min_count;
    if (min_count <= 1 || min_count != hit_keys_min_count_)
        drop_hit_keys();
}

void dedup_speculator::drop_hit_keys()
{
    use_hit_keys_ = false;
    hit_keys_ = hit_set{};
}

// From flat_offset_[u + 1] = the number of keys of unit u to take: flat_offset_ becomes their
// offsets, and take(u, put) puts u's keys into flat_keys_ from flat_offset_[u]. \returns the total.
template <typename Take>
std::size_t dedup_speculator::gather(std::size_t const n, Take const & take)
{
    flat_offset_[0] = 0;
    for (std::size_t u = 0; u < n; ++u)
        flat_offset_[u + 1] += flat_offset_[u];
    std::size_t const total = flat_offset_[n];
    detail::grow(total, flat_keys_);
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::size_t u = 0; u < n; ++u)
    {
        std::uint64_t * dst = flat_keys_.data() + flat_offset_[u];
        take(u, [&](std::uint64_t const key) noexcept { *dst++ = key; });
    }
    return total;
}

// Step 1, the sample: k-mers 0, 16, 32, ... of each unit are looked up. A unit whose sample leans
// known is predicted known (hits_[u]: the sample's hits), any other unit with k-mers is speculated
// novel.
void dedup_speculator::predict(any_filter const & filter, batch_keys const & keys,
                               decision_rule const & rule)
{
    std::size_t const n = keys.units();
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::size_t u = 0; u < n; ++u)
        flat_offset_[u + 1] = sampled_of(keys.count[u]);
    std::size_t const sampled = gather(n,
                                       [&](std::size_t const u, auto && put) noexcept
                                       {
                                           std::uint64_t const * const k =
                                               keys.keys.data() + keys.offset[u];
                                           for (std::uint32_t j = 0; j < keys.count[u]; j += stride)
                                               put(k[j]);
                                       });
    lookup_hits(filter, sampled, rule.min_count);
    decision_rule const leaning{rule.min_count, rule.min_hit_fraction * lean_known, 0};
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::size_t u = 0; u < n; ++u)
    {
        std::uint32_t const c = keys.count[u];
        std::uint32_t h = 0;
        for (std::uint64_t i = flat_offset_[u]; i < flat_offset_[u + 1]; ++i)
            h += rule.hit(flat_values_[i]);
        bool const predicted_known = c > 0 && leaning.known(h, sampled_of(c));
        hits_[u] = h;
        speculated_[u] = c > 0 && !predicted_known;
    }
}

// Step 1, the units predicted known: their other k-mers are looked up in rounds (last_round) in the
// spread order. A unit stops when it is known (before the batch, so known for certain), or is
// speculated when its misses leave too few k-mers for that.
void dedup_speculator::confirm_predicted_known(any_filter const & filter, batch_keys const & keys,
                                               decision_rule const & rule,
                                               std::vector<unit_result> & results)
{
    std::size_t const n = keys.units();
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
    for (unsigned round = 0; !active_.empty(); ++round)
    {
        lookup_hits(filter, gather_round(keys, round), rule.min_count);
        settle_round(keys, rule, results);
    }
}

// The keys that a round asks of the active units, into flat_keys_. \returns their number.
std::size_t dedup_speculator::gather_round(batch_keys const & keys, unsigned const round)
{
    std::fill(flat_offset_.begin(), flat_offset_.end(), 0);
    for (std::uint32_t const u : active_)
    {
        std::uint32_t const left = rest_of(keys.count[u]) - looked_[u];
        if (hits_[u] + left >=
            need_[u]) // else it cannot be known before the batch: speculated below
        {
            double const ask = round == 0 ? 1.0 : 1.5;
            std::uint32_t const want = static_cast<std::uint32_t>(
                std::min<double>(left, std::ceil(ask * static_cast<double>(need_[u] - hits_[u]))));
            flat_offset_[u + 1] = round < last_round ? want : left;
        }
    }
    return gather(keys.units(),
                  [&](std::size_t const u, auto && put) noexcept
                  {
                      std::uint32_t const want =
                          static_cast<std::uint32_t>(flat_offset_[u + 1] - flat_offset_[u]);
                      if (want == 0)
                          return;
                      std::uint64_t const * const k = keys.keys.data() + keys.offset[u];
                      for_rest(keys.count[u], looked_[u], looked_[u] + want,
                               [&](std::uint32_t const j) noexcept { put(k[j]); });
                  });
}

// After a round's lookups: each active unit is known, speculated, or stays active.
void dedup_speculator::settle_round(batch_keys const & keys, decision_rule const & rule,
                                    std::vector<unit_result> & results)
{
    std::size_t still = 0;
    for (std::uint32_t const u : active_)
    {
        std::uint32_t const c = keys.count[u];
        std::uint32_t h = hits_[u];
        for (std::uint64_t i = flat_offset_[u]; i < flat_offset_[u + 1]; ++i)
            h += rule.hit(flat_values_[i]);
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

// Step 2: the keys of the speculated units are added, by shard in input order; old_[p] = key p's
// count just before. Per shard, the positions of the keys that reached min_count by their addition
// move to the front of its part_pos_ range (candidates_[s] of them), for learn_hits().
void dedup_speculator::add_speculated(any_filter & filter, batch_keys const & keys,
                                      std::uint64_t const min_count,
                                      std::string const & filter_name)
{
    std::size_t const n = keys.units();
    std::size_t const shards = filter.num_shards();
    auto for_each_key = [&](std::size_t const u0, std::size_t const u1, auto && fn) noexcept
    {
        for (std::size_t u = u0; u < u1; ++u)
            if (speculated_[u])
                for (std::uint64_t p = keys.offset[u]; p < keys.offset[u] + keys.count[u]; ++p)
                    fn(p);
    };
    std::uint64_t const total_keys = keys.offset[n];
    detail::grow(total_keys, old_, cks_);
    detail::partition_units_by_shard(filter, keys, threads_, for_each_key, part_count_, start_,
                                     part_, &part_pos_);
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
        if (filter.add_batch(s, std::span<std::uint64_t const>{part_.data() + a, b - a},
                             cks_.data() + a) != insert_status::ok)
            full.store(true, std::memory_order_relaxed);
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
        detail::throw_full(filter, filter_name);
}

// Step 3: per speculated unit, its hits while every earlier speculated unit is novel. The counts
// seen include the unit's own earlier copies of a key, so they only overstate hits: only a unit
// known by them needs those copies taken off (make_exact).
void dedup_speculator::count_speculated_hits(any_filter const & filter, batch_keys const & keys,
                                             decision_rule const & rule)
{
    std::size_t const n = keys.units();
    exact_.assign(n, 0);
    // the per-thread tables are sized outside the parallel loop (which must not allocate); the
    // longer units are made exact after it
    std::uint32_t longest = 0;
    for (std::size_t u = 0; u < n; ++u)
        if (speculated_[u] && keys.count[u] <= table_keys)
            longest = std::max(longest, keys.count[u]);
    for (auto & dup : dups_)
        dup.reset(longest);
    pending_.assign(n, 0);
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 256)
    for (std::size_t u = 0; u < n; ++u)
    {
        if (!speculated_[u])
            continue;
        std::uint32_t h = count_hits(keys, u, rule);
        if (rule.known(h, keys.count[u]))
        {
            if (keys.count[u] > table_keys)
                pending_[u] = 1;
            else
            {
                make_exact(filter, keys, u, dups_[static_cast<std::size_t>(omp_get_thread_num())]);
                h = count_hits(keys, u, rule);
            }
        }
        hits_[u] = h;
    }
    for (std::size_t u = 0; u < n; ++u)
        if (pending_[u])
        {
            make_exact_sorted(filter, keys, u);
            hits_[u] = count_hits(keys, u, rule);
        }
}

// The hits of unit u by old_.
std::uint32_t dedup_speculator::count_hits(batch_keys const & keys, std::size_t const u,
                                           decision_rule const & rule) const noexcept
{
    std::uint32_t h = 0;
    std::uint64_t const * const v = old_.data() + keys.offset[u];
    for (std::uint32_t j = 0; j < keys.count[u]; ++j)
        h += rule.hit(v[j]);
    return h;
}

// old_ of unit u without its own earlier copies of each key (counted by collision key in dup);
// cks_ of its keys = their collision keys; exact_[u] = 1.
void dedup_speculator::make_exact(any_filter const & filter, batch_keys const & keys,
                                  std::size_t const u, detail::stamp_table & dup) noexcept
{
    std::uint64_t const off = keys.offset[u];
    std::uint32_t const c = keys.count[u];
    dup.reset(c);
    for (std::uint32_t j = 0; j < c; ++j)
    {
        std::uint64_t const ck = filter.growable()->collision_key(keys.keys[off + j]);
        cks_[off + j] = ck;
        old_[off + j] -= dup.at(ck)++;
    }
    exact_[u] = 1;
}

// make_exact() for long units, without a table: the unit's positions sorted by (collision key,
// position), so that the copies of a key follow each other in input order.
void dedup_speculator::make_exact_sorted(any_filter const & filter, batch_keys const & keys,
                                         std::size_t const u)
{
    std::uint64_t const off = keys.offset[u];
    std::uint32_t const c = keys.count[u];
    order_.resize(c);
    for (std::uint32_t j = 0; j < c; ++j)
    {
        cks_[off + j] = filter.growable()->collision_key(keys.keys[off + j]);
        order_[j] = j;
    }
    std::uint64_t const * const ck = cks_.data() + off;
    std::sort(order_.begin(), order_.end(),
              [&](std::uint32_t const a, std::uint32_t const b)
              { return ck[a] < ck[b] || (ck[a] == ck[b] && a < b); });
    std::uint32_t copies = 0; // earlier copies of the key at order_[i]
    for (std::uint32_t i = 0; i < c; ++i)
    {
        copies = i > 0 && ck[order_[i]] == ck[order_[i - 1]] ? copies + 1 : 0;
        old_[off + order_[i]] -= copies;
    }
    exact_[u] = 1;
}

// Step 4, serial in input order: each speculated unit is decided; one that is known is rolled back.
// \returns whether any unit was.
bool dedup_speculator::decide_in_order(any_filter const & filter, batch_keys const & keys,
                                       decision_rule const & rule,
                                       std::vector<unit_result> & results)
{
    rollback_.clear();
    bool corrected = false;
    for (std::size_t u = 0; u < keys.units(); ++u)
    {
        if (!speculated_[u])
            continue;
        std::uint32_t const c = keys.count[u];
        // hits_[u] is an upper bound (corrections and copies only take hits off): a unit it leaves
        // novel is novel, without a look at its keys
        std::uint32_t h =
            corrected && rule.known(hits_[u], c) ? corrected_hits(filter, keys, u, rule) : hits_[u];
        if (rule.known(h, c) && !exact_[u])
        {
            if (c > table_keys)
                make_exact_sorted(filter, keys, u);
            else
                make_exact(filter, keys, u, dups_[0]);
            h = corrected ? corrected_hits(filter, keys, u, rule) : count_hits(keys, u, rule);
        }
        bool const known = rule.known(h, c);
        results[u] = unit_result{c, h, known};
        if (!known)
            continue;
        roll_back(filter, keys, u, !corrected);
        corrected = true;
    }
    return corrected;
}

// The hits of unit u by old_ with the copies added by earlier rolled-back units taken off.
std::uint32_t dedup_speculator::corrected_hits(any_filter const & filter, batch_keys const & keys,
                                               std::size_t const u,
                                               decision_rule const & rule) const noexcept
{
    std::uint64_t const off = keys.offset[u];
    std::uint32_t h = 0;
    for (std::uint32_t j = 0; j < keys.count[u]; ++j)
    {
        std::uint64_t v = old_[off + j];
        if (rule.hit(v))
            v -= rolled_back_copies(
                exact_[u] ? cks_[off + j] : filter.growable()->collision_key(keys.keys[off + j]));
        h += rule.hit(v);
    }
    return h;
}

// Unit u (exact_[u]) turned out known: its keys are counted in corrections_, marked in
// correction_bits_ and queued in rollback_. `first`: the batch's first rollback.
void dedup_speculator::roll_back(any_filter const & filter, batch_keys const & keys,
                                 std::size_t const u, bool const first)
{
    std::uint64_t const off = keys.offset[u];
    std::uint32_t const c = keys.count[u];
    if (first)
    {
        corrections_.reset(c);
        correction_bits_.assign(1024, 0); // 65536 bits
    }
    else if (2 * (rollback_.size() + c) > corrections_.capacity())
    {
        // grow: re-insert every rolled-back key
        corrections_.reset(rollback_.size() + c);
        for (std::uint64_t const key : rollback_)
            ++corrections_.at(filter.growable()->collision_key(key));
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

// The copies of collision key ck that the batch's rolled-back units added (most keys: one bit
// tested). \pre a unit of this batch was rolled back.
std::uint32_t dedup_speculator::rolled_back_copies(std::uint64_t const ck) const noexcept
{
    std::uint64_t const bit = mix64(ck) & (correction_bits_.size() * 64 - 1);
    if (((correction_bits_[bit / 64] >> (bit % 64)) & 1) == 0)
        return 0;
    return corrections_.find(ck);
}

// Step 5: the rolled-back units' keys leave the filter, shard by shard in parallel (a table is the
// same for any order of removals: deterministic).
void dedup_speculator::remove_rolled_back(any_filter & filter, std::string const & filter_name)
{
    if (!rollback_.empty())
    {
        // the batch's lookups are done: the first thread's scratch sorts the keys by shard
        batch_engine_query_scratch & s = scratch_[0];
        detail::partition_by_shard(filter, rollback_.data(), rollback_.size(), s.part, s.index,
                                   s.start);
        std::size_t const shards = filter.num_shards();
        std::atomic<bool> failed{false};
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
        for (std::size_t sh = 0; sh < shards; ++sh)
            for (std::size_t p = s.start[sh]; p < s.start[sh + 1]; ++p)
                if (!filter.remove(rollback_[s.index[p]], 1))
                    failed.store(true, std::memory_order_relaxed);
        if (failed.load())
            throw error{"internal error: dedup could not remove a k-mer it added (" + filter_name +
                        ")"};
    }
    work_.removed += rollback_.size();
}

// flat_values_[i] = count of flat_keys_[i] for i < n, in parallel over contiguous ranges.
void dedup_speculator::lookup(any_filter const & filter, std::size_t const n)
{
    detail::grow(n, flat_values_);
    any_filter const * const one[1] = {&filter};
    detail::query_keys_parallel(std::span<any_filter const * const>{one, 1}, flat_keys_.data(), n,
                                flat_values_.data(), scratch_, threads_);
    work_.lookups += n;
}

// lookup() where only "hit or not" counts: flat_values_[i] = min_count if flat_keys_[i] is in
// hit_keys_, else 0. hit_keys_ holds only hits, so these hits never exceed the true ones: a unit
// they make known is known, and any other unit is speculated, which is exact.
void dedup_speculator::lookup_hits(any_filter const & filter, std::size_t const n,
                                   std::uint64_t const min_count)
{
    if (!use_hit_keys_)
    {
        lookup(filter, n);
        return;
    }
    detail::grow(n, flat_values_);
#pragma omp parallel num_threads(threads_)
    {
        detail::thread_share const share = detail::share_of(n);
        hit_keys_.lookup(flat_keys_.data() + share.begin, share.end - share.begin,
                         flat_values_.data() + share.begin, min_count);
    }
    work_.hit_lookups += n;
}

// After a batch: the keys whose addition found min_count - 1 (candidates_) and whose count is still
// >= min_count after the rollbacks join hit_keys_ (a key reaches min_count only by such an
// addition). Beyond its memory cap (the class comment), hit_keys_ is dropped.
void dedup_speculator::learn_hits(any_filter const & filter, batch_keys const & keys,
                                  std::uint64_t const min_count, bool const rolled_back)
{
    if (!use_hit_keys_)
        return;
    // A candidate's count is >= min_count unless a rolled-back key shares its collision key: only
    // those (the front of flat_keys_; the others fill it from the back) are looked up again.
    std::size_t total = 0, doubtful = 0;
    for (std::uint64_t const c : candidates_)
        total += c;
    detail::grow(total, flat_keys_);
    // in parallel over shards: each shard's candidates go to their place in cand_keys_ (shard
    // order), with a flag for the doubtful ones; then, serially, the split
    std::size_t const shards = candidates_.size();
    cand_start_.assign(shards + 1, 0);
    for (std::size_t s = 0; s < shards; ++s)
        cand_start_[s + 1] = cand_start_[s] + candidates_[s];
    detail::grow(total, cand_keys_, cand_doubt_);
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 4)
    for (std::size_t s = 0; s < shards; ++s)
        for (std::uint64_t j = 0; j < candidates_[s]; ++j)
        {
            std::uint64_t const key = keys.keys[part_pos_[start_[s] + j]];
            bool doubt = false;
            if (rolled_back)
                doubt = rolled_back_copies(filter.growable()->collision_key(key)) != 0;
            cand_keys_[cand_start_[s] + j] = key;
            cand_doubt_[cand_start_[s] + j] = doubt;
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
        if (flat_values_[i] >= min_count) // (a doubtful key is learnt only if still a hit)
            flat_keys_[--first] = flat_keys_[i];
    std::size_t const cap = std::max<std::size_t>(filter.stats().bytes / 2, std::size_t{16} << 20);
    if (!hit_keys_.reserve(total - first, cap))
    {
        drop_hit_keys();
        return;
    }
    hit_keys_.insert(flat_keys_.data() + first, total - first);
}

} // namespace ksieve
