// table_counting_filter: per-shard open-addressing tables of (fingerprint, count) words in front of
// a quotient filter, each shard moved into the quotient filter when its table would outgrow its
// cap.
#include <ksieve/filters/quotient/table_counting_filter.hpp>

#include <ksieve/filters/quotient/quotient_builder.hpp>
#include <ksieve/filters/support/memory_budget.hpp>
#include <ksieve/filters/support/per_thread.hpp>

#include "../support/platform.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include <sys/mman.h>

namespace ksieve
{

namespace
{

// The main filter as the quotient filter it must be. \throws usage_error if it is not one.
sharded_filter<quotient_filter> & quotient_of(any_filter & main)
{
    auto * const qf = dynamic_cast<sharded_filter<quotient_filter> *>(&main);
    if (qf == nullptr)
        throw usage_error{"table_counting_filter: the main filter must be a quotient filter"};
    return *qf;
}
// Keys ahead of the one being added or looked up whose table line is prefetched.
constexpr std::size_t gap = 16;

// The home position of fingerprint fp in a table of 2^bits entries (Fibonacci hashing: the
// fingerprints of exact filters are the keys' low bits, not spread over the top).
[[gnu::always_inline]] inline std::uint64_t home_of(std::uint64_t const fp,
                                                    unsigned const bits) noexcept
{
    return (fp * std::uint64_t{0x9E3779B97F4A7C15}) >> (64 - bits);
}

// The calling thread's scratch for moving a table's entries (growth, moves into the quotient
// filter); null where no memory is left for one.
struct entries_scratch_tag;
std::vector<std::uint64_t> * thread_scratch() noexcept
{
    return per_thread<std::vector<std::uint64_t>, entries_scratch_tag>();
}

// An address range of `bytes` (a multiple of the page size) reserved without memory behind it,
// starting at a huge-page boundary where it is large enough for one; pages get memory as they are
// first written. \throws std::bad_alloc
class reserved_range
{
public:
    explicit reserved_range(std::size_t const bytes)
    {
        std::size_t const extra = bytes >= huge_page_bytes ? huge_page_bytes : 0;
        int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_NORESERVE
        flags |= MAP_NORESERVE;
#endif
        void * const raw = ::mmap(nullptr, bytes + extra, PROT_READ | PROT_WRITE, flags, -1, 0);
        if (raw == MAP_FAILED)
            throw std::bad_alloc{};
        auto const a = reinterpret_cast<std::uintptr_t>(raw);
        std::uintptr_t const start = extra == 0 ? a : (a + extra - 1) / extra * extra;
        if (start > a)
            ::munmap(raw, start - a);
        if (a + extra > start)
            ::munmap(reinterpret_cast<void *>(start + bytes), a + extra - start);
        start_ = reinterpret_cast<void *>(start);
        bytes_ = bytes;
        detail::platform::advise_huge_pages(start_, bytes_);
    }
    reserved_range(reserved_range const &) = delete;
    reserved_range & operator=(reserved_range const &) = delete;
    ~reserved_range()
    {
        ::munmap(start_, bytes_);
    }
    [[nodiscard]] void * data() const noexcept
    {
        return start_;
    }

private:
    static constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;
    void * start_{nullptr};
    std::size_t bytes_{0};
};
} // namespace

// An entry is (fingerprint << count_bits) | count, count >= 1; 0 is an empty entry. The table lives
// at the start of an address range reserved for up to range_step doublings of it, so that those
// keep the pages it has and only each new half gets fresh memory; beyond them (and for the first
// table) a new range.
struct table_counting_filter::table
{
    // Doublings that a range has room for beyond the table it is made for (a range reserves 2^3
    // times that table's address space, not memory).
    static constexpr unsigned range_step = 3;

    std::unique_ptr<reserved_range> range;
    std::array<memory_charge, 64> charges; // charges[b]: the bytes added on growth to 2^b entries
    std::uint64_t * entries{nullptr};
    unsigned bits{0};
    unsigned range_bits{0}; // the range holds 2^range_bits entries
    unsigned max_bits{0};
    std::uint64_t used{0};    // entries in use (distinct fingerprints)
    std::uint64_t grow_at{0}; // used entries that make the table double
    std::uint64_t total{0};   // sum of the counts

    // A zeroed table of 2^b entries that may grow to 2^max_b. \throws memory_limit_error,
    // std::bad_alloc
    table(unsigned const b, unsigned const max_b) : bits{b}, max_bits{max_b}
    {
        charges[b] = memory_charge{std::uint64_t{8} << b};
        range_bits = std::min(b + range_step, max_bits);
        range = std::make_unique<reserved_range>(std::size_t{8} << range_bits);
        entries = static_cast<std::uint64_t *>(range->data());
        detail::platform::populate_write(entries, std::size_t{8} << b);
        set_grow_at();
    }
    void set_grow_at() noexcept
    {
        grow_at =
            static_cast<std::uint64_t>(max_table_load * std::ldexp(1.0, static_cast<int>(bits)));
    }
    [[nodiscard]] std::uint64_t mask() const noexcept { return (std::uint64_t{1} << bits) - 1; }
    [[nodiscard]] std::uint64_t const * line(std::uint64_t const fp) const noexcept
    {
        return entries + home_of(fp, bits);
    }
    // The position of fp's entry, or of the empty entry where it would go.
    [[nodiscard]] std::uint64_t find(std::uint64_t const fp, unsigned const cb) const noexcept
    {
        std::uint64_t i = home_of(fp, bits);
        std::uint64_t const m = mask();
        for (std::uint64_t e = entries[i]; e != 0 && (e >> cb) != fp; e = entries[i])
            i = (i + 1) & m;
        return i;
    }
    // The entries `from` (n of them) into the cleared table of 2^bits entries.
    void place(std::uint64_t const * const from, std::uint64_t const n, unsigned const cb) noexcept
    {
        std::uint64_t const m = mask();
        for (std::uint64_t i = 0; i < n; ++i)
        {
            std::uint64_t j = home_of(from[i] >> cb, bits);
            while (entries[j] != 0)
                j = (j + 1) & m;
            entries[j] = from[i];
        }
    }
    // Twice the entries. Within the range: the entries move to the thread's scratch, the table is
    // cleared at twice the size and takes them back; else they go to a new range. \returns false
    // (nothing changed) at the largest size or without memory.
    bool grow(unsigned const cb) noexcept
    {
        if (bits >= max_bits)
            return false;
        std::size_t const old_size = std::size_t{1} << bits;
        std::unique_ptr<reserved_range> fresh;
        std::vector<std::uint64_t> * const scratch = bits < range_bits ? thread_scratch() : nullptr;
        try
        {
            charges[bits + 1] = memory_charge{std::uint64_t{8} << bits};
            if (bits < range_bits && scratch != nullptr)
                scratch->resize(used);
            else
                fresh = std::make_unique<reserved_range>(
                    std::size_t{8} << std::min(bits + 1 + range_step, max_bits));
        }
        catch (...) // memory_limit_error, std::bad_alloc: the shard moves instead
        {
            charges[bits + 1] = memory_charge{};
            return false;
        }
        if (fresh == nullptr)
        {
            std::uint64_t * const kept = scratch->data();
            std::uint64_t n = 0;
            for (std::size_t i = 0; i < old_size; ++i)
                if (entries[i] != 0)
                    kept[n++] = entries[i];
            detail::platform::populate_write(entries + old_size, 8 * old_size);
            std::memset(entries, 0, 8 * old_size);
            ++bits;
            place(kept, n, cb);
        }
        else
        {
            auto * const to = static_cast<std::uint64_t *>(fresh->data());
            detail::platform::populate_write(to, 16 * old_size);
            std::uint64_t const * const from = entries;
            entries = to;
            ++bits;
            range_bits = std::min(bits + range_step, max_bits);
            for (std::size_t i = 0; i < old_size; ++i)
                if (from[i] != 0)
                    place(from + i, 1, cb);
            range = std::move(fresh);
        }
        set_grow_at();
        return true;
    }
    // Adds count to fp's entry; old (if not null) gets the count before. \returns false (nothing
    // changed) where the count would outgrow its field or the table cannot grow.
    bool add(std::uint64_t const fp, std::uint64_t const count, std::uint64_t * const old,
             unsigned const cb) noexcept
    {
        std::uint64_t const cmask = (std::uint64_t{1} << cb) - 1;
        std::uint64_t i = find(fp, cb);
        std::uint64_t const e = entries[i];
        if (e != 0)
        {
            if ((e & cmask) > cmask - count)
                return false;
            entries[i] = e + count;
        }
        else
        {
            if (count > cmask)
                return false;
            if (used + 1 > grow_at)
            {
                if (!grow(cb))
                    return false;
                i = find(fp, cb);
            }
            entries[i] = (fp << cb) | count;
            ++used;
        }
        total += count;
        if (old != nullptr)
            *old = e & cmask;
        return true;
    }
    // Takes up to count off fp's entry (the entry goes at 0, the entries after it moved back).
    // \returns false if fp is absent.
    bool remove(std::uint64_t const fp, std::uint64_t const count, unsigned const cb) noexcept
    {
        std::uint64_t const cmask = (std::uint64_t{1} << cb) - 1;
        std::uint64_t i = find(fp, cb);
        std::uint64_t const e = entries[i];
        if (e == 0)
            return false;
        if ((e & cmask) > count)
        {
            entries[i] = e - count;
            total -= count;
            return true;
        }
        total -= e & cmask;
        --used;
        std::uint64_t const m = mask();
        for (std::uint64_t j = (i + 1) & m; entries[j] != 0; j = (j + 1) & m)
        {
            // the entry at j stays unless its home lies cyclically outside (i, j]
            std::uint64_t const h = home_of(entries[j] >> cb, bits);
            bool const stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
            if (!stays)
            {
                entries[i] = entries[j];
                i = j;
            }
        }
        entries[i] = 0;
        return true;
    }
    // count() from fp's home position.
    [[nodiscard]] std::uint64_t count_from(std::uint64_t i, std::uint64_t const fp,
                                           unsigned const cb) const noexcept
    {
        std::uint64_t const m = mask();
        std::uint64_t e = entries[i];
        while (e != 0 && (e >> cb) != fp)
        {
            i = (i + 1) & m;
            e = entries[i];
        }
        return e & ((std::uint64_t{1} << cb) - 1);
    }
    [[nodiscard]] std::uint64_t count(std::uint64_t const fp, unsigned const cb) const noexcept
    {
        std::uint64_t const e = entries[find(fp, cb)];
        return e & ((std::uint64_t{1} << cb) - 1);
    }
};

table_counting_filter::table_counting_filter(std::unique_ptr<any_filter> main,
                                             std::uint64_t const table_cap_bytes)
    : any_filter{main->type(), main->kmer(), main->shard_bits(), main->target_fpr(),
                 main->expected()},
      growable_forward{quotient_of(*main)}, main_{std::move(main)},
      qf_{static_cast<sharded_filter<quotient_filter> *>(main_.get())}, cap_bytes_{table_cap_bytes},
      count_bits_{0}
{
    unsigned const p = qf_->shard(0).fingerprint_bits();
    count_bits_ = p < 64 ? 64 - p : 0;
    tables_.resize(num_shards());
    unsigned const b = std::bit_width(initial_entries) - 1;
    if (count_bits_ < min_count_bits || (std::uint64_t{8} << b) > cap_bytes_)
        return; // every shard in the main filter
    auto const max_b = std::min<std::uint64_t>(std::bit_width(cap_bytes_ / 8) - 1, 40);
    for (auto & t : tables_)
    {
        try
        {
            t = std::make_unique<table>(b, static_cast<unsigned>(max_b));
        }
        catch (...) // memory_limit_error, std::bad_alloc: the shard is in the main filter
        {
            t.reset();
        }
    }
}

table_counting_filter::~table_counting_filter() = default;

std::size_t table_counting_filter::table_shards() const noexcept
{
    return static_cast<std::size_t>(
        std::count_if(tables_.begin(), tables_.end(), [](auto const & t) { return t != nullptr; }));
}

bool table_counting_filter::move_shard(std::size_t const s) noexcept
{
    table & t = *tables_[s];
    // the entries in fingerprint order (the fingerprint is the entry's top), copied to the thread's
    // scratch so that the table stays as it is where the move fails
    std::vector<std::uint64_t> * const scratch = thread_scratch();
    if (scratch == nullptr)
        return false;
    try
    {
        scratch->resize(t.used);
    }
    catch (...) // std::bad_alloc
    {
        return false;
    }
    std::uint64_t * const sorted = scratch->data();
    std::uint64_t n = 0;
    for (std::uint64_t i = 0; i <= t.mask(); ++i)
        if (t.entries[i] != 0)
            sorted[n++] = t.entries[i];
    std::sort(sorted, sorted + n);
    // built in two passes at the size the quotient filter reaches when they are inserted one by
    // one (inserted in order into a table that grows from its first size, they would pile up in
    // its first slots)
    std::uint64_t const cmask = (std::uint64_t{1} << count_bits_) - 1;
    constexpr std::size_t chunk = 1024;
    std::array<quotient_builder::entry, chunk> buf;
    auto for_chunks = [&](auto && fn)
    {
        for (std::uint64_t a = 0; a < n; a += chunk)
        {
            std::size_t const m = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, n - a));
            for (std::size_t i = 0; i < m; ++i)
                buf[i] = {sorted[a + i] >> count_bits_, sorted[a + i] & cmask};
            fn(std::span<quotient_builder::entry const>{buf.data(), m});
        }
    };
    try
    {
        if (n != 0)
        {
            quotient_builder b{qf_->shard(s), n};
            for_chunks([&](auto const entries) { b.measure(entries); });
            for (;;)
            {
                b.start();
                for_chunks([&](auto const entries) { b.append(entries); });
                if (b.finish())
                    break;
            }
            qf_->shard(s) = b.take();
        }
    }
    catch (...) // full_error, memory_limit_error, std::bad_alloc
    {
        return false;
    }
    tables_[s].reset();
    return true;
}

void table_counting_filter::settle()
{
    for (std::size_t s = 0; s < tables_.size(); ++s)
        if (tables_[s] != nullptr && !move_shard(s))
            throw full_error{"the dedup filter cannot take its counts: no memory to grow"};
}

void table_counting_filter::count_batch(std::size_t const shard,
                                        std::span<std::uint64_t const> const keys,
                                        std::uint64_t * const out) const noexcept
{
    table const * const t = tables_[shard].get();
    if (t == nullptr)
    {
        main_->count_batch(shard, keys, out);
        return;
    }
    quotient_filter const & q = qf_->shard(shard);
    std::size_t const n = keys.size();
    for (std::size_t i = 0; i < n; ++i)
    {
        if (i + gap < n)
            __builtin_prefetch(t->line(q.fingerprint(keys[i + gap])), 0, 3);
        out[i] = t->count(q.fingerprint(keys[i]), count_bits_);
    }
}

bool table_counting_filter::count_keys(std::span<std::uint64_t const> const keys,
                                       std::uint64_t * const out) const noexcept
{
    std::size_t const in_tables = table_shards();
    if (in_tables == 0)
        return main_->count_keys(keys, out);
    if (in_tables != tables_.size())
        return false; // per shard (count_batch)
    // a key's table, fingerprint and home position are found gap keys ahead, when its line is
    // prefetched, and kept in a ring until its lookup
    struct ahead
    {
        table const * t;
        std::uint64_t fp;
        std::uint64_t home;
    };
    constexpr std::size_t ring = 2 * gap;
    std::array<ahead, ring> pending;
    std::size_t const n = keys.size();
    for (std::size_t i = 0; i < n + gap; ++i)
    {
        if (i < n)
        {
            std::size_t const s = shard_of(keys[i]);
            table const * const t = tables_[s].get();
            std::uint64_t const fp = qf_->shard(s).fingerprint(local_key(keys[i]));
            std::uint64_t const home = home_of(fp, t->bits);
            __builtin_prefetch(t->entries + home, 0, 3);
            pending[i % ring] = ahead{t, fp, home};
        }
        if (i >= gap)
        {
            ahead const & a = pending[(i - gap) % ring];
            out[i - gap] = a.t->count_from(a.home, a.fp, count_bits_);
        }
    }
    return true;
}

template <bool WithOld>
insert_status table_counting_filter::add_keys(std::size_t const shard,
                                              std::span<std::uint64_t const> const keys,
                                              std::uint64_t * const old) noexcept
{
    table * const t = tables_[shard].get();
    if (t == nullptr)
        return WithOld ? main_->add_batch(shard, keys, old) : main_->insert_batch(shard, keys);
    quotient_filter const & q = qf_->shard(shard);
    std::size_t const n = keys.size();
    for (std::size_t i = 0; i < n; ++i)
    {
        if (i + gap < n)
            __builtin_prefetch(t->line(q.fingerprint(keys[i + gap])), 1, 3);
        if (!t->add(q.fingerprint(keys[i]), 1, WithOld ? old + i : nullptr, count_bits_))
        {
            if (!move_shard(shard))
                return insert_status::full;
            auto const rest = keys.subspan(i);
            return WithOld ? main_->add_batch(shard, rest, old + i)
                           : main_->insert_batch(shard, rest);
        }
    }
    return insert_status::ok;
}

insert_status
table_counting_filter::insert_batch(std::size_t const shard,
                                    std::span<std::uint64_t const> const keys) noexcept
{
    return add_keys<false>(shard, keys, nullptr);
}

insert_status table_counting_filter::add_batch(std::size_t const shard,
                                               std::span<std::uint64_t const> const keys,
                                               std::uint64_t * const old) noexcept
{
    return add_keys<true>(shard, keys, old);
}

insert_status table_counting_filter::insert(std::uint64_t const key,
                                            std::uint64_t const count) noexcept
{
    std::size_t const s = shard_of(key);
    if (count == 0)
        return insert_status::ok;
    if (table * const t = tables_[s].get())
    {
        if (t->add(qf_->shard(s).fingerprint(local_key(key)), count, nullptr, count_bits_))
            return insert_status::ok;
        if (!move_shard(s))
            return insert_status::full;
    }
    return main_->insert(key, count);
}

bool table_counting_filter::remove(std::uint64_t const key, std::uint64_t const count) noexcept
{
    std::size_t const s = shard_of(key);
    if (table * const t = tables_[s].get())
        return t->remove(qf_->shard(s).fingerprint(local_key(key)), count, count_bits_);
    return main_->remove(key, count);
}

std::uint64_t table_counting_filter::count(std::uint64_t const key) const noexcept
{
    std::size_t const s = shard_of(key);
    if (table const * const t = tables_[s].get())
        return t->count(qf_->shard(s).fingerprint(local_key(key)), count_bits_);
    return main_->count(key);
}

void table_counting_filter::settle_shard(std::size_t const shard)
{
    if (tables_[shard] != nullptr && !move_shard(shard))
        throw full_error{"the dedup filter cannot take a shard's counts: no memory to grow"};
}

bool table_counting_filter::fit_shard(std::size_t const shard, double const slack)
{
    settle_shard(shard);
    return growable_forward::fit_shard(shard, slack);
}

bool table_counting_filter::drop_counts_shard(std::size_t const shard)
{
    settle_shard(shard);
    return growable_forward::drop_counts_shard(shard);
}

std::uint64_t table_counting_filter::make_room_shard(std::size_t const shard,
                                                     std::uint64_t const cap_bytes,
                                                     std::uint64_t const incoming)
{
    return tables_[shard] != nullptr
               ? 0
               : growable_forward::make_room_shard(shard, cap_bytes, incoming);
}

bool table_counting_filter::has_room_shard(std::size_t const shard, std::uint64_t const cap_bytes,
                                           std::uint64_t const incoming) const noexcept
{
    return tables_[shard] != nullptr ||
           growable_forward::has_room_shard(shard, cap_bytes, incoming);
}

std::uint64_t table_counting_filter::keep_sample_shard(std::size_t const shard,
                                                       unsigned const level)
{
    settle_shard(shard);
    return growable_forward::keep_sample_shard(shard, level);
}

filter_stats table_counting_filter::stats() const noexcept
{
    filter_stats_sum sum;
    unsigned const p = qf_->shard(0).fingerprint_bits();
    bool const exact = qf_->shard(0).exact();
    for (std::size_t s = 0; s < tables_.size(); ++s)
    {
        sum.add(qf_->shard(s).stats());
        if (table const * const t = tables_[s].get())
        {
            filter_stats x;
            x.bytes = std::uint64_t{8} << t->bits;
            x.slots = std::uint64_t{1} << t->bits;
            x.used = t->used;
            x.distinct = t->used;
            x.total_count = t->total;
            x.load = static_cast<double>(x.used) / static_cast<double>(x.slots);
            x.estimated_fpr =
                exact
                    ? 0.0
                    : std::min(1.0, std::ldexp(static_cast<double>(t->used), -static_cast<int>(p)));
            sum.add(x);
        }
    }
    return sum.total();
}

void table_counting_filter::save(std::filesystem::path const & path) const
{
    if (table_shards() != 0)
        throw error{"internal error: a dedup filter is saved before its counts were settled"};
    main_->save(path);
}

std::unique_ptr<any_filter> table_counting_filter::clone() const
{
    throw error{"internal error: dedup's counting tables cannot be copied"};
}

} // namespace ksieve
