#pragma once
/*! \file
 * \brief The k-mers of a batch in pieces: whole batches at once, or long records (chromosomes,
 * contigs) in windows, so that key memory stays bounded by the batch (for_each_key_piece). Used by
 * build, classify with exact hit counts, and the first pass that counts k-mers.
 *
 * Thread safety: one call at a time per batch_keys; the engine's own threads hash each piece.
 */
#include <ksieve/engine/engine.hpp>
#include <ksieve/engine/stream.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace ksieve
{

// build (and classify with exact hit counts) hash a batch's k-mers at once, unless a record is long
// (a chromosome): then the records are cut into windows (for_each_window: exactly the record's
// k-mers) and hashed in pieces of 16 Mbp: key memory (about 16 bytes a k-mer, 256 MB) stays bounded
// instead of growing with the longest record, and each shard of a large filter still gets enough
// keys per piece for inserts in table order to share cache lines (pieces of 2 Mbp cost a 1 Gbp
// build about a tenth more CPU time).
inline constexpr std::size_t long_record_window_bases = std::size_t{256} << 10;
inline constexpr std::size_t long_record_piece_bases = std::size_t{16} << 20;

// fn(keys, owner) for each piece of the batch's k-mers: piece unit w belongs to unit owner[w] of
// the batch (owner empty: piece unit w is unit w); kmers[u] = the k-mers of unit u. Pieces of a
// long record hold about `piece_bases` bases (smaller under a small memory limit); the keys are the
// same for any piece size.
template <typename Fn>
void for_each_key_piece(batch_engine const & engine, work_item const & item, batch_keys & keys,
                        std::vector<std::uint64_t> & kmers, Fn && fn,
                        std::size_t const piece_bases = long_record_piece_bases)
{
    std::size_t const n = item.r1.size();
    bool const pairs = !item.r2.empty();
    std::size_t longest = 0;
    for (std::size_t u = 0; u < n; ++u)
        longest = std::max(
            {longest, item.r1[u].seq.size(), pairs ? item.r2[u].seq.size() : std::size_t{0}});
    kmers.assign(n, 0);
    if (longest <= long_record_window_bases)
    {
        engine.extract(item.r1, &item.r2, keys);
        for (std::size_t u = 0; u < n; ++u)
            kmers[u] = keys.count[u];
        fn(keys, std::span<std::size_t const>{});
        return;
    }
    std::vector<sequence_piece> windows;
    std::vector<std::size_t> owner;
    std::size_t bases = 0;
    auto flush = [&]
    {
        engine.extract_windows(windows, keys);
        for (std::size_t w = 0; w < windows.size(); ++w)
            kmers[owner[w]] += keys.count[w];
        fn(keys, std::span<std::size_t const>{owner});
        windows.clear();
        owner.clear();
        bases = 0;
    };
    auto add = [&](std::size_t const u, std::string_view const seq)
    {
        engine.for_each_window(seq, long_record_window_bases,
                               [&](sequence_piece const & w)
                               {
                                   windows.push_back(w);
                                   owner.push_back(u);
                                   bases += w.end - w.begin;
                                   if (bases >= piece_bases)
                                       flush();
                               });
    };
    for (std::size_t u = 0; u < n; ++u)
    {
        add(u, item.r1[u].seq);
        if (pairs)
            add(u, item.r2[u].seq);
    }
    if (!windows.empty())
        flush();
}

} // namespace ksieve
