// quotient_filter's appender: builds a table from fingerprints in increasing order (resize, fit,
// set operations); private header of the quotient filter's sources.
#pragma once

#include "quotient_filter_kernel_body.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace ksieve
{

// Packs a block's 64 remainders of R bits (slot i at bit i R) into its R words, the shifts and word
// indices known at compile time.
template <unsigned R>
void pack_remainders(std::uint64_t const * const rems, std::uint8_t * const out) noexcept
{
    std::uint64_t words[R + 1] = {};
#pragma GCC unroll 64
    for (unsigned i = 0; i < 64; ++i)
    {
        unsigned const bit = i * R;
        unsigned const off = bit & 63;
        words[bit >> 6] |= rems[i] << off;
        if (off + R > 64)
            words[(bit >> 6) + 1] |= (rems[i] >> 1) >> (63 - off);
    }
    for (unsigned w = 0; w < R; ++w)
        store64(out + 8 * w, words[w]);
}

template <std::size_t... R> constexpr auto pack_table(std::index_sequence<R...>) noexcept
{
    using fn = void (*)(std::uint64_t const *, std::uint8_t *) noexcept;
    return std::array<fn, sizeof...(R)>{&pack_remainders<static_cast<unsigned>(R == 0 ? 1 : R)>...};
}

// pack_remainders<r> for every remainder width r (entry 0 unused: r >= 2).
constexpr auto pack_block_remainders =
    pack_table(std::make_index_sequence<quotient_filter::max_remainder_bits + 1>{});

// Builds a filter from fingerprints appended in strictly increasing order (resize, merge) into an
// empty table. A run's end is marked when the next run starts (or at finish()). The remainders of
// the block being filled are collected here and packed into the table when the walk leaves the
// block; the occupied and runend bits go straight to the table. The statistics are written by
// finish().
struct qf_appender
{
    quotient_filter & f;
    std::uint64_t pos{0};
    std::uint64_t last_h{none};
    std::uint64_t used{0};
    std::uint64_t distinct{0};
    std::uint64_t total{0};
    std::uint64_t block{none}; // the block whose remainders are in rems
    std::array<std::uint64_t, 64> rems{};
    std::uint64_t occ_block{
        none}; // the block of the occupied bits in occ_word, not yet in the table
    std::uint64_t occ_word{0};
    std::uint64_t end_block{none}; // likewise for runend bits
    std::uint64_t end_word{0};

    // ORs `word` into the 64-bit field at byte `field` of block b's header.
    void or_header(std::uint64_t const b, std::uint64_t const field,
                   std::uint64_t const word) noexcept
    {
        std::uint8_t * const w =
            reinterpret_cast<std::uint8_t *>(f.table_) + b * f.block_bytes_ + field;
        store64(w, load64(w) | word);
    }

    // Packs rems into the remainder area of `block` (r words of 64 slots of r bits) and clears it.
    void flush() noexcept
    {
        if (block == none)
            return;
        auto * const out =
            reinterpret_cast<std::uint8_t *>(f.table_) + block * f.block_bytes_ + header_bytes;
        pack_block_remainders[f.r_](rems.data(), out);
        rems.fill(0);
        block = none;
    }

    bool append(std::uint64_t const fp, std::uint64_t const count) noexcept
    {
        std::pair<std::uint64_t, std::uint64_t> const e{fp, count};
        return append_all({&e, 1});
    }

    // append() for each (fingerprint, count) of `entries`, the table's parameters and the
    // appender's state in locals (stores into the table could otherwise alias them). False as soon
    // as one does not fit.
    bool append_all(std::span<std::pair<std::uint64_t, std::uint64_t> const> const entries) noexcept
    {
        return f.split_ ? append_all_as<true>(entries) : append_all_as<false>(entries);
    }

    // An empty filter of `key_bits`-bit keys, p-bit fingerprints and `nslots` home slots, its table
    // taken from `spare` where that is large enough (the tables that quotient_builder fills).
    static quotient_filter empty_table(unsigned const key_bits, unsigned const p,
                                       double const max_load, bool const auto_grow,
                                       std::uint64_t const nslots, zeroed_memory * const spare)
    {
        return quotient_filter::empty(key_bits, p, max_load, auto_grow, nslots, spare);
    }

    // A filter of the geometry of `nslots` home slots without a table: the remainders, counter
    // lengths, load limit and growth of that table (quotient_builder's sizing).
    static quotient_filter geometry_only(unsigned const key_bits, unsigned const p,
                                         double const max_load, bool const auto_grow,
                                         std::uint64_t const nslots)
    {
        quotient_filter out;
        out.set_key(key_bits, p, max_load, auto_grow);
        out.set_geometry(nslots);
        return out;
    }
    // The remainder of fingerprint fp in a table of f's geometry.
    [[gnu::always_inline]] static std::uint64_t remainder_of(quotient_filter const & f,
                                                             std::uint64_t const fp) noexcept
    {
        return f.slot_code(fp) & f.rmask_;
    }
    // The most slots an insertion may use in f before it grows (or, where it cannot, before it is
    // full).
    static std::uint64_t load_limit_of(quotient_filter const & f) noexcept
    {
        return !f.auto_grow_ ? f.nslots_ : f.can_grow() ? f.grow_at_ : f.stuck_at_;
    }

    // The slots that `count` occurrences of remainder x take at the remainder width of `ref`.
    [[gnu::always_inline]] static std::uint64_t encoded_length(quotient_filter const & ref,
                                                               std::uint64_t const x,
                                                               std::uint64_t const count) noexcept
    {
        return detail::generic::encoded_length(detail::qf_view{ref}, x, count);
    }

    // The table code of fingerprint fp (quotient_filter::slot_code, the table's parameters in
    // arguments).
    template <bool split>
    [[gnu::always_inline]] static std::uint64_t
    code_of(std::uint64_t const fp, unsigned const r, unsigned const low_bits,
            std::uint64_t const low_mask, std::uint64_t const scaled) noexcept
    {
        if constexpr (!split)
            return fp;
        __extension__ using wide = unsigned __int128;
        wide const t = static_cast<wide>(fp >> low_bits) * scaled;
        return (static_cast<std::uint64_t>(t >> 64) << r) |
               ((static_cast<std::uint64_t>(t) >= scaled ? std::uint64_t{1} : 0) << low_bits) |
               (fp & low_mask);
    }

    // Sets bit j of the 64-bit header field at byte `field` of its block: the bits of block b are
    // collected in `word`, ORed into the table when a bit of another block comes.
    [[gnu::always_inline]] static void
    set_bit(std::uint8_t * const table, std::uint64_t const block_bytes, std::uint64_t const j,
            std::uint64_t & b, std::uint64_t & word, std::uint64_t const field) noexcept
    {
        if ((j >> 6) != b)
        {
            if (b != none)
            {
                std::uint8_t * const w = table + b * block_bytes + field;
                store64(w, load64(w) | word);
            }
            b = j >> 6;
            word = 0;
        }
        word |= std::uint64_t{1} << (j & 63);
    }

    // append_all() for a table of split geometry or not.
    template <bool split>
    bool
    append_all_as(std::span<std::pair<std::uint64_t, std::uint64_t> const> const entries) noexcept
    {
        detail::qf_view const k{f};
        auto * const table = reinterpret_cast<std::uint8_t *>(f.table_);
        std::uint64_t const block_bytes = f.block_bytes_;
        unsigned const r = f.r_;
        std::uint64_t const rmask = f.rmask_;
        std::uint64_t const phys = f.phys_slots_;
        unsigned const low_bits = f.low_bits_;
        std::uint64_t const low_mask = f.low_mask_;
        std::uint64_t const scaled = f.scaled_slots_;
        std::uint64_t p = pos;
        std::uint64_t last = last_h;
        std::uint64_t n_used = used;
        std::uint64_t n_total = total;
        // (occupied and runend bits collected a word at a time, as the remainders are)
        std::uint64_t ob = occ_block, ow = occ_word, eb = end_block, ew = end_word;
        bool ok = true;
        for (auto const & [fp, count] : entries)
        {
            std::uint64_t const code = code_of<split>(fp, r, low_bits, low_mask, scaled);
            std::uint64_t const h = code >> r;
            std::uint64_t enc[max_group_slots];
            unsigned n = 1;
            enc[0] = code & rmask;
            if (count != 1) // (a single slot holds most fingerprints)
                n = detail::generic::encode(k, code & rmask, count, enc);
            bool const same = h == last;
            std::uint64_t const start = same ? p : std::max(h, p);
            if (start + n > phys)
            {
                ok = false;
                break;
            }
            if (!same)
            {
                if (last != none)
                    set_bit(table, block_bytes, p - 1, eb, ew, 9); // runends
                set_bit(table, block_bytes, h, ob, ow, 1);         // occupieds
                last = h;
            }
            for (unsigned t = 0; t < n; ++t)
            {
                std::uint64_t const j = start + t;
                if ((j >> 6) != block)
                {
                    flush();
                    block = j >> 6;
                }
                rems[j & 63] = enc[t];
            }
            p = start + n;
            n_used += n;
            n_total = sat_add(n_total, count);
            ++distinct;
        }
        pos = p;
        last_h = last;
        used = n_used;
        total = n_total;
        occ_block = ob;
        occ_word = ow;
        end_block = eb;
        end_word = ew;
        return ok;
    }
    void finish() noexcept
    {
        flush();
        if (occ_block != none)
            or_header(occ_block, 1, occ_word);
        if (end_block != none)
            or_header(end_block, 9, end_word);
        detail::qf_view const k{f};
        if (last_h != none)
            detail::generic::set_runend(k, pos - 1, true);
        f.used_ = used;
        f.distinct_ = distinct;
        f.total_ = total;
        detail::generic::update_offsets(k, 1, f.nblocks_ - 1);
    }
};

// A (fingerprint, count) stream kept as gaps from the entry before (the first from 0) in 32 bits
// and counts in a byte: the values that do not fit (escaped) are in side lists, in order.
constexpr std::uint64_t gap_escape = 0xffffffffu;
constexpr std::uint64_t count_escape = 255;

// fn(chunk) for the n entries of such a stream in order, a span of (fingerprint, count) pairs at a
// time, while fn returns true.
template <typename Fn>
void for_each_kept_chunk(std::uint32_t const * const gaps, std::uint8_t const * const counts,
                         std::size_t const n, std::vector<std::uint64_t> const & wide_gaps,
                         std::vector<std::uint64_t> const & wide_counts, Fn && fn)
{
    std::array<std::pair<std::uint64_t, std::uint64_t>, 1024> chunk;
    std::size_t wg = 0;
    std::size_t wc = 0;
    std::uint64_t fp = 0;
    for (std::size_t i = 0; i < n;)
    {
        std::size_t const m = std::min(chunk.size(), n - i);
        for (std::size_t t = 0; t < m; ++t, ++i)
        {
            std::uint64_t gap = gaps[i];
            if (gap == gap_escape) [[unlikely]]
                gap = wide_gaps[wg++];
            fp += gap;
            std::uint64_t c = counts[i];
            if (c == count_escape) [[unlikely]]
                c = wide_counts[wc++];
            chunk[t] = {fp, c};
        }
        if (!fn(std::span<std::pair<std::uint64_t, std::uint64_t> const>{chunk.data(), m}))
            return;
    }
}

} // namespace ksieve
