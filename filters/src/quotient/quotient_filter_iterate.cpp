// quotient_filter: iteration (cursor) and rebuilding (resize, shrink, fit).
#include "quotient_filter_appender.hpp"

namespace ksieve
{

// ---------------------------------------------------------------------------------------------------------
// Iteration, rebuilding, merging.

quotient_filter::cursor::cursor(quotient_filter const & f) noexcept : f_{&f} {}

// The next occupied home slot's run: its quotient, first and last slot. False at the end (and after
// it).
[[gnu::always_inline]] inline bool quotient_filter::cursor::next_run(quotient_filter const & f,
                                                                     position & at) noexcept
{
    detail::qf_view const k{f};
    at.in_run = false;
    if (at.next_quotient >= f.nslots_)
        return false;
    // The next occupied home slot: the lowest occupied bit not yet consumed.
    while (at.occ_bits == 0)
    {
        std::uint64_t const b = ++at.occ_block;
        if (64 * b >= f.nslots_)
        {
            at.next_quotient = f.nslots_;
            return false;
        }
        at.occ_bits = detail::generic::occupieds(k, b);
        // The walk reads the table front to back: fetch a few blocks ahead (the hardware prefetcher
        // stops at page boundaries).
        if (std::uint64_t const ahead = b + 8; ahead < f.nblocks_)
        {
            auto const * const blk =
                reinterpret_cast<char const *>(f.ctable_) + ahead * f.block_bytes_;
            __builtin_prefetch(blk);
            __builtin_prefetch(blk + 64);
            __builtin_prefetch(blk + 127);
        }
    }
    std::uint64_t const h =
        64 * at.occ_block + static_cast<std::uint64_t>(std::countr_zero(at.occ_bits));
    at.occ_bits &= at.occ_bits - 1;
    // Its run's end: the next runend bit not yet consumed.
    while (at.end_bits == 0)
    {
        std::uint64_t const b = ++at.end_block;
        if (64 * b >= f.phys_slots_)
        {
            at.next_quotient = f.nslots_;
            return false;
        }
        at.end_bits = detail::generic::runends(k, b);
    }
    std::uint64_t const end =
        64 * at.end_block + static_cast<std::uint64_t>(std::countr_zero(at.end_bits));
    at.end_bits &= at.end_bits - 1;
    std::uint64_t const start = at.have_prev && at.prev_end + 1 > h ? at.prev_end + 1 : h;
    if (h >= f.nslots_ || end < start)
    {
        // (past the home slots, or a run that ends before it starts: not a table this filter wrote)
        at.next_quotient = f.nslots_;
        return false;
    }
    at.quotient = h;
    if (f.split_)
    {
        // first_top(h) inlined: the estimate and its two steps up, without a branch
        std::uint64_t const a = f.top_estimate(h);
        at.top = a + (f.home_of_top(a) < h ? 1 : 0) + (f.home_of_top(a + 1) < h ? 1 : 0);
    }
    at.pos = start;
    at.run_end = end;
    at.prev_end = end;
    at.have_prev = true;
    at.next_quotient = h + 1;
    at.in_run = true;
    return true;
}

bool quotient_filter::cursor::next() noexcept
{
    quotient_filter const & f = *f_;
    if (!(at_.in_run && at_.pos <= at_.run_end) && !next_run(f, at_))
        return false;
    std::uint64_t v, c, len;
    detail::generic::decode_group(detail::qf_view{f}, at_.pos, at_.run_end, v, c, len);
    fp_ = f.split_ ? ((at_.top + (v >> f.low_bits_)) << f.low_bits_) | (v & f.low_mask_)
                   : (at_.quotient << f.r_) | v;
    count_ = c;
    at_.pos += len;
    return true;
}

std::uint64_t quotient_filter::cursor::words_done() const noexcept
{
    quotient_filter const & f = *f_;
    // Blocks before the run being read and before the next home slot are not read again.
    std::uint64_t const from =
        std::min(at_.in_run ? at_.pos : at_.next_quotient, at_.next_quotient);
    std::uint64_t const blocks = std::min(from >> 6, f.nblocks_);
    return std::min(blocks * f.block_bytes_ / 8, f.nwords_);
}

std::size_t quotient_filter::cursor::read(std::uint64_t * const fps, std::uint64_t * const counts,
                                          std::size_t const cap) noexcept
{
    quotient_filter const & f = *f_;
    detail::qf_view const k{f};
    position at = at_; // (a local: kept in registers)
    std::size_t n = 0;
    std::uint64_t v, c, len;
    if (f.split_)
        for (; n < cap; ++n, at.pos += len)
        {
            if (!(at.in_run && at.pos <= at.run_end) && !next_run(f, at))
                break;
            detail::generic::decode_group(k, at.pos, at.run_end, v, c, len);
            fps[n] = ((at.top + (v >> f.low_bits_)) << f.low_bits_) | (v & f.low_mask_);
            counts[n] = c;
        }
    else
        for (; n < cap; ++n, at.pos += len)
        {
            if (!(at.in_run && at.pos <= at.run_end) && !next_run(f, at))
                break;
            detail::generic::decode_group(k, at.pos, at.run_end, v, c, len);
            fps[n] = (at.quotient << f.r_) | v;
            counts[n] = c;
        }
    at_ = at;
    return n;
}

bool quotient_filter::resize(unsigned const new_q)
{
    if (new_q < min_quotient_bits || new_q > max_quotient_bits)
        return false;
    return resize_slots(std::uint64_t{1} << new_q);
}

bool quotient_filter::resize_slots(std::uint64_t const nslots)
{
    if (table_ == nullptr || !geometry_ok(p_, nslots))
        return false;
    fold_concurrent();
    if (nslots == nslots_)
        return true;
    if (used_ > nslots)
        return false;
    return rebuild(nslots, false);
}

bool quotient_filter::rebuild(std::uint64_t const nslots, bool const presence_only)
{
    quotient_filter nf = empty(key_bits_, p_, max_load_, auto_grow_, nslots);
    qf_appender app{nf};
    cursor c{*this};
    while (c.next())
        if (!app.append(c.fingerprint(), presence_only ? 1 : c.count()))
            return false;
    app.finish();
    if (nf.used_ > nf.nslots_)
        return false;
    *this = std::move(nf);
    return true;
}

bool quotient_filter::drop_counts()
{
    if (table_ == nullptr)
        return false;
    fold_concurrent();
    if (total_count() == distinct())
        return false;
    return rebuild(nslots_, true); // (fits: one slot an entry, fewer than the table holds now)
}

bool quotient_filter::shrink()
{
    if (nslots_ % 128 != 0 ||
        static_cast<double>(used_slots()) > max_load_ * static_cast<double>(nslots_ / 2))
        return false;
    return resize_slots(nslots_ / 2);
}

std::uint64_t quotient_filter::fit_slots() const
{
    // Slots the contents take: one per fingerprint, counters measured at the remainder width of a
    // table sized for the fingerprints alone (a reference that depends on the contents only, not on
    // the table now).
    std::uint64_t used = distinct();
    if (total_count() != used)
    {
        unsigned const r_ref =
            std::clamp(remainder_bits_for(p_, slots_for(used, max_load_)), min_remainder_bits,
                       std::min(max_remainder_bits, p_ - min_quotient_bits));
        quotient_filter const ref =
            with_geometry(key_bits_, min_quotient_bits, r_ref, max_load_, false);
        std::uint64_t const mask = low_bits_mask(r_ref);
        used = 0;
        cursor c{*this};
        while (c.next())
            used += c.count() == 1 ? 1
                                   : detail::generic::encoded_length(
                                         detail::qf_view{ref}, c.fingerprint() & mask, c.count());
    }
    return slots_for(used, max_load_);
}

bool quotient_filter::fit(double const slack)
{
    if (table_ == nullptr)
        return false;
    // Every fingerprint takes a slot: when that alone leaves less than `slack` to save, so does
    // fit_slots(), whose walk of the table (for the counters' slots) is then not needed.
    if (slack > 0.0 && static_cast<double>(slots_for(distinct(), max_load_)) >=
                           (1.0 - slack) * static_cast<double>(nslots_))
        return false;
    std::uint64_t n = fit_slots();
    if (slack > 0.0 ? static_cast<double>(n) >= (1.0 - slack) * static_cast<double>(nslots_)
                    : n == nslots_)
        return false;
    // The counters may take a few more slots at the table's own remainder width than at the
    // reference: then the slots they take there, and 64 more at a time.
    std::uint64_t const before = nslots_;
    for (unsigned tries = 0; tries < 16; ++tries)
    {
        if (resize_slots(n) && static_cast<double>(used_) <= max_load_ * static_cast<double>(n))
            return nslots_ != before;
        n = std::max(n + 64, slots_for(used_, max_load_));
    }
    return nslots_ != before;
}

} // namespace ksieve
