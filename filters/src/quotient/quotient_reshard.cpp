// Re-sharding of quotient filters: a sharded quotient filter moved into another layout (other
// shards, fingerprints cut to fewer bits), its new shards built in fingerprint order by
// quotient_builder.
#include "quotient_reshard.hpp"
#include "../support/parallel_for.hpp"
#include "quotient_filter_impl.hpp"

#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/quotient/quotient_builder.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>
#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/error.hpp>

#include <algorithm>
#include <optional>
#include <vector>

namespace ksieve::detail
{

namespace
{

// Where a re-sharding puts each value of a source shard: the target shard and its fingerprint
// there (the top bits of the key's hash: cut, exactly what the target layout gives that key).
struct reshard_map
{
    unsigned key_bits;
    unsigned s_in, s_out;           // shard bits of the source and the target
    unsigned cut;                   // kept bits of the source minus those of the target
    unsigned g_low;                 // kept bits of the target below its shard index
    unsigned local_shift;           // local key = the g_low kept bits << local_shift
    quotient_filter const * target; // a shard of the target layout (its fingerprint of a local key)

    // The (target shard, fingerprint) of value v (the key in exact mode, else the fingerprint:
    // v_bits bits) of source shard i.
    [[nodiscard]] std::pair<std::size_t, std::uint64_t>
    operator()(std::size_t const i, unsigned const v_bits, std::uint64_t const v) const noexcept
    {
        std::uint64_t const g = (s_in == 0 ? v : (std::uint64_t{i} << v_bits) | v) >> cut;
        std::size_t const o = s_out == 0 ? 0 : static_cast<std::size_t>(g >> g_low);
        std::uint64_t const local = (g & low_bits_mask(g_low)) << local_shift;
        return {o, target->fingerprint(local)};
    }
};

// One independent part of a re-sharding: source shards [src_lo, src_hi) whose entries all go to
// target shards [dst_lo, dst_hi) (several to one, or one to several), in fingerprint order.
struct reshard_group
{
    sharded_filter<quotient_filter> const * src;
    reshard_map map;
    std::size_t src_lo, src_hi, dst_lo, dst_hi;

    // fn(o, entries) for the group's target entries in order, equal fingerprints joined (counts
    // added, saturating), a chunk of one target shard o at a time; checks for stop requests.
    template <typename Fn> void walk(Fn && fn) const
    {
        constexpr std::size_t chunk = 1024;
        std::array<std::uint64_t, chunk> fps, counts;
        std::vector<quotient_builder::entry> out;
        out.reserve(chunk);
        std::size_t out_shard = dst_lo;
        auto flush = [&]
        {
            if (!out.empty())
                fn(out_shard, std::span<quotient_builder::entry const>{out});
            out.clear();
        };
        for (std::size_t i = src_lo; i < src_hi; ++i)
        {
            quotient_filter const & sh = src->shard(i);
            unsigned const shl = sh.exact() ? sh.fingerprint_bits() - sh.key_bits() : 0;
            unsigned const v_bits = sh.exact() ? sh.key_bits() : sh.fingerprint_bits();
            quotient_filter::cursor c{sh};
            for (std::size_t n; (n = c.read(fps.data(), counts.data(), chunk)) != 0;)
            {
                throw_if_stop_requested();
                for (std::size_t j = 0; j < n; ++j)
                {
                    auto const [o, fp] = map(i, v_bits, fps[j] >> shl);
                    if (!out.empty() && o == out_shard && out.back().first == fp)
                    {
                        std::uint64_t & c_sum = out.back().second;
                        c_sum = c_sum + counts[j] < c_sum ? ~std::uint64_t{0} : c_sum + counts[j];
                        continue;
                    }
                    if (o != out_shard || out.size() == chunk)
                        flush();
                    out_shard = o;
                    out.emplace_back(fp, counts[j]);
                }
            }
        }
        flush();
    }
};

// Pass 1 of a group: builders of its target shards (sized for `distinct` fingerprints in all, room
// kept for `own`), the group's entries measured and kept (up to keep_bytes a shard).
std::vector<quotient_builder> measure_reshard_group(reshard_group const & g,
                                                    std::uint64_t const distinct,
                                                    std::uint64_t const own,
                                                    std::size_t const keep_bytes)
{
    std::size_t const n = g.dst_hi - g.dst_lo;
    std::vector<quotient_builder> builders;
    builders.reserve(n);
    for (std::size_t o = 0; o < n; ++o)
    {
        builders.emplace_back(*g.map.target, distinct / n);
        builders.back().keep(keep_bytes, own / n + own / n / 16);
    }
    g.walk([&](std::size_t const o, auto const entries)
           { builders[o - g.dst_lo].measure(entries); });
    return builders;
}

// Pass 2 of a group: its target shards (shards[o]) built from what pass 1 kept or another walk.
void build_reshard_group(reshard_group const & g, std::vector<quotient_builder> & builders,
                         std::vector<std::optional<quotient_filter>> & shards)
{
    std::size_t const n = g.dst_hi - g.dst_lo;
    std::vector<bool> pending(n, true);
    for (std::size_t left = n; left != 0;)
    {
        std::vector<bool> rewalk(n, false);
        bool any = false;
        for (std::size_t o = 0; o < n; ++o)
            if (pending[o])
            {
                throw_if_stop_requested();
                builders[o].start();
                rewalk[o] = !builders[o].append_kept();
                any = any || rewalk[o];
            }
        if (any)
            g.walk(
                [&](std::size_t const o, auto const entries)
                {
                    if (rewalk[o - g.dst_lo])
                        (void)builders[o - g.dst_lo].append(entries);
                });
        for (std::size_t o = 0; o < n; ++o)
            if (pending[o] && builders[o].finish())
            {
                shards[g.dst_lo + o].emplace(builders[o].take());
                pending[o] = false;
                --left;
            }
    }
}

} // namespace

// (p is chosen from expected / 2^s, so s + p does not depend on --shards)
unsigned kept_bits(any_filter const & f)
{
    auto const & q = static_cast<sharded_filter<quotient_filter> const &>(f);
    quotient_filter const & sh = q.shard(0);
    return sh.exact() ? f.key_bits() : f.shard_bits() + sh.fingerprint_bits();
}

unsigned layout_kept_bits(filter_config const & cfg, unsigned const key_bits)
{
    std::size_t const n = std::size_t{1} << cfg.shard_bits;
    quotient_filter const shard =
        quotient_filter::create(cfg, key_bits - cfg.shard_bits, (cfg.expected + n - 1) / n);
    return shard.exact() ? key_bits : cfg.shard_bits + shard.fingerprint_bits();
}

std::unique_ptr<any_filter> reshard_quotient(any_filter const & in, filter_config const & cfg,
                                             std::string const & name,
                                             std::string const & target_name,
                                             unsigned const threads)
{
    auto const & src = static_cast<sharded_filter<quotient_filter> const &>(in);
    unsigned const kb = in.key_bits();
    unsigned const s_in = in.shard_bits(), s_out = cfg.shard_bits;
    std::size_t const n_out = std::size_t{1} << s_out;
    // (a shard of the target layout, as sharded_filter makes them)
    quotient_filter const target =
        quotient_filter::create(cfg, kb - s_out, (cfg.expected + n_out - 1) / n_out);
    unsigned const g_in = kept_bits(in);
    unsigned const g_out = target.exact() ? kb : s_out + target.fingerprint_bits();
    if (g_in < g_out)
        throw incompatible_error{"cannot merge '" + name + "' with '" + target_name +
                                 "': their fingerprints keep " + std::to_string(g_in) + " and " +
                                 std::to_string(g_out) +
                                 " bits of each k-mer's hash, and the narrower cannot be widened"};
    reshard_map const map{
        kb,           s_in,          s_out,
        g_in - g_out, g_out - s_out, target.exact() ? 0u : kb - s_out - target.fingerprint_bits(),
        &target};
    std::size_t const groups = std::size_t{1} << std::min(s_in, s_out);
    std::size_t const src_per = std::size_t{1} << (s_in - std::min(s_in, s_out));
    std::size_t const dst_per = std::size_t{1} << (s_out - std::min(s_in, s_out));
    // (fewer groups than threads: a group of several sources to one target measured in parts on
    // threads of their own, then its builders joined; the parts' fingerprints are in order)
    std::size_t const split = std::min<std::size_t>(dst_per == 1 && g_out >= s_in ? src_per : 1,
                                                    std::max<std::size_t>(1, threads / groups));
    auto const distinct = [&](std::size_t const lo, std::size_t const hi)
    {
        std::uint64_t d = 0;
        for (std::size_t i = lo; i < hi; ++i)
            d += src.shard(i).distinct();
        return d;
    };
    std::vector<std::optional<quotient_filter>> shards(n_out);
    std::vector<std::vector<quotient_builder>> parts(split > 1 ? groups * split : 0);
    auto const part = [&](std::size_t const k, std::size_t const j, std::size_t const of)
    {
        std::size_t const lo = k * src_per + j * src_per / of,
                          hi = k * src_per + (j + 1) * src_per / of;
        return measure_reshard_group(
            reshard_group{&src, map, lo, hi, k * dst_per, (k + 1) * dst_per},
            distinct(k * src_per, (k + 1) * src_per), distinct(lo, hi),
            (std::size_t{64} << 20) / of);
    };
    try
    {
        parallel_for(parts.size(), threads,
                     [&](std::size_t const t) { parts[t] = part(t / split, t % split, split); });
        parallel_for(groups, threads,
                     [&](std::size_t const k)
                     {
                         std::vector<quotient_builder> b =
                             split > 1 ? std::move(parts[k * split]) : part(k, 0, 1);
                         for (std::size_t j = 1; j < split; ++j)
                             b[0].absorb(std::move(parts[k * split + j][0]));
                         build_reshard_group(reshard_group{&src, map, k * src_per,
                                                           (k + 1) * src_per, k * dst_per,
                                                           (k + 1) * dst_per},
                                             b, shards);
                     });
    }
    catch (full_error const &)
    {
        throw full_error{"cannot merge '" + name + "': its filter cannot be moved to " +
                         std::to_string(n_out) + " shards (full)"};
    }
    return std::make_unique<sharded_filter<quotient_filter>>(cfg, values_of(shards));
}

} // namespace ksieve::detail
