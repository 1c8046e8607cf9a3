// Labeled set operations over quotient filters (combine_labeled): a k-way walk of every input's
// shard in fingerprint order that unites the label sets of equal fingerprints, a class table
// numbered the same for any thread count, and each shard rebuilt with class ids as counts.
#include <ksieve/filters/any_filter.hpp>
#include <ksieve/filters/cancel.hpp>
#include <ksieve/filters/error.hpp>
#include <ksieve/filters/quotient_builder.hpp>
#include <ksieve/filters/quotient_filter.hpp>
#include <ksieve/filters/sharded_filter.hpp>

#include "combine_layout.hpp"
#include "parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <queue>
#include <unordered_map>

namespace ksieve
{

namespace
{

using label_set = std::vector<std::uint32_t>;

struct set_hash
{
    std::size_t operator()(label_set const & s) const noexcept
    {
        std::uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
        for (auto const l : s)
            h = (h ^ l) * 0xff51afd7ed558ccdull;
        return static_cast<std::size_t>(h ^ (h >> 29));
    }
};

// The labels of the inputs in one numbering: every input's classes as sets of global label indices.
struct global_labels
{
    std::vector<std::string> names;
    std::vector<std::vector<label_set>> input_classes; // [input][class id] -> global labels
};

global_labels number_labels(std::span<any_filter const * const> const inputs,
                            std::span<std::string const> const names,
                            std::span<std::string const> const unlabeled_names)
{
    global_labels g;
    std::map<std::string, std::uint32_t, std::less<>> index;
    auto id_of = [&](std::string const & name)
    {
        auto const [it, fresh] =
            index.try_emplace(name, static_cast<std::uint32_t>(g.names.size()));
        if (fresh)
        {
            check_label_name(name);
            g.names.push_back(name);
        }
        return it->second;
    };
    for (std::size_t i = 0; i < inputs.size(); ++i)
    {
        std::vector<label_set> classes;
        if (auto const & t = inputs[i]->labels())
        {
            std::vector<std::uint32_t> map;
            for (auto const & n : t->names)
                map.push_back(id_of(n));
            for (auto const & c : t->classes)
            {
                label_set s;
                for (auto const l : c)
                    s.push_back(map[l]);
                std::sort(s.begin(), s.end());
                classes.push_back(std::move(s));
            }
        }
        else
        {
            if (i >= unlabeled_names.size() || unlabeled_names[i].empty())
                throw incompatible_error{"'" + names[i] +
                                         "' is not a labeled filter (give its inputs labels, or "
                                         "label each unlabeled filter by its file name)"};
            classes.push_back(label_set{id_of(unlabeled_names[i])});
        }
        g.input_classes.push_back(std::move(classes));
    }
    return g;
}

// One shard's result: its fingerprints in order with shard-local class ids, the local classes and
// their fingerprints.
struct shard_walk
{
    std::vector<std::uint64_t> fps;
    std::vector<std::uint32_t> ids;
    std::vector<label_set> classes;
    std::vector<std::uint64_t> class_kmers;
};

// The k-way walk of one shard of every input, fingerprints cut to p bits.
class shard_walker
{
public:
    shard_walker(std::span<quotient_filter const * const> parts, global_labels const & g,
                 set_operation const op, unsigned const p)
        : parts_{parts}, g_{g}, op_{op}, p_{p}, single_(parts.size())
    {
        for (std::size_t i = 0; i < parts.size(); ++i)
            single_[i].assign(g.input_classes[i].size(), none);
    }

    shard_walk run(bool const keep)
    {
        shard_walk out;
        std::vector<quotient_filter::cursor> cur;
        cur.reserve(parts_.size());
        using item = std::pair<std::uint64_t, std::size_t>; // (cut fingerprint, input)
        std::priority_queue<item, std::vector<item>, std::greater<>> heap;
        for (std::size_t i = 0; i < parts_.size(); ++i)
        {
            cur.emplace_back(*parts_[i]);
            if (cur[i].next())
                heap.emplace(cut(i, cur[i].fingerprint()), i);
        }
        std::unordered_map<label_set, std::uint32_t, set_hash> local;
        std::vector<std::pair<std::size_t, std::uint64_t>> group; // (input, class id)
        label_set merged, scratch;
        std::uint64_t groups = 0;
        while (!heap.empty())
        {
            std::uint64_t const fp = heap.top().first;
            group.clear();
            while (!heap.empty() && heap.top().first == fp)
            {
                std::size_t const i = heap.top().second;
                heap.pop();
                group.emplace_back(i, class_of(i, cur[i].count()));
                if (cur[i].next())
                    heap.emplace(cut(i, cur[i].fingerprint()), i);
            }
            if ((++groups & 4095) == 0)
                throw_if_stop_requested();
            if (!selected(group))
                continue;
            std::uint32_t const id = class_id(group, local, merged, scratch, out);
            ++out.class_kmers[id];
            if (keep)
            {
                out.fps.push_back(fp);
                out.ids.push_back(id);
            }
        }
        return out;
    }

private:
    static constexpr std::uint32_t none = ~std::uint32_t{0};

    [[nodiscard]] std::uint64_t cut(std::size_t const i, std::uint64_t const fp) const noexcept
    {
        return fp >> (parts_[i]->fingerprint_bits() - p_);
    }
    [[nodiscard]] std::uint64_t class_of(std::size_t const i, std::uint64_t const count) const
    {
        std::uint64_t const c = g_.input_classes[i].size() == 1 ? 0 : count - 1;
        if (c >= g_.input_classes[i].size())
            throw format_error{"labeled filter input " + std::to_string(i + 1) +
                               ": a count names no class of its label table"};
        return c;
    }
    // Whether the operation keeps a fingerprint held by the inputs of `group` (in input order,
    // an input more than once where cutting joined its fingerprints).
    [[nodiscard]] bool
    selected(std::vector<std::pair<std::size_t, std::uint64_t>> const & group) const
    {
        switch (op_)
        {
        case set_operation::unite:
            return true;
        case set_operation::intersect:
        {
            std::size_t distinct = 0, last = none;
            for (auto const & [i, c] : group)
                if (i != last)
                {
                    ++distinct;
                    last = i;
                }
            return distinct == parts_.size();
        }
        case set_operation::subtract:
        case set_operation::subtract_counts:
            return std::all_of(group.begin(), group.end(),
                               [](auto const & e) { return e.first == 0; });
        }
        return true;
    }
    // The local class of the union of the group's label sets (an input's single class cached).
    std::uint32_t class_id(std::vector<std::pair<std::size_t, std::uint64_t>> const & group,
                           std::unordered_map<label_set, std::uint32_t, set_hash> & local,
                           label_set & merged, label_set & scratch, shard_walk & out)
    {
        if (group.size() == 1)
        {
            auto const [i, c] = group.front();
            std::uint32_t & cached = single_[i][c];
            if (cached == none)
                cached = intern(g_.input_classes[i][c], local, out);
            return cached;
        }
        merged.clear();
        for (auto const & [i, c] : group)
        {
            label_set const & s = g_.input_classes[i][c];
            scratch.clear();
            std::set_union(merged.begin(), merged.end(), s.begin(), s.end(),
                           std::back_inserter(scratch));
            merged.swap(scratch);
        }
        return intern(merged, local, out);
    }
    static std::uint32_t intern(label_set const & s,
                                std::unordered_map<label_set, std::uint32_t, set_hash> & local,
                                shard_walk & out)
    {
        auto const [it, fresh] =
            local.try_emplace(s, static_cast<std::uint32_t>(out.classes.size()));
        if (fresh)
        {
            out.classes.push_back(s);
            out.class_kmers.push_back(0);
        }
        return it->second;
    }

    std::span<quotient_filter const * const> parts_;
    global_labels const & g_;
    set_operation op_;
    unsigned p_;
    std::vector<std::vector<std::uint32_t>> single_; // [input][class] -> local id (none: not yet)
};

// Class ids of the union of every shard's classes: by decreasing fingerprints, then label sets in
// lexicographic order. Fills `table` and, per shard, local id -> class id.
std::vector<std::vector<std::uint32_t>> number_classes(std::vector<shard_walk> const & walks,
                                                       label_table & table)
{
    std::map<label_set, std::uint64_t> total;
    for (auto const & w : walks)
        for (std::size_t c = 0; c < w.classes.size(); ++c)
            total[w.classes[c]] += w.class_kmers[c];
    std::vector<std::pair<label_set const *, std::uint64_t>> order;
    order.reserve(total.size());
    for (auto const & [set, n] : total)
        order.emplace_back(&set, n);
    std::stable_sort(order.begin(), order.end(),
                     [](auto const & a, auto const & b) { return a.second > b.second; });
    std::map<label_set, std::uint32_t> id;
    for (auto const & [set, n] : order)
    {
        id.emplace(*set, static_cast<std::uint32_t>(table.classes.size()));
        table.classes.push_back(*set);
        table.class_kmers.push_back(n);
    }
    std::vector<std::vector<std::uint32_t>> to_global(walks.size());
    for (std::size_t s = 0; s < walks.size(); ++s)
        for (auto const & c : walks[s].classes)
            to_global[s].push_back(id.at(c));
    return to_global;
}

// The shard built from its fingerprints and class ids (count = class id + 1).
quotient_filter build_shard(std::span<quotient_filter const * const> parts, unsigned const p,
                            shard_walk const & w, std::vector<std::uint32_t> const & to_global)
{
    quotient_filter const & first = *parts[0];
    unsigned r_ref = quotient_filter::max_remainder_bits;
    for (auto const * f : parts)
        r_ref = std::min(r_ref, p > f->quotient_bits() + quotient_filter::min_remainder_bits
                                    ? p - f->quotient_bits()
                                    : quotient_filter::min_remainder_bits);
    quotient_builder b{first.key_bits(), p, first.max_load(), first.auto_grow(), r_ref};
    std::vector<quotient_builder::entry> chunk;
    chunk.reserve(4096);
    auto each_chunk = [&](auto && fn)
    {
        for (std::size_t j = 0; j < w.fps.size(); j += 4096)
        {
            chunk.clear();
            for (std::size_t x = j; x < std::min(w.fps.size(), j + 4096); ++x)
                chunk.emplace_back(w.fps[x], std::uint64_t{to_global[w.ids[x]]} + 1);
            fn(chunk);
        }
    };
    each_chunk([&](auto const & c) { b.measure(c); });
    for (;;)
    {
        b.start();
        each_chunk([&](auto const & c) { (void)b.append(c); });
        if (b.finish())
            return b.take();
    }
}

} // namespace

std::unique_ptr<any_filter> combine_labeled(std::span<any_filter const * const> const inputs,
                                            std::span<std::string const> const names,
                                            std::span<std::string const> const unlabeled_names,
                                            set_operation const op, unsigned const threads,
                                            unsigned const max_fingerprint_bits,
                                            std::uint64_t const expected)
{
    std::string const verb = operation_name(op);
    detail::check_combinable(inputs, names, op, 1);
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i]->type() != filter_type::quotient)
            throw incompatible_error{"cannot " + verb + " '" + names[i] +
                                     "' with labels: labels need quotient filters"};
    global_labels const g = number_labels(inputs, names, unlabeled_names);
    key_parts const result_parts = detail::result_parts_of(inputs, names, verb);
    detail::common_layout l = detail::layout_for(inputs, names, threads);
    if (expected != 0)
        l.cfg.expected = expected;
    std::size_t const shards = std::size_t{1} << l.cfg.shard_bits;
    auto shard_parts = [&](std::size_t const s)
    {
        std::vector<quotient_filter const *> parts(l.inputs.size());
        for (std::size_t i = 0; i < l.inputs.size(); ++i)
            parts[i] = &static_cast<sharded_filter<quotient_filter> const *>(l.inputs[i])->shard(s);
        return parts;
    };
    auto width = [&](std::vector<quotient_filter const *> const & parts)
    {
        unsigned p = max_fingerprint_bits;
        for (auto const * f : parts)
            p = std::min(p, f->fingerprint_bits());
        return std::max(
            p, std::min(quotient_filter::min_fingerprint_bits, parts[0]->fingerprint_bits()));
    };
    // Pass 1: every shard walked, its fingerprints kept while they fit in memory_budget.
    constexpr std::uint64_t memory_budget = std::uint64_t{2} << 30;
    std::atomic<std::uint64_t> kept{0};
    std::vector<shard_walk> walks(shards);
    std::vector<char> rewalk(shards, 0);
    detail::parallel_for(shards, threads,
                         [&](std::size_t const s)
                         {
                             auto const parts = shard_parts(s);
                             std::uint64_t bytes = 0;
                             for (auto const * f : parts)
                                 bytes += f->stats().distinct * 12;
                             bool const keep = kept.fetch_add(bytes) + bytes <= memory_budget;
                             rewalk[s] = keep ? 0 : 1;
                             walks[s] = shard_walker{parts, g, op, width(parts)}.run(keep);
                         });
    auto table = std::make_shared<label_table>();
    table->names = g.names;
    auto const to_global = number_classes(walks, *table);
    // Pass 2: each shard built (walked again where pass 1 could not keep it).
    std::vector<std::optional<quotient_filter>> done(shards);
    detail::parallel_for(shards, threads,
                         [&](std::size_t const s)
                         {
                             throw_if_stop_requested();
                             auto const parts = shard_parts(s);
                             unsigned const p = width(parts);
                             if (rewalk[s] != 0)
                                 walks[s] = shard_walker{parts, g, op, p}.run(true);
                             done[s].emplace(build_shard(parts, p, walks[s], to_global[s]));
                             walks[s] = shard_walk{};
                             for (auto const * f : l.inputs)
                                 f->release_shard(s);
                         });
    std::vector<quotient_filter> built;
    built.reserve(shards);
    for (auto & d : done)
        built.push_back(std::move(*d));
    auto out = std::make_unique<sharded_filter<quotient_filter>>(l.cfg, std::move(built));
    out->set_parts(result_parts);
    out->set_labels(std::move(table));
    return out;
}

} // namespace ksieve
