// quotient_builder: quotient filters built from entries in fingerprint order, in the table size
// they need (the results of the set operations) or in the size growth by insertion gives them
// (re-sharded filters).
#include <ksieve/filters/quotient/quotient_builder.hpp>

#include "quotient_filter_appender.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <optional>
#include <string>
#include <vector>

namespace ksieve
{

namespace
{
// Growth sizes measured by a builder of a grown table: from the first whose load limit is at least
// half the distinct estimate (the estimate may be twice too high or low; each size doubles).
constexpr std::size_t grown_sizes_measured = 5;

// One growth size of a grown table and the slots its counters take there.
struct grown_size
{
    quotient_filter geometry; // (no table)
    std::uint64_t heavy{0};   // slots of the fingerprints of counts above 1
};

// Gives up keeping the entries (they are walked again instead) and frees what was kept.
void stop_keeping(auto & s)
{
    s.kept_all = false;
    s.gaps = {};
    s.counts = {};
    s.wide_gaps = {};
    s.wide_counts = {};
}

// (measure()'s keeping: the entries as gaps from the one before and counts in a byte)
void keep_entries(std::span<quotient_builder::entry const> const entries, auto & s)
{
    if (!s.keeping || !s.kept_all)
        return;
    if (5 * (s.gaps.size() + entries.size()) > s.keep_max)
    {
        stop_keeping(s);
        return;
    }
    for (auto const & [fp, count] : entries)
    {
        std::uint64_t const gap = fp - s.last_fp;
        s.last_fp = fp;
        s.gaps.push_back(static_cast<std::uint32_t>(std::min(gap, gap_escape)));
        if (gap >= gap_escape) [[unlikely]]
            s.wide_gaps.push_back(gap);
        s.counts.push_back(static_cast<std::uint8_t>(std::min(count, count_escape)));
        if (count >= count_escape) [[unlikely]]
            s.wide_counts.push_back(count);
    }
}

} // namespace

struct quotient_builder::state
{
    state(unsigned const key_bits_, unsigned const p_, double const max_load_,
          bool const auto_grow_, unsigned const r_ref)
        : key_bits{key_bits_}, p{p_}, max_load{max_load_}, auto_grow{auto_grow_},
          ref{quotient_filter::with_geometry(key_bits_, min_quotient_bits, r_ref, max_load_,
                                             false)},
          mask{low_bits_mask(r_ref)}
    {
    }

    unsigned key_bits;
    unsigned p;
    double max_load;
    bool auto_grow;
    quotient_filter ref; // (its remainder width measures the counters)
    std::uint64_t mask;
    std::uint64_t need{0};
    std::uint64_t ones{0};         // entries of count 1
    std::vector<grown_size> grown; // the growth sizes measured (builders of a grown table)
    std::size_t next_grown{0};     // the next of them that start() tries
    std::uint64_t nslots{0};       // home slots of the table of the last start() (0: none yet)
    double limit{0};               // the most slots that table may use
    // the entries measured, kept for pass 2 (keep()): fingerprint gaps and counts, the wide ones
    // apart
    bool keeping{false};
    bool kept_all{true};
    std::size_t keep_max{0};
    std::uint64_t last_fp{0};
    std::vector<std::uint32_t> gaps;
    std::vector<std::uint8_t> counts;
    std::vector<std::uint64_t> wide_gaps;
    std::vector<std::uint64_t> wide_counts;
    std::optional<quotient_filter> out;
    std::optional<qf_appender> app; // (appends to *out)
    bool ok{false};
};

quotient_builder::quotient_builder(unsigned const key_bits, unsigned const p, double const max_load,
                                   bool const auto_grow, unsigned const r_ref)
    : s_{std::make_unique<state>(key_bits, p, max_load, auto_grow, r_ref)}
{
}

quotient_builder::quotient_builder(quotient_filter const & like, std::uint64_t const distinct)
    : quotient_builder{
          like.key_bits(), like.fingerprint_bits(), like.max_load(), like.auto_grow(),
          std::clamp(remainder_bits_for(like.fingerprint_bits(),
                                        quotient_filter::slots_for(distinct, like.max_load())),
                     quotient_filter::min_remainder_bits,
                     std::min(quotient_filter::max_remainder_bits,
                              like.fingerprint_bits() - min_quotient_bits))}
{
    state & s = *s_;
    for (std::uint64_t n = like.slots(); n != 0 && s.grown.size() < grown_sizes_measured;)
    {
        quotient_filter g = qf_appender::geometry_only(s.key_bits, s.p, s.max_load, s.auto_grow, n);
        std::uint64_t const grown = s.auto_grow ? grown_slots_for(s.p, n) : 0;
        if (2 * qf_appender::load_limit_of(g) >= distinct || grown == 0)
            s.grown.push_back(grown_size{std::move(g)});
        n = grown;
    }
}

quotient_builder::quotient_builder(quotient_builder &&) noexcept = default;
quotient_builder & quotient_builder::operator=(quotient_builder &&) noexcept = default;
quotient_builder::~quotient_builder() = default;

void quotient_builder::measure(std::span<entry const> const entries)
{
    state & s = *s_;
    std::uint64_t need = s.need;
    std::uint64_t ones = s.ones;
    for (auto const & [fp, count] : entries)
    {
        if (count == 1)
        {
            ++ones;
            continue;
        }
        need += qf_appender::encoded_length(s.ref, fp & s.mask, count);
        for (auto & g : s.grown)
            g.heavy += qf_appender::encoded_length(
                g.geometry, qf_appender::remainder_of(g.geometry, fp), count);
    }
    s.need = need + (ones - s.ones);
    s.ones = ones;
    keep_entries(entries, s);
}

void quotient_builder::keep(std::size_t const max_bytes, std::size_t const expected)
{
    s_->keeping = true;
    s_->keep_max = max_bytes;
    std::size_t const room = std::min(expected, max_bytes / 5);
    s_->gaps.reserve(room);
    s_->counts.reserve(room);
}

void quotient_builder::absorb(quotient_builder && later)
{
    state & s = *s_;
    state & t = *later.s_;
    s.need += t.need;
    s.ones += t.ones;
    for (std::size_t i = 0; i < s.grown.size() && i < t.grown.size(); ++i)
        s.grown[i].heavy += t.grown[i].heavy;
    if (!s.keeping || !s.kept_all)
        return;
    s.keep_max += t.keep_max;
    if (!t.keeping || !t.kept_all || 5 * (s.gaps.size() + t.gaps.size()) > s.keep_max)
    {
        stop_keeping(s);
        return;
    }
    if (t.gaps.empty())
        return;
    // (t's first gap is from 0: made the gap from s's last entry)
    bool const t_wide = t.gaps[0] == gap_escape;
    std::uint64_t const first = t_wide ? t.wide_gaps[0] : t.gaps[0];
    std::uint64_t const gap = first - s.last_fp;
    s.gaps.push_back(static_cast<std::uint32_t>(std::min(gap, gap_escape)));
    if (gap >= gap_escape)
        s.wide_gaps.push_back(gap);
    s.gaps.insert(s.gaps.end(), t.gaps.begin() + 1, t.gaps.end());
    s.wide_gaps.insert(s.wide_gaps.end(), t.wide_gaps.begin() + (t_wide ? 1 : 0),
                       t.wide_gaps.end());
    s.counts.insert(s.counts.end(), t.counts.begin(), t.counts.end());
    s.wide_counts.insert(s.wide_counts.end(), t.wide_counts.begin(), t.wide_counts.end());
    s.last_fp = t.last_fp;
    later.s_.reset();
}

bool quotient_builder::append_kept()
{
    state & s = *s_;
    if (!s.keeping || !s.kept_all)
        return false;
    for_each_kept_chunk(s.gaps.data(), s.counts.data(), s.gaps.size(), s.wide_gaps, s.wide_counts,
                        [&](std::span<entry const> const chunk) { return append(chunk); });
    return true;
}

void quotient_builder::add_slots(std::uint64_t const slots) noexcept
{
    s_->need += slots;
}

void quotient_builder::start(zeroed_memory * const spare)
{
    state & s = *s_;
    unsigned const p = s.p;
    // A grown table: the next growth size whose load limit holds the entries (the next one also
    // where the slots of the last did not: an insertion that runs off the table grows it too).
    bool grown = false;
    while (!grown && s.next_grown < s.grown.size())
    {
        grown_size const & g = s.grown[s.next_grown++];
        std::uint64_t const limit = qf_appender::load_limit_of(g.geometry);
        grown = s.ones + g.heavy <= limit;
        s.nslots = grown ? g.geometry.slots() : 0;
        s.limit = static_cast<double>(limit);
    }
    if (!grown)
    {
        if (s.nslots == 0)
        {
            // The fewest home slots that hold the entries within max_load (at least 2^q_lo), or the
            // next power of two where the fingerprints do not fit that table.
            unsigned const r_max = quotient_filter::max_remainder_bits;
            unsigned q_lo = std::min(quotient_filter::default_min_quotient_bits,
                                     p - quotient_filter::min_remainder_bits);
            q_lo = std::max({q_lo, min_quotient_bits, p > r_max ? p - r_max : 0u});
            s.nslots =
                std::max(quotient_filter::slots_for(s.need, s.max_load), std::uint64_t{1} << q_lo);
        }
        else
            s.nslots += std::max<std::uint64_t>(64, s.nslots / 8 / 64 * 64);
        if (!geometry_ok(p, s.nslots))
            s.nslots = std::bit_ceil(s.nslots);
        s.limit = s.max_load * static_cast<double>(s.nslots);
    }
    if (top_bits_for(s.nslots) > p - quotient_filter::min_remainder_bits ||
        top_bits_for(s.nslots) > max_quotient_bits)
        throw full_error{"quotient filter merge: the union does not fit in a " + std::to_string(p) +
                         "-bit fingerprint filter"};
    s.app.reset();
    s.out.reset();
    s.out.emplace(
        qf_appender::empty_table(s.key_bits, p, s.max_load, s.auto_grow, s.nslots, spare));
    s.app.emplace(qf_appender{*s.out});
    s.ok = true;
}

bool quotient_builder::append(std::span<entry const> const entries) noexcept
{
    state & s = *s_;
    s.ok = s.ok && s.app->append_all(entries);
    return s.ok;
}

bool quotient_builder::finish() noexcept
{
    state & s = *s_;
    if (!s.ok || static_cast<double>(s.app->used) > s.limit)
        return false;
    s.app->finish();
    s.ok = false;
    return true;
}

quotient_filter quotient_builder::take() noexcept
{
    state & s = *s_;
    s.app.reset();
    quotient_filter f = std::move(*s.out);
    s.out.reset();
    return f;
}

} // namespace ksieve
