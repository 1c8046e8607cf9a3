// quotient_filter: the dispatch entry points of the hot paths (insert, count, batches), batch
// ordering and the single-key operations (grow, remove, concurrent insert).
#include "quotient_filter_kernel_body.hpp"

namespace ksieve
{

namespace detail
{

unsigned qf_select64_portable(std::uint64_t const w, unsigned const k) noexcept
{
    return select64_portable(w, k);
}

} // namespace detail

// Runs `call` (the filter its first argument) with the entries of the CPU level the dispatcher
// chooses (detail::qf_kernels, quotient_filter_kernels.hpp).
#define KSIEVE_QF_DISPATCH(call) (detail::qf_kernels().call)

insert_status quotient_filter::insert(std::uint64_t const key, std::uint64_t const count) noexcept
{
    return KSIEVE_QF_DISPATCH(insert_key(*this, key, count));
}

std::uint64_t quotient_filter::count(std::uint64_t const key) const noexcept
{
    return KSIEVE_QF_DISPATCH(count_key(*this, key));
}

insert_status quotient_filter::insert_batch(std::span<std::uint64_t const> const keys) noexcept
{
    return KSIEVE_QF_DISPATCH(insert_batch(*this, keys, nullptr));
}

insert_status quotient_filter::insert_batch(std::span<std::uint64_t const> const keys,
                                            std::uint64_t * const old) noexcept
{
    return KSIEVE_QF_DISPATCH(insert_batch(*this, keys, old));
}

void quotient_filter::count_batch(std::span<std::uint64_t const> const keys,
                                  std::uint64_t * const out) const noexcept
{
    KSIEVE_QF_DISPATCH(count_batch(*this, keys, out));
}

void quotient_filter::count_sharded(std::span<quotient_filter const> const shards,
                                    unsigned const key_bits, unsigned const shard_bits,
                                    std::span<std::uint64_t const> const keys,
                                    std::uint64_t * const out) noexcept
{
    if (shards.empty() || keys.empty())
        return;
    unsigned const shift =
        (key_bits - shard_bits) & 63; // no shard bits: every key in shard 0 (mask 0)
    std::uint64_t const shard_mask = shards.size() - 1;
    std::uint64_t const local_mask = low_bits_mask(key_bits - shard_bits);
    quotient_filter const & first = shards.front();
    bool const big = first.nblocks_ * first.block_bytes_ * shards.size() > next_header_min_bytes;
    KSIEVE_QF_DISPATCH(count_sharded(shards.data(), shift, shard_mask, local_mask, keys.data(),
                                     keys.size(), out, big));
}

void quotient_filter::count_batch(std::span<std::uint64_t const> const keys,
                                  std::uint64_t * const out, batch_scratch & scratch) const noexcept
{
    if (!order_batch(keys, scratch))
        KSIEVE_QF_DISPATCH(count_batch(*this, keys, out));
    else
        KSIEVE_QF_DISPATCH(
            count_batch_ordered(*this, scratch.fps_.data(), keys.size(), scratch.pos_.data(), out));
}

insert_status quotient_filter::insert_batch(std::span<std::uint64_t const> const keys,
                                            std::uint64_t * const old,
                                            batch_scratch & scratch) noexcept
{
    if (table_ == nullptr || !order_batch(keys, scratch))
        return KSIEVE_QF_DISPATCH(insert_batch(*this, keys, old));
    return KSIEVE_QF_DISPATCH(
        insert_batch_ordered(*this, scratch.fps_.data(), keys.size(), scratch.pos_.data(), old));
}

#undef KSIEVE_QF_DISPATCH

bool quotient_filter::batch_scratch::reserve(std::size_t const n) noexcept
{
    try
    {
        // each checked on its own: if one resize throws, the other may already have grown
        if (fps_.size() < n)
            fps_.resize(n);
        if (pos_.size() < n)
            pos_.resize(n);
        return true;
    }
    catch (...)
    {
        return false;
    }
}

namespace
{
// Home-slot bits of one region of an ordered batch: a power of two number of blocks of about
// order_region_bytes.
unsigned order_region_slot_bits(std::uint64_t const block_bytes) noexcept
{
    std::uint64_t const region_blocks = std::bit_floor(
        std::max<std::uint64_t>(1, quotient_filter::order_region_bytes / block_bytes));
    return 6 + static_cast<unsigned>(std::countr_zero(region_blocks));
}
} // namespace

bool quotient_filter::ordered_batch(std::size_t const n,
                                    batch_scratch const & scratch) const noexcept
{
    // more than one region, else there is nothing to order
    return n >= 2 && n <= std::numeric_limits<std::uint32_t>::max() &&
           nblocks_ * block_bytes_ > scratch.min_table_bytes && n * order_min_density >= nblocks_ &&
           q_ > order_region_slot_bits(block_bytes_);
}

bool quotient_filter::order_batch(std::span<std::uint64_t const> const keys,
                                  batch_scratch & s) const noexcept
{
    std::size_t const n = keys.size();
    if (!ordered_batch(n, s))
        return false;
    // At most 2^12 regions (the counts stay in L1).
    unsigned const slot_bits = order_region_slot_bits(block_bytes_);
    unsigned const regions_bits = std::min(q_ - slot_bits, 12u);
    unsigned const shift =
        r_ + q_ - regions_bits; // region = table code >> shift (home slot >> q - regions_bits)
    std::size_t const regions = std::size_t{1} << regions_bits;
    if (!s.reserve(n))
        return false;
    try
    {
        s.start_.assign(regions + 1, 0);
    }
    catch (...)
    {
        return false;
    }
    std::uint32_t * const start = s.start_.data();
    for (std::size_t i = 0; i < n; ++i)
        ++start[(key_code(keys[i]) >> shift) + 1];
    for (std::size_t g = 0; g < regions; ++g)
        start[g + 1] += start[g];
    std::uint64_t * const fps = s.fps_.data();
    std::uint32_t * const pos = s.pos_.data();
    for (std::size_t i = 0; i < n; ++i)
    {
        std::uint64_t const fp =
            fingerprint(keys[i]); // fingerprints: insertions may grow the table
        std::uint32_t const at = start[slot_code(fp) >> shift]++;
        fps[at] = fp;
        pos[at] = static_cast<std::uint32_t>(i);
    }
    return true;
}

// ---------------------------------------------------------------------------------------------------------
// Public single-key operations.

bool quotient_filter::can_grow() const noexcept
{
    return grown_slots_ != 0;
}

bool quotient_filter::try_grow() noexcept
{
    try
    {
        std::uint64_t const n = grown_slots();
        return n != 0 && resize_slots(n);
    }
    catch (...)
    {
        return false;
    }
}

void quotient_filter::fold_concurrent() noexcept
{
    if (!conc_ || !conc_->dirty.load(std::memory_order_relaxed))
        return;
    for (std::size_t i = 0; i < conc_->n; ++i)
    {
        auto & g = conc_->regions[i];
        used_ = static_cast<std::uint64_t>(static_cast<std::int64_t>(used_) + g.used);
        distinct_ = static_cast<std::uint64_t>(static_cast<std::int64_t>(distinct_) + g.distinct);
        total_ = sat_add(total_, g.total);
        g.used = 0;
        g.distinct = 0;
        g.total = 0;
    }
    conc_->dirty.store(false, std::memory_order_relaxed);
}

bool quotient_filter::remove(std::uint64_t const key, std::uint64_t const count) noexcept
{
    if (table_ == nullptr)
        return false;
    fold_concurrent();
    std::uint64_t const fp = key_code(key);
    std::uint64_t const h = fp >> r_;
    std::uint64_t const x = fp & rmask_;
    detail::qf_view const k{*this};
    locate_info li;
    if (detail::generic::locate(k, h, phys_slots_, false, li) != rc_ok || !li.occupied)
        return false;
    group_info g;
    if (!detail::generic::find_group(k, li, x, g))
        return false;
    if (count == 0)
        return true;
    std::uint64_t const c2 = g.count > count ? g.count - count : 0;
    std::uint64_t enc[max_group_slots];
    unsigned const n = c2 == 0 ? 0 : detail::generic::encode(k, x, c2, enc);
    for (unsigned t = 0; t < n; ++t)
        detail::generic::set_slot(k, g.pos + t, enc[t]);
    if (n < g.len)
    {
        bool const vanish = n == 0 && g.pos == li.start && g.last;
        detail::generic::delete_slots(k, h, g.pos + n, g.len - n, li.end, vanish,
                                      g.last && !vanish);
    }
    used_ -= g.len - n;
    if (c2 == 0)
        --distinct_;
    std::uint64_t const removed = std::min(count, g.count);
    total_ = total_ >= removed ? total_ - removed : 0;
    return true;
}

insert_status quotient_filter::insert_concurrent(std::uint64_t const key,
                                                 std::uint64_t const count) noexcept
{
    if (table_ == nullptr)
        return insert_status::full;
    if (count == 0)
        return insert_status::ok;
    concurrency & cs = *conc_;
    detail::qf_view const k{*this};
    std::uint64_t const fp = key_code(key);
    std::uint64_t const h = fp >> r_;
    std::uint64_t const x = fp & rmask_;
    std::size_t const first = static_cast<std::size_t>(h >> region_slot_bits);
    std::size_t last = first;
    cs.lock(first);
    std::int64_t du = 0;
    std::uint64_t nd = 0;
    std::uint64_t old_unused = 0;
    int rc;
    for (;;)
    {
        std::uint64_t const limit =
            std::min(phys_slots_, std::uint64_t{last + 1} << region_slot_bits);
        rc = detail::generic::insert_fp(k, h, x, count, limit, true, none, du, nd, old_unused);
        if (rc == rc_beyond && limit < phys_slots_)
        {
            cs.lock(++last);
            continue;
        }
        break;
    }
    std::size_t held = first; // the locks held: [held, last]
    if (rc == rc_saturated)
    {
        // Rare (a cluster of hundreds of slots): serialise with everyone, locks in ascending order.
        for (std::size_t i = first; i <= last; ++i)
            cs.unlock(i);
        for (std::size_t i = 0; i < cs.n; ++i)
            cs.lock(i);
        held = 0;
        last = cs.n - 1;
        rc = detail::generic::insert_fp(k, h, x, count, phys_slots_, false, none, du, nd,
                                        old_unused);
    }
    if (rc == rc_ok)
    {
        auto & g = cs.regions[first];
        g.used += du;
        g.distinct += static_cast<std::int64_t>(nd);
        g.total = sat_add(g.total, count);
    }
    for (std::size_t i = held; i <= last; ++i)
        cs.unlock(i);
    if (rc != rc_ok)
        return insert_status::full;
    if (!cs.dirty.load(std::memory_order_relaxed))
        cs.dirty.store(true, std::memory_order_relaxed);
    return insert_status::ok;
}

} // namespace ksieve
