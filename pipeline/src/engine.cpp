#include <ksieve/filters/error.hpp>
#include <ksieve/pipeline/engine.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

#include <omp.h>

namespace ksieve
{

namespace
{
// The error for a filter that takes no more k-mers, with advice that fits its type.
std::string full_message(any_filter const & filter, std::string const & filter_name)
{
    std::string const what = filter_name == "dedup" ? std::string{"the dedup filter"} : "filter '" + filter_name + "'";
    if (filter.type() == filter_type::quotient)
        return what + " is full: the quotient filter cannot grow further, its fingerprints (sized by --expected) "
                      "have too few remainder bits left (raise --expected, or leave it out for the default design "
                      "size of 2^30 k-mers)";
    return what + " is full: the " + std::string{to_string(filter.type())} +
           " filter cannot take more k-mers (raise --expected, or use --type qf, which grows)";
}
} // namespace


batch_engine::batch_engine(kmer_params const & kmer, unsigned const threads, shard_range const * const range) :
    kmer_{kmer}, scanner_{kmer.k, kmer.canonical}, hasher_{kmer.k, kmer.seed}, threads_{std::max(1u, threads)}
{
    if (range != nullptr && range->count > 1)
    {
        range_ = *range;
        use_range_ = true;
    }
}

// sequences(u, fn) calls fn(seq) for each sequence of unit u (one, or two for a pair).
template <typename Sequences>
void batch_engine::extract_units(std::size_t const n, Sequences const & sequences, batch_keys & out) const
{
    out.count.resize(n);
    out.offset.resize(n + 1);
    // Without a key range the number of k-mers of a unit is known before hashing: exact offsets, so the
    // keys of consecutive units are contiguous. With a range (build --shard) offsets are upper bounds.
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::size_t u = 0; u < n; ++u)
    {
        std::size_t c = 0;
        sequences(u, [&](std::string_view const seq) { c += use_range_ ? seq.size() : scanner_.count(seq); });
        out.offset[u + 1] = c;
    }
    out.offset[0] = 0;
    for (std::size_t u = 0; u < n; ++u)
        out.offset[u + 1] += out.offset[u];
    std::uint64_t const total = out.offset[n];
    if (out.keys.size() < total)
        out.keys.resize(total);
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 256)
    for (std::size_t u = 0; u < n; ++u)
    {
        std::uint64_t * const dst = out.keys.data() + out.offset[u];
        std::uint32_t c = 0;
        auto emit = [&](std::size_t, std::uint64_t const code) noexcept {
            std::uint64_t const h = hasher_(code);
            if (!use_range_ || range_.contains(h))
                dst[c++] = h;
        };
        sequences(u, [&](std::string_view const seq) { scanner_.for_each(seq, emit); });
        out.count[u] = c;
    }
}

void batch_engine::extract(io::record_batch const & r1, io::record_batch const * const r2, batch_keys & out) const
{
    bool const pairs = r2 != nullptr && !r2->empty();
    extract_units(
        r1.size(),
        [&](std::size_t const u, auto && fn) {
            fn(r1[u].seq);
            if (pairs)
                fn((*r2)[u].seq);
        },
        out);
}

void batch_engine::extract_windows(std::span<std::string_view const> const windows, batch_keys & out) const
{
    extract_units(
        windows.size(), [&](std::size_t const u, auto && fn) { fn(windows[u]); }, out);
}

namespace
{

// Counting sort of keys[lo, hi) by shard into part (stable), returning per-shard start offsets.
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
    if (part.size() < n)
    {
        part.resize(n);
        index.resize(n);
    }
    // start[s] becomes the running insert position; afterwards start[s] = end of shard s = start of s + 1.
    for (std::size_t i = 0; i < n; ++i)
    {
        std::size_t const s = f.shard_of(keys[i]);
        std::size_t const p = start[s]++;
        part[p] = f.local_key(keys[i]);
        index[p] = static_cast<std::uint32_t>(i);
    }
    // shift back: start[s] = beginning of shard s
    for (std::size_t s = shards; s > 0; --s)
        start[s] = start[s - 1];
    start[0] = 0;
}

// out[j] = max over filters of count(keys[j]), for n keys (one thread).
void query_keys(std::span<any_filter const * const> const filters, std::uint64_t const * const keys,
                std::size_t const n, std::uint64_t * const best, batch_engine_query_scratch & s)
{
    for (std::size_t fi = 0; fi < filters.size(); ++fi)
    {
        any_filter const * const f = filters[fi];
        partition_by_shard(*f, keys, n, s.part, s.index, s.start);
        if (s.result.size() < s.part.size())
            s.result.resize(s.part.size());
        for (std::size_t sh = 0; sh + 1 < s.start.size(); ++sh)
            if (s.start[sh + 1] > s.start[sh])
                f->count_batch(sh, std::span<std::uint64_t const>{s.part.data() + s.start[sh], s.start[sh + 1] - s.start[sh]},
                               s.result.data() + s.start[sh]);
        // A Bloom or cuckoo filter of some parts of the key space (build --shard) answers only for keys
        // there: elsewhere its answers could only be false positives. A quotient filter part keeps them: a
        // fingerprint it shares with a key of another part answers as in the full build.
        key_parts const & parts = f->parts();
        if (!parts.complete() && f->type() != filter_type::quotient)
            for (std::size_t p = 0; p < n; ++p)
                if (!parts.holds_key(keys[s.index[p]]))
                    s.result[p] = 0;
        if (fi == 0)
            for (std::size_t p = 0; p < n; ++p)
                best[s.index[p]] = s.result[p];
        else
            for (std::size_t p = 0; p < n; ++p)
                best[s.index[p]] = std::max(best[s.index[p]], s.result[p]);
    }
}

// Stable counting sort by shard, in parallel, of the keys that for_each_key(u0, u1, fn) visits for units
// [u0, u1) (fn(p), p the key's index in keys.keys, in unit order): thread t counts and places the keys of the
// t-th contiguous range of units; within a shard its keys follow those of threads < t, so the order is the
// serial one for any thread count. Afterwards part[start[s], start[s + 1]) holds shard s's local keys and
// pos (if not null) their indices in keys.keys. counts: per-thread scratch (at least `threads` entries).
template <typename ForEachKey>
void partition_units_by_shard(any_filter const & filter, batch_keys const & keys, unsigned const threads,
                              ForEachKey const & for_each_key,
                              std::vector<std::vector<std::uint64_t>> & counts,
                              std::vector<std::uint64_t> & start, std::vector<std::uint64_t> & part,
                              std::vector<std::uint64_t> * const pos)
{
    std::size_t const n = keys.units();
    std::size_t const shards = filter.num_shards();
    start.assign(shards + 1, 0);
    if (counts.size() < threads)
        counts.resize(threads);
#pragma omp parallel num_threads(threads)
    {
        std::size_t const t = static_cast<std::size_t>(omp_get_thread_num());
        std::size_t const nt = static_cast<std::size_t>(omp_get_num_threads());
        std::size_t const u0 = n * t / nt, u1 = n * (t + 1) / nt;
        std::vector<std::uint64_t> & cnt = counts[t];
        cnt.assign(shards, 0);
        for_each_key(u0, u1, [&](std::uint64_t const p) noexcept { ++cnt[filter.shard_of(keys.keys[p])]; });
#pragma omp barrier
#pragma omp single
        {
            // start[s] = first position of shard s; counts[t][s] becomes thread t's first position in s.
            std::uint64_t total = 0;
            for (std::size_t sh = 0; sh < shards; ++sh)
            {
                start[sh] = total;
                for (std::size_t tt = 0; tt < nt; ++tt)
                {
                    std::uint64_t const c = counts[tt][sh];
                    counts[tt][sh] = total;
                    total += c;
                }
            }
            start[shards] = total;
            if (part.size() < total)
                part.resize(total);
            if (pos != nullptr && pos->size() < total)
                pos->resize(total);
        }
        for_each_key(u0, u1,
                     [&](std::uint64_t const p) noexcept
                     {
                         std::uint64_t const key = keys.keys[p];
                         std::uint64_t const at = cnt[filter.shard_of(key)]++;
                         part[at] = filter.local_key(key);
                         if (pos != nullptr)
                             (*pos)[at] = p;
                     });
    }
}

} // namespace

std::uint64_t hits_needed(std::uint64_t const kmers, double const fraction) noexcept
{
    if (kmers == 0)
        return 1; // never known
    double const guess = std::ceil(fraction * static_cast<double>(kmers));
    std::uint64_t h = guess <= 0 ? 0 : (guess > static_cast<double>(kmers) ? kmers + 1 : static_cast<std::uint64_t>(guess));
    while (h > 0 && is_known(kmers, h - 1, fraction))
        --h;
    while (h <= kmers && !is_known(kmers, h, fraction))
        ++h;
    return h;
}

void batch_engine::query(std::span<any_filter const * const> const filters, batch_keys & keys) const
{
    std::size_t const n = keys.units();
    std::uint64_t const total = keys.offset[n];
    if (keys.values.size() < total)
        keys.values.resize(total);
    if (scratch_.size() < threads_)
        scratch_.resize(threads_);
#pragma omp parallel num_threads(threads_)
    {
        // Each thread takes a contiguous range of keys (keys are contiguous without a key range).
        std::size_t const t = static_cast<std::size_t>(omp_get_thread_num());
        std::size_t const nt = static_cast<std::size_t>(omp_get_num_threads());
        std::size_t const k0 = total * t / nt, k1 = total * (t + 1) / nt;
        query_keys(filters, keys.keys.data() + k0, k1 - k0, keys.values.data() + k0, scratch_[t]);
    }
}

void batch_engine::classify_early(io::record_batch const & r1, io::record_batch const * const r2,
                                  std::span<any_filter const * const> const filters, std::uint64_t const min_count,
                                  double const fraction, std::vector<unit_result> & results) const
{
    std::size_t const n = r1.size();
    bool const pairs = r2 != nullptr && !r2->empty();
    results.resize(n);
    // Chunks of at most 512 units and about 64 Ki bases (a chunk's keys stay in the core's L2 cache).
    constexpr std::size_t chunk_units = 512;
    constexpr std::size_t chunk_bases = std::size_t{1} << 16;
    constexpr unsigned max_rounds = 4; // then every remaining k-mer of the undecided units at once
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
    if (early_.size() < threads_)
        early_.resize(threads_);
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
    for (std::size_t c = 0; c < chunks; ++c)
    {
        early_scratch & s = early_[static_cast<std::size_t>(omp_get_thread_num())];
        std::size_t const u0 = chunk_begin_[c];
        std::size_t const m = chunk_begin_[c + 1] - u0;
        s.offset.resize(m + 1);
        s.count.resize(m);
        s.need.resize(m);
        s.hits.assign(m, 0);
        s.queried.assign(m, 0);
        s.qstart.resize(m);
        s.offset[0] = 0;
        for (std::size_t i = 0; i < m; ++i)
        {
            std::size_t cnt = scanner_.count(r1[u0 + i].seq);
            if (pairs)
                cnt += scanner_.count((*r2)[u0 + i].seq);
            s.count[i] = static_cast<std::uint32_t>(cnt);
            s.offset[i + 1] = s.offset[i] + static_cast<std::uint32_t>(cnt);
        }
        // long units keep no codes here: they are looked up in windows below
        s.long_units.clear();
        for (std::size_t i = 0; i < m; ++i)
            if (s.count[i] > early_window_kmers)
                s.long_units.push_back(static_cast<std::uint32_t>(i));
        if (!s.long_units.empty())
        {
            std::uint32_t dropped = 0;
            for (std::size_t i = 0; i < m; ++i)
            {
                dropped += s.count[i] > early_window_kmers ? s.count[i] : 0;
                s.offset[i + 1] -= dropped;
            }
        }
        if (s.keys.size() < s.offset[m])
            s.keys.resize(s.offset[m]);
        s.active.clear();
        for (std::size_t i = 0; i < m; ++i)
        {
            if (s.count[i] > early_window_kmers)
            {
                std::uint64_t const need = hits_needed(s.count[i], fraction);
                s.need[i] =
                    static_cast<std::uint32_t>(std::min<std::uint64_t>(need, std::uint64_t{s.count[i]} + 1));
                continue;
            }
            // Spread order: positions j = 0, 4, 2, 6, 1, 5, 3, 7 (mod 8), each residue class in increasing j.
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
            auto emit = [&](std::size_t, std::uint64_t const code) noexcept {
                dst[base[j & 7] + (j >> 3)] = code; // hashed when looked up: many never are
                ++j;
            };
            scanner_.for_each(r1[u0 + i].seq, emit);
            if (pairs)
                scanner_.for_each((*r2)[u0 + i].seq, emit);
            std::uint64_t const need = hits_needed(cnt, fraction);
            s.need[i] = static_cast<std::uint32_t>(std::min<std::uint64_t>(need, std::uint64_t{cnt} + 1));
            if (need <= cnt)
                s.active.push_back(static_cast<std::uint32_t>(i));
        }
        for (unsigned round = 0; !s.active.empty(); ++round)
        {
            // Per undecided unit: the fewest further lookups that could decide it.
            std::size_t total = 0;
            for (std::uint32_t const i : s.active)
            {
                std::uint32_t const misses = s.queried[i] - s.hits[i];
                std::uint32_t const d = round + 1 >= max_rounds
                                            ? s.count[i] - s.queried[i]
                                            : std::min(s.need[i] - s.hits[i], s.count[i] - s.need[i] + 1 - misses);
                s.qstart[i] = static_cast<std::uint32_t>(total);
                total += d;
            }
            if (s.qkeys.size() < total)
            {
                s.qkeys.resize(total);
                s.qvalues.resize(total);
            }
            for (std::size_t a = 0; a < s.active.size(); ++a)
            {
                std::uint32_t const i = s.active[a];
                std::size_t const q1 = a + 1 < s.active.size() ? s.qstart[s.active[a + 1]] : total;
                std::uint64_t const * const src = s.keys.data() + s.offset[i] + s.queried[i];
                std::uint64_t * const dst = s.qkeys.data() + s.qstart[i];
                for (std::size_t q = 0; q < q1 - s.qstart[i]; ++q)
                    dst[q] = hasher_(src[q]);
            }
            query_keys(filters, s.qkeys.data(), total, s.qvalues.data(), s.q);
            s.next_active.clear();
            for (std::size_t a = 0; a < s.active.size(); ++a)
            {
                std::uint32_t const i = s.active[a];
                std::uint32_t const q0 = s.qstart[i];
                std::uint32_t const q1 = a + 1 < s.active.size() ? s.qstart[s.active[a + 1]] : static_cast<std::uint32_t>(total);
                std::uint32_t h = 0;
                for (std::uint32_t q = q0; q < q1; ++q)
                    h += s.qvalues[q] >= min_count;
                s.hits[i] += h;
                s.queried[i] += q1 - q0;
                std::uint32_t const misses = s.queried[i] - s.hits[i];
                if (s.hits[i] < s.need[i] && misses <= s.count[i] - s.need[i])
                    s.next_active.push_back(i);
            }
            std::swap(s.active, s.next_active);
        }
        // long units: windows of at most early_window_kmers k-mers in sequence order, until decided
        for (std::uint32_t const i : s.long_units)
        {
            if (s.qkeys.size() < early_window_kmers)
            {
                s.qkeys.resize(early_window_kmers);
                s.qvalues.resize(early_window_kmers);
            }
            std::uint32_t const cnt = s.count[i], need = s.need[i];
            if (need > cnt)
                continue; // never known
            auto decided = [&] { return s.hits[i] >= need || s.queried[i] - s.hits[i] > cnt - need; };
            auto window = [&](std::string_view const w)
            {
                if (decided())
                    return;
                std::size_t q = 0;
                scanner_.for_each(w, [&](std::size_t, std::uint64_t const code) noexcept
                                  { s.qkeys[q++] = hasher_(code); });
                query_keys(filters, s.qkeys.data(), q, s.qvalues.data(), s.q);
                for (std::size_t j = 0; j < q; ++j)
                    s.hits[i] += s.qvalues[j] >= min_count;
                s.queried[i] += static_cast<std::uint32_t>(q);
            };
            for_each_window(r1[u0 + i].seq, early_window_kmers, window);
            if (pairs)
                for_each_window((*r2)[u0 + i].seq, early_window_kmers, window);
        }
        for (std::size_t i = 0; i < m; ++i)
            results[u0 + i] = unit_result{s.count[i], s.hits[i], s.count[i] > 0 && s.hits[i] >= s.need[i]};
    }
}

void batch_engine::decide(batch_keys const & keys, std::uint64_t const min_count, double const fraction,
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
            hits += v[j] >= min_count;
        results[u] = unit_result{keys.count[u], hits, is_known(keys.count[u], hits, fraction)};
    }
}

void batch_engine::insert(any_filter & filter, batch_keys const & keys, std::vector<unit_result> const * const only_novel,
                          std::string const & filter_name, std::uint64_t const skip_at)
{
    bool const skip = skip_at > 0;
    std::size_t const shards = filter.num_shards();
    std::vector<std::uint64_t> & part = part_keys_;
    std::vector<std::uint64_t> & start = part_start_;
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
    partition_units_by_shard(filter, keys, threads_, for_each_key, part_count_, start, part, nullptr);
    std::atomic<bool> full{false};
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
    for (std::size_t s = 0; s < shards; ++s)
    {
        if (start[s + 1] == start[s])
            continue;
        if (filter.insert_batch(s, std::span<std::uint64_t const>{part.data() + start[s], start[s + 1] - start[s]}) !=
            insert_status::ok)
            full.store(true, std::memory_order_relaxed);
    }
    if (full.load())
        throw full_error{full_message(filter, filter_name)};
}

void batch_engine::dedup_serial(any_filter & filter, batch_keys const & keys, double const fraction,
                                std::vector<unit_result> & results, std::string const & filter_name) const
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
        bool const known = is_known(c, hits, fraction);
        results[u] = unit_result{c, hits, known};
        if (known)
            continue;
        for (std::uint32_t j = 0; j < c; ++j)
            if (filter.insert(k[j]) != insert_status::ok)
                throw full_error{full_message(filter, filter_name)};
    }
}

void dedup_resolver::resolve(any_filter const & filter, batch_keys const & keys, std::uint64_t const min_count,
                             double const fraction, bool const exact_hits, std::vector<unit_result> & results)
{
    std::size_t const n = keys.units();
    results.resize(n);
    std::uint32_t longest = 0;
    for (std::size_t u = 0; u < n; ++u)
        longest = std::max(longest, keys.count[u]);
    if (slots_.size() < longest)
        slots_.resize(longest);
    // Parallel pre-pass: hits before the batch, hits needed, and the collision keys and their hashes of the keys
    // still below min_count. Only the table probes below are serial.
    std::uint64_t const total = keys.offset[n];
    if (cks_.size() < total)
    {
        cks_.resize(total);
        homes_.resize(total);
    }
    hits_before_.resize(n);
    need_.resize(n);
    std::uint64_t tracked = 0; // keys that may be probed: below min_count, in units not decided before the batch
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
        need_[u] = hits_needed(c, fraction);
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

void dedup_speculator::run(any_filter & filter, batch_keys const & keys, std::uint64_t const min_count,
                           double const fraction, std::vector<unit_result> & results,
                           std::string const & filter_name)
{
    // Every stride-th k-mer is sampled. A unit is predicted known when its sample has at least 0.6 x the hit
    // fraction asked: leaning to "known" because a wrong guess of known costs some lookups, a wrong guess of
    // novel adding and removing all its k-mers (on 2 M reads at C = 20, sampling every 8th k-mer: 0.3% of the
    // units rolled back, against 1.5% with the plain fraction; every 16th: 0.4%).
    constexpr double lean_known = 0.6;
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
        bool const predicted_known = c > 0 && is_known(s, h, fraction * lean_known);
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
            need_[u] = static_cast<std::uint32_t>(hits_needed(keys.count[u], fraction));
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
        if (is_known(keys.count[u], h, fraction))
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
        std::uint32_t h = corrected && is_known(c, hits_[u], fraction) ? corrected_hits(u) : hits_[u];
        if (is_known(c, h, fraction) && !exact_[u])
        {
            make_exact(u, dups_[0]);
            h = corrected ? corrected_hits(u) : count_hits(u);
        }
        bool const known = is_known(c, h, fraction);
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
