// The batch engine: keys of record batches, their lookups (max over filters, the parts of a split
// counted as their merge), per-unit decisions, and insertions shard by shard in input order.
#include "engine_detail.hpp"
#include <ksieve/engine/engine.hpp>
#include <ksieve/engine/resources.hpp>
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

#include <omp.h>

namespace ksieve
{

namespace detail
{

[[noreturn]] void throw_full(any_filter const & filter, std::string const & filter_name)
{
    std::string const what =
        filter_name == "dedup" ? std::string{"the dedup filter"} : "filter '" + filter_name + "'";
    bool const quotient = filter.type() == filter_type::quotient;
    // A shard that doubles needs twice its bytes more: a growth refused by the memory budget.
    std::uint64_t const used = charged_memory();
    if (quotient && used + 2 * (used / filter.num_shards()) > memory_limit())
        throw full_error{what + " cannot grow: it holds " + format_bytes(used) +
                         " of the memory limit of " + format_bytes(memory_limit()) +
                         (memory_limit_is_explicit() ? std::string{" (raise --max-memory)"}
                                                     : " (" + memory_limit_origin() + ")")};
    auto const * const q = dynamic_cast<sharded_filter<quotient_filter> const *>(&filter);
    bool could_grow = q != nullptr;
    for (std::size_t s = 0; could_grow && s < filter.num_shards(); ++s)
        could_grow = q->shard(s).can_grow();
    if (could_grow) // every shard has a larger geometry left: the allocation of one failed
        throw memory_error("growing " + what);
    if (quotient)
        throw full_error{what + " is full: the quotient filter cannot grow further, its "
                                "fingerprints (sized by --expected) have too few remainder bits "
                                "left (raise --expected, or leave it out for the default design "
                                "size of 2^30 k-mers)"};
    throw full_error{what + " is full: the " + std::string{to_string(filter.type())} +
                     " filter cannot take more k-mers (raise --expected, or use --type qf, which "
                     "grows)"};
}

void partition_by_shard(any_filter const & f, std::uint64_t const * keys, std::size_t const n,
                        std::vector<std::uint64_t> & part, std::vector<std::uint32_t> & index,
                        std::vector<std::size_t> & start)
{
    std::size_t const shards = f.num_shards();
    start.assign(shards + 1, 0);
    for (std::size_t i = 0; i < n; ++i)
        ++start[f.shard_of(keys[i]) + 1];
    for (std::size_t s = 0; s < shards; ++s)
        start[s + 1] += start[s];
    detail::grow(n, part, index);
    // start[s] becomes the running insert position (ending at the start of s + 1), then shifts back
    for (std::size_t i = 0; i < n; ++i)
    {
        std::size_t const s = f.shard_of(keys[i]);
        std::size_t const p = start[s]++;
        part[p] = f.local_key(keys[i]);
        index[p] = static_cast<std::uint32_t>(i);
    }
    for (std::size_t s = shards; s > 0; --s)
        start[s] = start[s - 1];
    start[0] = 0;
}

// The filters' units (unit[i]: the first filter of filter i's unit). The quotient-filter parts of
// one split (build --part) that do not overlap count as one filter, their merge: a k-mer's count is
// the sum of theirs, as in the full build, where a fingerprint shared by keys of several parts
// holds their summed count. Every other filter is a unit of its own.
void assign_units(std::span<any_filter const * const> const filters,
                  std::vector<std::uint32_t> & unit)
{
    std::size_t const nf = filters.size();
    unit.resize(nf);
    for (std::size_t i = 0; i < nf; ++i)
        unit[i] = static_cast<std::uint32_t>(i);
    auto part_of_split = [&](std::size_t const i, std::uint64_t const split)
    {
        key_parts const & p = filters[i]->parts();
        return filters[i]->type() == filter_type::quotient && p.split == split && !p.complete();
    };
    auto overlap = [&](std::size_t const i, std::size_t const j)
    {
        std::vector<std::uint64_t> const &a = filters[i]->parts().held,
                                         &b = filters[j]->parts().held;
        for (std::size_t w = 0; w < a.size() && w < b.size(); ++w)
            if ((a[w] & b[w]) != 0)
                return true;
        return false;
    };
    for (std::size_t i = 0; i < nf; ++i)
    {
        std::uint64_t const split = filters[i]->parts().split;
        bool first = part_of_split(i, split); // the first filter of its split
        for (std::size_t m = 0; m < i && first; ++m)
            first = !part_of_split(m, split);
        if (!first)
            continue;
        bool disjoint = true;
        for (std::size_t j = i + 1; j < nf; ++j)
        {
            if (!part_of_split(j, split))
                continue;
            for (std::size_t m = i; m < j; ++m)
                if (part_of_split(m, split) && overlap(m, j))
                    disjoint = false;
        }
        for (std::size_t j = i + 1; j < nf && disjoint; ++j)
            if (part_of_split(j, split))
                unit[j] = static_cast<std::uint32_t>(i);
    }
}

// out[j] = count of keys[j] in filter f, for n keys (one thread). A filter that counts whole keys
// across its shards in one pipeline (any_filter::count_keys) takes them as they are; the others are
// given the keys partitioned by shard.
void count_in(any_filter const & f, std::uint64_t const * const keys, std::size_t const n,
              std::uint64_t * const counts, batch_engine_query_scratch & s)
{
    if (!f.count_keys(std::span<std::uint64_t const>{keys, n}, counts))
    {
        partition_by_shard(f, keys, n, s.part, s.index, s.start);
        detail::grow(s.part.size(), s.result);
        for (std::size_t sh = 0; sh + 1 < s.start.size(); ++sh)
            if (s.start[sh + 1] > s.start[sh])
                f.count_batch(sh,
                              std::span<std::uint64_t const>{s.part.data() + s.start[sh],
                                                             s.start[sh + 1] - s.start[sh]},
                              s.result.data() + s.start[sh]);
        for (std::size_t p = 0; p < n; ++p)
            counts[s.index[p]] = s.result[p];
    }
    // A Bloom or cuckoo filter of some parts of the key space (build --part) answers only for keys
    // there: elsewhere its answers could only be false positives. A quotient filter part keeps
    // them: a fingerprint it shares with a key of another part answers as in the full build.
    key_parts const & parts = f.parts();
    if (!parts.complete() && f.type() != filter_type::quotient)
        for (std::size_t p = 0; p < n; ++p)
            if (!parts.holds_key(keys[p]))
                counts[p] = 0;
}

void query_keys(std::span<any_filter const * const> const filters, std::uint64_t const * const keys,
                std::size_t const n, std::uint64_t * const best, batch_engine_query_scratch & s)
{
    assign_units(filters, s.unit);
    for (std::size_t fi = 0; fi < filters.size(); ++fi)
    {
        if (s.unit[fi] != fi)
            continue; // counted with the first filter of its unit
        if (fi > 0)
            detail::grow(n, s.counts);
        std::uint64_t * const counts = fi == 0 ? best : s.counts.data(); // in key order
        count_in(*filters[fi], keys, n, counts, s);
        for (std::size_t fj = fi + 1; fj < filters.size(); ++fj)
            if (s.unit[fj] == fi)
            {
                detail::grow(n, s.more);
                count_in(*filters[fj], keys, n, s.more.data(), s);
                for (std::size_t p = 0; p < n; ++p)
                    counts[p] += s.more[p];
            }
        if (fi > 0)
            for (std::size_t p = 0; p < n; ++p)
                best[p] = std::max(best[p], counts[p]);
    }
}

void query_keys_parallel(std::span<any_filter const * const> const filters,
                         std::uint64_t const * const keys, std::size_t const n,
                         std::uint64_t * const best,
                         std::span<batch_engine_query_scratch> const scratch,
                         unsigned const threads)
{
    region_error failure;
#pragma omp parallel num_threads(threads)
    failure.run(
        [&]
        {
            thread_share const share = share_of(n);
            query_keys(filters, keys + share.begin, share.end - share.begin, best + share.begin,
                       scratch[share.thread]);
        });
    failure.rethrow_if_set();
}

} // namespace detail

using detail::partition_units_by_shard;
using detail::throw_full;

batch_engine::~batch_engine() = default;

batch_engine::batch_engine(kmer_params const & kmer, unsigned const threads,
                           key_part_range const * const range)
    : kmer_{kmer}, scanner_{kmer.k, kmer.canonical, kmer.code_mask()}, hasher_{kmer.k, kmer.seed},
      threads_{std::max(1u, threads)}, range_{range != nullptr ? *range : key_part_range{}},
      use_range_{range_.count > 1}
{
    if (kmer.masked() && (!kmer.sampled() || kmer.k < min_masked_k))
        throw error{"a low-complexity mask needs minimizer sampling and k >= " +
                    std::to_string(min_masked_k)};
    if (kmer.is_spaced() && (!kmer.sampled() || !valid_spaced(kmer.k, kmer.canonical, kmer.spaced)))
        throw error{"spaced k-mers need minimizer sampling and a valid pattern"};
    reserve_openmp_threads(threads_);
}

std::size_t batch_engine::sampled_context(sequence_piece const & piece, key_scratch & s,
                                          std::size_t & own_first, std::size_t & own_last) const
{
    std::string_view const seq = piece.record;
    std::size_t const k = kmer_.k;
    std::size_t const w = kmer_.window;
    std::size_t const positions = seq.size() < k ? 0 : seq.size() - k + 1;
    std::size_t const b = std::min(piece.begin, positions), e = std::min(piece.end, positions);
    // the valid k-mers that start in [lo, hi)
    auto valid_in = [&](std::size_t const lo, std::size_t const hi)
    { return lo < hi ? scanner_.count(seq.substr(lo, hi - lo + k - 1)) : std::size_t{0}; };
    std::size_t lo = b;
    for (std::size_t step = 1; lo > 0 && valid_in(lo, b) == 0; step *= 2)
        lo = b > step ? b - step : 0;
    std::size_t hi = e;
    for (std::size_t step = std::max<std::size_t>(w - 1, 1);
         hi < positions && valid_in(e, hi) < w - 1; step *= 2)
        hi = std::min(positions, e + step);
    std::size_t const span = hi > lo ? hi - lo : 0;
    detail::grow(span, s.keys, s.order);
    std::size_t n = 0;
    own_first = own_last = 0;
    if (span == 0)
        return 0;
    scanner_.for_each(seq.substr(lo, span + k - 1),
                      [&](std::size_t const p, std::uint64_t const code) noexcept
                      {
                          s.keys[n] = code; // hashed only if selected
                          s.order[n] = minimizer_order(code, kmer_.seed);
                          own_first += lo + p < b;
                          own_last += lo + p < e;
                          ++n;
                      });
    return n;
}

template <typename Sequences>
void batch_engine::extract_units(std::size_t const n, Sequences const & sequences,
                                 batch_keys & out) const
{
    out.count.resize(n);
    out.offset.resize(n + 1);
    // Without a key range or sampling the number of keys of a unit is known before hashing: exact
    // offsets. Otherwise offsets are upper bounds, and a sampled batch is compacted afterwards, so
    // that the keys of consecutive units are contiguous (a range keeps its gaps: build --part only
    // inserts).
    std::size_t const k = kmer_.k;
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::size_t u = 0; u < n; ++u)
    {
        std::size_t c = 0;
        sequences(u,
                  [&](sequence_piece const & p)
                  {
                      std::size_t const b = std::min(p.begin, p.record.size());
                      std::size_t const e = p.end >= p.record.size()
                                                ? p.record.size()
                                                : std::min(p.record.size(), p.end + k - 1);
                      c += use_range_ ? e - b : scanner_.count(p.record.substr(b, e - b));
                  });
        out.offset[u + 1] = c;
    }
    out.offset[0] = 0;
    for (std::size_t u = 0; u < n; ++u)
        out.offset[u + 1] += out.offset[u];
    std::uint64_t const total = out.offset[n];
    detail::grow(total, out.keys);
    detail::grow(threads_, key_scratch_);
    detail::region_error failure; // a scratch that cannot grow
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 256)
    for (std::size_t u = 0; u < n; ++u)
        failure.run(
            [&]
            {
                key_scratch & s = key_scratch_[static_cast<std::size_t>(omp_get_thread_num())];
                std::uint64_t * const dst = out.keys.data() + out.offset[u];
                std::uint32_t c = 0;
                auto emit = [&](std::uint64_t const h) noexcept
                {
                    if (!use_range_ || range_.contains(h))
                        dst[c++] = h;
                };
                sequences(u, [&](sequence_piece const & p) { for_each_key(p, s, emit); });
                out.count[u] = c;
            });
    failure.rethrow_if_set();
    if (kmer_.sampled() && !use_range_)
    {
        std::uint64_t at = 0;
        for (std::size_t u = 0; u < n; ++u)
        {
            std::uint64_t const from = out.offset[u];
            out.offset[u] = at;
            if (from != at)
                std::copy_n(out.keys.data() + from, out.count[u], out.keys.data() + at);
            at += out.count[u];
        }
        out.offset[n] = at;
    }
}

void batch_engine::extract(io::record_batch const & r1, io::record_batch const * const r2,
                           batch_keys & out) const
{
    bool const pairs = r2 != nullptr && !r2->empty();
    extract_units(
        r1.size(),
        [&](std::size_t const u, auto && fn)
        {
            fn(sequence_piece{r1[u].seq});
            if (pairs)
                fn(sequence_piece{(*r2)[u].seq});
        },
        out);
}

void batch_engine::extract_windows(std::span<sequence_piece const> const windows,
                                   batch_keys & out) const
{
    extract_units(
        windows.size(), [&](std::size_t const u, auto && fn) { fn(windows[u]); }, out);
}

void batch_engine::add_to_sketch(batch_keys const & keys, hyperloglog & sketch) const
{
    std::size_t const n = keys.units();
    sketches_.assign(threads_, hyperloglog{});
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::size_t u = 0; u < n; ++u)
    {
        hyperloglog & h = sketches_[static_cast<std::size_t>(omp_get_thread_num())];
        std::uint64_t const * const k = keys.keys.data() + keys.offset[u];
        for (std::uint32_t j = 0; j < keys.count[u]; ++j)
            h.add(k[j]);
    }
    for (hyperloglog const & h : sketches_)
        sketch.merge(h);
}

void batch_engine::query(std::span<any_filter const * const> const filters, batch_keys & keys) const
{
    // keys are contiguous without a key range: each thread takes a contiguous range of them
    std::uint64_t const total = keys.offset[keys.units()];
    detail::grow(total, keys.values);
    detail::grow(threads_, scratch_);
    detail::query_keys_parallel(filters, keys.keys.data(), total, keys.values.data(), scratch_,
                                threads_);
}

void batch_engine::decide(batch_keys const & keys, decision_rule const & rule,
                          std::vector<unit_result> & results) const
{
    std::size_t const n = keys.units();
    results.resize(n);
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::size_t u = 0; u < n; ++u)
    {
        std::uint32_t hits = 0;
        std::uint64_t const * const v = keys.values.data() + keys.offset[u];
        for (std::uint32_t j = 0; j < keys.count[u]; ++j)
            hits += rule.hit(v[j]);
        results[u] = unit_result{keys.count[u], hits, rule.known(hits, keys.count[u])};
    }
}

void batch_engine::insert(any_filter & filter, batch_keys const & keys,
                          std::vector<unit_result> const * const only_novel,
                          std::string const & filter_name, std::uint64_t const skip_at)
{
    bool const skip = skip_at > 0;
    std::size_t const shards = filter.num_shards();
    // the keys to insert, by shard in unit order
    auto for_each_key = [&](std::size_t const u0, std::size_t const u1, auto && fn) noexcept
    {
        for (std::size_t u = u0; u < u1; ++u)
        {
            if (only_novel != nullptr && (*only_novel)[u].known)
                continue;
            for (std::uint64_t p = keys.offset[u]; p < keys.offset[u] + keys.count[u]; ++p)
                if (!skip || keys.values[p] < skip_at)
                    fn(p);
        }
    };
    partition_units_by_shard(filter, keys, threads_, for_each_key, part_count_, part_start_,
                             part_keys_, nullptr);
    std::atomic<bool> full{false};
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
    for (std::size_t s = 0; s < shards; ++s)
    {
        std::uint64_t const a = part_start_[s], b = part_start_[s + 1];
        std::span<std::uint64_t const> const part{part_keys_.data() + a, b - a};
        if (a != b && filter.insert_batch(s, part) != insert_status::ok)
            full.store(true, std::memory_order_relaxed);
    }
    if (full.load())
        throw_full(filter, filter_name);
}

void batch_engine::dedup_serial(any_filter & filter, batch_keys const & keys,
                                decision_rule const & rule, std::vector<unit_result> & results,
                                std::string const & filter_name) const
{
    std::size_t const n = keys.units();
    results.resize(n);
    for (std::size_t u = 0; u < n; ++u)
    {
        std::uint64_t const * const k = keys.keys.data() + keys.offset[u];
        std::uint32_t const c = keys.count[u];
        std::uint32_t hits = 0;
        for (std::uint32_t j = 0; j < c; ++j)
            hits += filter.count(k[j]) > 0;
        bool const known = rule.known(hits, c);
        results[u] = unit_result{c, hits, known};
        if (known)
            continue;
        for (std::uint32_t j = 0; j < c; ++j)
            if (filter.insert(k[j]) != insert_status::ok)
                throw_full(filter, filter_name);
    }
}

} // namespace ksieve
