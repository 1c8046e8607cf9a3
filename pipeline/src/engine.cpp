#include <ksieve/filters/error.hpp>
#include <ksieve/pipeline/engine.hpp>

#include <algorithm>
#include <atomic>

#include <omp.h>

namespace ksieve
{

batch_engine::batch_engine(kmer_params const & kmer, unsigned const threads, shard_range const * const range) :
    kmer_{kmer}, scanner_{kmer.k, kmer.canonical}, hasher_{kmer.k, kmer.seed}, threads_{std::max(1u, threads)}
{
    if (range != nullptr && range->count > 1)
    {
        range_ = *range;
        use_range_ = true;
    }
}

void batch_engine::extract(io::record_batch const & r1, io::record_batch const * const r2, batch_keys & out) const
{
    std::size_t const n = r1.size();
    bool const pairs = r2 != nullptr && !r2->empty();
    out.count.assign(n, 0);
    out.offset.resize(n + 1);
    // Upper bound of keys per unit: its bases; offsets from a prefix sum (serial, cheap).
    std::uint64_t total = 0;
    for (std::size_t u = 0; u < n; ++u)
    {
        out.offset[u] = total;
        total += r1[u].seq.size() + (pairs ? (*r2)[u].seq.size() : 0);
    }
    out.offset[n] = total;
    if (out.keys.size() < total)
        out.keys.resize(total);
    unsigned const bits = kmer_.key_bits();
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 256)
    for (std::size_t u = 0; u < n; ++u)
    {
        std::uint64_t * const dst = out.keys.data() + out.offset[u];
        std::uint32_t c = 0;
        auto emit = [&](std::size_t, std::uint64_t const code) noexcept {
            std::uint64_t const h = hasher_(code);
            if (!use_range_ || range_.contains(h, bits))
                dst[c++] = h;
        };
        scanner_.for_each(r1[u].seq, emit);
        if (pairs)
            scanner_.for_each((*r2)[u].seq, emit);
        out.count[u] = c;
    }
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
    part.resize(n);
    index.resize(n);
    std::vector<std::size_t> pos(start.begin(), start.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
    {
        std::size_t const s = f.shard_of(keys[i]);
        std::size_t const p = pos[s]++;
        part[p] = f.local_key(keys[i]);
        index[p] = static_cast<std::uint32_t>(i);
    }
}

} // namespace

void batch_engine::query(std::span<any_filter const * const> const filters, batch_keys & keys) const
{
    std::size_t const n = keys.units();
    keys.values.resize(keys.keys.size());
#pragma omp parallel num_threads(threads_)
    {
        std::vector<std::uint64_t> part, result;
        std::vector<std::uint32_t> index;
        std::vector<std::size_t> start;
        // Each thread takes a contiguous range of units: its keys are contiguous in keys.keys.
        std::size_t const t = static_cast<std::size_t>(omp_get_thread_num());
        std::size_t const nt = static_cast<std::size_t>(omp_get_num_threads());
        std::size_t const u0 = n * t / nt, u1 = n * (t + 1) / nt;
        // Units' key ranges are not contiguous (offsets are upper bounds): compact them first.
        std::vector<std::uint64_t> local;
        std::vector<std::uint64_t> where;
        for (std::size_t u = u0; u < u1; ++u)
            for (std::uint32_t j = 0; j < keys.count[u]; ++j)
            {
                local.push_back(keys.keys[keys.offset[u] + j]);
                where.push_back(keys.offset[u] + j);
            }
        std::vector<std::uint64_t> best(local.size(), 0);
        for (any_filter const * const f : filters)
        {
            partition_by_shard(*f, local.data(), local.size(), part, index, start);
            result.resize(part.size());
            for (std::size_t s = 0; s + 1 < start.size(); ++s)
                if (start[s + 1] > start[s])
                    f->count_batch(s, std::span<std::uint64_t const>{part.data() + start[s], start[s + 1] - start[s]},
                                   result.data() + start[s]);
            for (std::size_t p = 0; p < part.size(); ++p)
                best[index[p]] = std::max(best[index[p]], result[p]);
        }
        for (std::size_t i = 0; i < local.size(); ++i)
            keys.values[where[i]] = best[i];
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
                          std::string const & filter_name)
{
    std::size_t const n = keys.units();
    std::size_t const shards = filter.num_shards();
    // Stable counting sort of the selected keys by shard (unit order preserved inside a shard).
    std::vector<std::uint64_t> & part = part_keys_;
    std::vector<std::uint64_t> & start = part_start_;
    start.assign(shards + 1, 0);
    std::uint64_t total = 0;
    for (std::size_t u = 0; u < n; ++u)
    {
        if (only_novel != nullptr && (*only_novel)[u].known)
            continue;
        std::uint64_t const * const k = keys.keys.data() + keys.offset[u];
        for (std::uint32_t j = 0; j < keys.count[u]; ++j)
            ++start[filter.shard_of(k[j]) + 1];
        total += keys.count[u];
    }
    for (std::size_t s = 0; s < shards; ++s)
        start[s + 1] += start[s];
    part.resize(total);
    std::vector<std::uint64_t> pos(start.begin(), start.end() - 1);
    for (std::size_t u = 0; u < n; ++u)
    {
        if (only_novel != nullptr && (*only_novel)[u].known)
            continue;
        std::uint64_t const * const k = keys.keys.data() + keys.offset[u];
        for (std::uint32_t j = 0; j < keys.count[u]; ++j)
            part[pos[filter.shard_of(k[j])]++] = filter.local_key(k[j]);
    }
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
        throw full_error{"filter '" + filter_name + "' is full: " + std::string{to_string(filter.type())} +
                         " filter cannot take more k-mers (raise --expected, or use --type qf which grows)"};
}

void dedup_resolver::resolve(batch_keys const & keys, std::uint64_t const min_count, double const fraction,
                             std::vector<unit_result> & results)
{
    std::size_t const n = keys.units();
    results.resize(n);
    // Table capacity: a power of two >= 2 x the keys that may need tracking in this batch.
    std::uint64_t candidates = 0;
    for (std::size_t u = 0; u < n; ++u)
        candidates += keys.count[u];
    std::size_t cap = 1024;
    while (cap < 2 * candidates)
        cap *= 2;
    if (table_keys_.size() < cap)
    {
        table_keys_.assign(cap, 0);
        table_counts_.assign(cap, 0);
        table_stamp_.assign(cap, 0);
        epoch_ = 0;
    }
    cap = table_keys_.size();
    if (++epoch_ == 0) // stamp wrap-around: clear once every 2^32 batches
    {
        std::fill(table_stamp_.begin(), table_stamp_.end(), 0);
        epoch_ = 1;
    }
    std::size_t const mask = cap - 1;
    auto slot_of = [&](std::uint64_t const key) noexcept {
        std::size_t i = static_cast<std::size_t>(mix64(key)) & mask;
        while (table_stamp_[i] == epoch_ && table_keys_[i] != key)
            i = (i + 1) & mask;
        return i;
    };
    for (std::size_t u = 0; u < n; ++u)
    {
        std::uint64_t const * const k = keys.keys.data() + keys.offset[u];
        std::uint64_t const * const v = keys.values.data() + keys.offset[u];
        std::uint32_t const c = keys.count[u];
        std::uint32_t hits = 0;
        for (std::uint32_t j = 0; j < c; ++j)
        {
            if (v[j] >= min_count)
            {
                ++hits;
                continue;
            }
            std::size_t const i = slot_of(k[j]);
            if (table_stamp_[i] == epoch_ && v[j] + table_counts_[i] >= min_count)
                ++hits;
        }
        bool const known = is_known(c, hits, fraction);
        results[u] = unit_result{c, hits, known};
        if (known)
            continue;
        for (std::uint32_t j = 0; j < c; ++j)
        {
            if (v[j] >= min_count)
                continue; // already a hit for every later read: no need to track
            std::size_t const i = slot_of(k[j]);
            if (table_stamp_[i] != epoch_)
            {
                table_stamp_[i] = epoch_;
                table_keys_[i] = k[j];
                table_counts_[i] = 0;
            }
            ++table_counts_[i];
        }
    }
}

} // namespace ksieve
