// prefiltered_filter: the dedup counting filter that admits a k-mer to its quotient filter on the
// second sighting (a Bloom prefilter of collision keys remembers the first).
#include <ksieve/filters/kmers/kmer.hpp>
#include <ksieve/filters/quotient/prefiltered_filter.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/zeroed_memory.hpp>

#include <algorithm>
#include <bit>
#include <new>

namespace ksieve
{

namespace
{

// The growable interface of the main filter. \throws usage_error if it has none.
growable_filter & growable_of(any_filter & main)
{
    if (main.growable() == nullptr)
        throw usage_error{"the prefilter needs a quotient filter"};
    return *main.growable();
}
// The prefilter: a split-block Bloom filter (one 64-byte block per key, chosen by the low bits of
// h = block_of(key); bit j of the block is bit (b >> 6 j) & 63 of word j, b = mix64(h)): one cache
// line per key, and at 8 / 12 / 16 bits per key about 2% / 0.3% / 0.07% false positives.
constexpr std::uint64_t prefilter_seed = 0x61646d6974746564ULL;
constexpr std::size_t block_words = 8;

constexpr std::uint64_t block_of(std::uint64_t const ck) noexcept
{
    return mix64(ck ^ prefilter_seed);
}

// The pending table: open addressing with linear probing, at most half full; an entry is a
// collision key plus one (0: empty), with its top bit set once the key's one pending sighting was
// removed (collision keys have at most 62 bits).
constexpr std::uint64_t removed_bit = std::uint64_t{1} << 63;
} // namespace

struct prefiltered_filter::shard_state
{
    zeroed_memory bloom;
    std::uint64_t block_mask{0};
    std::uint64_t prefiltered{0};
    std::vector<std::uint64_t> pending;       // the pending table (see removed_bit)
    std::vector<std::uint32_t> pending_slots; // its used entries, in the order they were taken
    // add_batch / insert_batch scratch: collision keys; the keys routed to the main filter, their
    // positions and old counts
    std::vector<std::uint64_t> cks, main_keys, main_old;
    std::vector<std::uint32_t> main_pos;

    [[nodiscard]] std::uint64_t * block(std::uint64_t const h) const noexcept
    {
        return bloom.as<std::uint64_t>() + (h & block_mask) * block_words;
    }
    void prefetch(std::uint64_t const ck) const noexcept
    {
        __builtin_prefetch(block(block_of(ck)));
    }
    [[nodiscard]] bool holds(std::uint64_t const ck) const noexcept
    {
        std::uint64_t const h = block_of(ck);
        std::uint64_t const b = mix64(h);
        std::uint64_t const * const w = block(h);
        bool all = true;
        for (std::size_t j = 0; j < block_words; ++j)
            all &= ((w[j] >> ((b >> (6 * j)) & 63)) & 1) != 0;
        return all;
    }
    void set(std::uint64_t const ck) noexcept
    {
        std::uint64_t const h = block_of(ck);
        std::uint64_t const b = mix64(h);
        std::uint64_t * const w = block(h);
        for (std::size_t j = 0; j < block_words; ++j)
            w[j] |= std::uint64_t{1} << ((b >> (6 * j)) & 63);
        ++prefiltered;
    }
    // The entry of ck, or nullptr.
    [[nodiscard]] std::uint64_t * find(std::uint64_t const ck) noexcept
    {
        if (pending_slots.empty())
            return nullptr;
        std::size_t const mask = pending.size() - 1;
        for (std::size_t i = mix64(ck) & mask;; i = (i + 1) & mask)
        {
            if (pending[i] == 0)
                return nullptr;
            if ((pending[i] & ~removed_bit) == ck + 1)
                return &pending[i];
        }
    }
    // Whether ck has its pending sighting.
    [[nodiscard]] bool pending_holds(std::uint64_t const ck) const noexcept
    {
        std::uint64_t const * const e = const_cast<shard_state *>(this)->find(ck);
        return e != nullptr && (*e & removed_bit) == 0;
    }
    // Records the pending sighting of ck. \returns false if it had one already. \throws
    // std::bad_alloc
    bool mark(std::uint64_t const ck)
    {
        if (2 * (pending_slots.size() + 1) > pending.size())
            grow();
        std::size_t const mask = pending.size() - 1;
        for (std::size_t i = mix64(ck) & mask;; i = (i + 1) & mask)
        {
            if (pending[i] == 0)
            {
                pending[i] = ck + 1;
                pending_slots.push_back(static_cast<std::uint32_t>(i));
                return true;
            }
            if ((pending[i] & ~removed_bit) == ck + 1)
            {
                bool const had = (pending[i] & removed_bit) == 0;
                pending[i] = ck + 1;
                return !had;
            }
        }
    }
    void grow()
    {
        std::vector<std::uint64_t> old(std::max<std::size_t>(64, 2 * pending.size()));
        old.swap(pending);
        std::vector<std::uint32_t> slots;
        slots.swap(pending_slots);
        pending_slots.reserve(pending.size() / 2);
        std::size_t const mask = pending.size() - 1;
        for (std::uint32_t const j : slots)
        {
            std::size_t i = mix64((old[j] & ~removed_bit) - 1) & mask;
            while (pending[i] != 0)
                i = (i + 1) & mask;
            pending[i] = old[j];
            pending_slots.push_back(static_cast<std::uint32_t>(i));
        }
    }
};

prefiltered_filter::prefiltered_filter(std::unique_ptr<any_filter> main,
                                       std::uint64_t const prefilter_bytes)
    : any_filter{main->type(), main->kmer(), main->shard_bits(), main->target_fpr(),
                 main->expected()},
      growable_forward{growable_of(*main)}, main_{std::move(main)}, shards_(main_->num_shards())
{
    std::uint64_t const per_shard = std::max<std::uint64_t>(prefilter_bytes / shards_.size(), 1024);
    std::uint64_t const blocks = std::bit_floor(per_shard / (8 * block_words));
    for (auto & st : shards_)
    {
        st.bloom = zeroed_memory{blocks * 8 * block_words};
        st.block_mask = blocks - 1;
    }
}

prefiltered_filter::~prefiltered_filter() = default;

std::uint64_t prefiltered_filter::prefilter_bytes() const noexcept
{
    std::uint64_t bytes = 0;
    for (auto const & st : shards_)
        bytes += st.bloom.size();
    return bytes;
}

std::uint64_t prefiltered_filter::prefiltered() const noexcept
{
    std::uint64_t n = 0;
    for (auto const & st : shards_)
        n += st.prefiltered;
    return n;
}

bool prefiltered_filter::prefilter_holds(std::uint64_t const key) const noexcept
{
    return shards_[shard_of(key)].holds(collision_key(key));
}

std::uint64_t prefiltered_filter::whole_key(std::size_t const shard,
                                            std::uint64_t const local) const noexcept
{
    return shard_bits() == 0 ? local
                             : (std::uint64_t{shard} << (key_bits() - shard_bits())) | local;
}

std::uint64_t prefiltered_filter::combine(std::size_t const shard, std::uint64_t const ck,
                                          std::uint64_t const m) const noexcept
{
    if (m > 0) // (the prefilter or the pending table holds the first sighting)
        return m + 1;
    shard_state const & st = shards_[shard];
    return st.pending_holds(ck) || st.holds(ck) ? 1 : 0;
}

void prefiltered_filter::count_batch(std::size_t const shard,
                                     std::span<std::uint64_t const> const local_keys,
                                     std::uint64_t * const out) const noexcept
{
    main_->count_batch(shard, local_keys, out);
    for (std::size_t i = 0; i < local_keys.size(); ++i)
        out[i] = combine(shard, collision_key(whole_key(shard, local_keys[i])), out[i]);
}

bool prefiltered_filter::count_keys(std::span<std::uint64_t const> const keys,
                                    std::uint64_t * const out) const noexcept
{
    if (!main_->count_keys(keys, out))
        return false;
    for (std::size_t i = 0; i < keys.size(); ++i)
        out[i] = out[i] > 0 ? out[i] + 1 : combine(shard_of(keys[i]), collision_key(keys[i]), 0);
    return true;
}

// Keys whose collision key the prefilter holds go to the main filter (in one batch, in order); the
// others to the pending table. old(i, c): key i had count c just before its addition (nullptr-like
// no-op for inserts).
template <typename Old>
insert_status prefiltered_filter::route(std::size_t const shard,
                                        std::span<std::uint64_t const> const local_keys,
                                        Old && old) noexcept
{
    shard_state & st = shards_[shard];
    try
    {
        st.main_keys.clear();
        st.main_pos.clear();
        std::size_t const n = local_keys.size();
        st.cks.resize(n);
        for (std::size_t i = 0; i < n; ++i)
            st.cks[i] = collision_key(whole_key(shard, local_keys[i]));
        // the prefilter's words are fetched some keys ahead
        constexpr std::size_t ahead = 16;
        for (std::size_t i = 0; i < std::min(n, ahead); ++i)
            st.prefetch(st.cks[i]);
        for (std::size_t i = 0; i < n; ++i)
        {
            if (i + ahead < n)
                st.prefetch(st.cks[i + ahead]);
            std::uint64_t const ck = st.cks[i];
            if (st.holds(ck) || !st.mark(ck))
            {
                st.main_keys.push_back(local_keys[i]);
                st.main_pos.push_back(static_cast<std::uint32_t>(i));
            }
            else
                old(i, 0); // the first sighting
        }
        if (st.main_keys.empty())
            return insert_status::ok;
        st.main_old.resize(st.main_keys.size());
    }
    catch (std::bad_alloc const &)
    {
        return insert_status::full;
    }
    insert_status const status = main_->add_batch(shard, st.main_keys, st.main_old.data());
    if (status == insert_status::ok)
        for (std::size_t j = 0; j < st.main_keys.size(); ++j)
            old(st.main_pos[j], st.main_old[j] + 1);
    return status;
}

insert_status
prefiltered_filter::insert_batch(std::size_t const shard,
                                 std::span<std::uint64_t const> const local_keys) noexcept
{
    return route(shard, local_keys, [](std::size_t, std::uint64_t) noexcept {});
}

insert_status prefiltered_filter::add_batch(std::size_t const shard,
                                            std::span<std::uint64_t const> const local_keys,
                                            std::uint64_t * const old) noexcept
{
    return route(shard, local_keys,
                 [old](std::size_t const i, std::uint64_t const c) noexcept { old[i] = c; });
}

insert_status prefiltered_filter::insert(std::uint64_t const key,
                                         std::uint64_t const count) noexcept
{
    if (count == 0)
        return insert_status::ok;
    shard_state & st = shards_[shard_of(key)];
    std::uint64_t const ck = collision_key(key);
    bool first = false;
    if (!st.holds(ck))
    {
        try
        {
            first = st.mark(ck);
        }
        catch (std::bad_alloc const &)
        {
            return insert_status::full;
        }
    }
    return count - first == 0 ? insert_status::ok : main_->insert(key, count - first);
}

// Copies in the main filter go first, the first sighting (pending) last; a first sighting held by
// the prefilter cannot be removed.
bool prefiltered_filter::remove(std::uint64_t const key, std::uint64_t const count) noexcept
{
    shard_state & st = shards_[shard_of(key)];
    std::uint64_t const ck = collision_key(key);
    std::uint64_t const m = main_->count(key);
    if (m >= count)
        return main_->remove(key, count);
    std::uint64_t * const e = st.holds(ck) ? nullptr : st.find(ck);
    if (m + 1 != count || e == nullptr || (*e & removed_bit) != 0)
        return false;
    if (m > 0 && !main_->remove(key, m))
        return false;
    *e |= removed_bit;
    return true;
}

std::uint64_t prefiltered_filter::count(std::uint64_t const key) const noexcept
{
    return combine(shard_of(key), collision_key(key), main_->count(key));
}

void prefiltered_filter::commit_shard(std::size_t const shard) noexcept
{
    shard_state & st = shards_[shard];
    std::size_t const n = st.pending_slots.size();
    constexpr std::size_t ahead = 8;
    for (std::size_t j = 0; j < n; ++j)
    {
        if (j + ahead < n && (st.pending[st.pending_slots[j + ahead]] & removed_bit) == 0)
            st.prefetch(st.pending[st.pending_slots[j + ahead]] - 1);
        std::uint64_t & e = st.pending[st.pending_slots[j]];
        if ((e & removed_bit) == 0)
            st.set(e - 1);
        e = 0;
    }
    st.pending_slots.clear();
}

filter_stats prefiltered_filter::stats() const noexcept
{
    filter_stats s = main_->stats();
    s.bytes += prefilter_bytes();
    for (auto const & st : shards_)
        s.bytes += st.pending.size() * sizeof(std::uint64_t);
    return s;
}

void prefiltered_filter::save(std::filesystem::path const &) const
{
    throw error{"internal error: a filter with a prefilter cannot be saved"};
}

std::unique_ptr<any_filter> prefiltered_filter::clone() const
{
    throw error{"internal error: a filter with a prefilter cannot be copied"};
}

} // namespace ksieve
