// Labeled set operations over quotient filters (combine_labeled): a k-way walk of every input's
// shard in fingerprint order that unites the label sets of equal fingerprints, a class table
// numbered the same for any thread count, and each shard rebuilt with class ids as counts.
#include <ksieve/filters/common/any_filter.hpp>
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/quotient/quotient_builder.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>
#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/error.hpp>

#include "../support/parallel_for.hpp"
#include "combine_layout.hpp"
#include "loser_tree.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <optional>

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

// Ids of the caller's entries by their hashes: open addressing, each hit checked by equal(id) (no
// node per entry).
class id_table
{
public:
    // The id of the entry of hash h for which equal(id), else the id that add() gives a new one.
    template <typename Equal, typename Add>
    std::uint32_t find_or_add(std::uint64_t h, Equal && equal, Add && add)
    {
        if (2 * (used_ + 1) > slots_.size())
            grow();
        h |= 1; // (0: an empty slot)
        std::size_t const mask = slots_.size() - 1;
        for (std::size_t j = h & mask;; j = (j + 1) & mask)
        {
            auto & slot = slots_[j];
            if (slot.first == 0)
            {
                slot = {h, add()};
                ++used_;
                return slot.second;
            }
            if (slot.first == h && equal(slot.second))
                return slot.second;
        }
    }

private:
    void grow()
    {
        std::vector<std::pair<std::uint64_t, std::uint32_t>> old(
            std::max<std::size_t>(64, 2 * slots_.size()));
        old.swap(slots_);
        std::size_t const mask = slots_.size() - 1;
        for (auto const & e : old)
            if (e.first != 0)
            {
                std::size_t j = e.first & mask;
                while (slots_[j].first != 0)
                    j = (j + 1) & mask;
                slots_[j] = e;
            }
    }

    std::vector<std::pair<std::uint64_t, std::uint32_t>> slots_;
    std::size_t used_{0};
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
                                         "' is not a labeled filter: build it with labels, or let "
                                         "merge --label-inputs name it by its file name"};
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

// One input's shard, read 256 (fingerprint, count) entries at a time.
class input_stream
{
public:
    explicit input_stream(quotient_filter const & f) : cursor_{f} {}
    // The first entry. \returns false if there is none.
    bool refill() noexcept
    {
        n_ = cursor_.read(fps_.data(), counts_.data(), fps_.size());
        pos_ = 0;
        return n_ > 0;
    }
    // The next entry. \returns false at the end.
    bool advance() noexcept { return ++pos_ < n_ || refill(); }
    [[nodiscard]] std::uint64_t fingerprint() const noexcept { return fps_[pos_]; }
    [[nodiscard]] std::uint64_t count() const noexcept { return counts_[pos_]; }

private:
    quotient_filter::cursor cursor_;
    std::array<std::uint64_t, 256> fps_{}, counts_{};
    std::size_t pos_{0}, n_{0};
};

// One input's entry of a fingerprint: (input, class id in that input).
using member = std::pair<std::uint32_t, std::uint32_t>;

// The inputs and classes of a fingerprint (a "group") -> its local class: a fingerprint of several
// inputs is looked up by its members, so that the union of their label sets is made once per
// distinct group (open addressing over the members' hash; members kept in one pool).
class group_table
{
public:
    template <typename Make> std::uint32_t find_or_add(std::vector<member> const & g, Make && make)
    {
        std::uint64_t h = 0x9E3779B97F4A7C15ull;
        for (auto const & [i, c] : g)
            h = (h ^ ((std::uint64_t{i} << 32) | c)) * 0xff51afd7ed558ccdull;
        auto const same = [&](std::uint32_t const e)
        {
            return groups_[e].size == g.size() &&
                   std::equal(g.begin(), g.end(), pool_.begin() + groups_[e].offset);
        };
        auto const add = [&]
        {
            std::uint32_t const id = make();
            groups_.push_back({static_cast<std::uint32_t>(pool_.size()),
                               static_cast<std::uint32_t>(g.size()), id});
            pool_.insert(pool_.end(), g.begin(), g.end());
            return static_cast<std::uint32_t>(groups_.size() - 1);
        };
        return groups_[ids_.find_or_add(h ^ (h >> 31), same, add)].id;
    }

private:
    struct entry
    {
        std::uint32_t offset, size, id;
    };
    id_table ids_;
    std::vector<entry> groups_;
    std::vector<member> pool_;
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
        std::vector<input_stream> in;
        in.reserve(parts_.size());
        detail::loser_tree tree{parts_.size()};
        for (std::size_t i = 0; i < parts_.size(); ++i)
        {
            in.emplace_back(*parts_[i]);
            if (in[i].refill())
                tree.set(i, cut(i, in[i].fingerprint()));
        }
        tree.build();
        id_table local;
        std::vector<member> group; // (input, class id)
        label_set merged;
        std::uint64_t groups = 0;
        while (!tree.empty())
        {
            std::uint64_t const fp = tree.top();
            group.clear();
            while (!tree.empty() && tree.top() == fp)
            {
                std::uint32_t const i = tree.winner();
                group.emplace_back(i, static_cast<std::uint32_t>(class_of(i, in[i].count())));
                bool const next = in[i].advance();
                tree.replace_top(next ? cut(i, in[i].fingerprint()) : 0, next);
            }
            if ((++groups & 4095) == 0)
                throw_if_stop_requested();
            if (!selected(group))
                continue;
            std::uint32_t const id = class_id(group, local, merged, out);
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
    [[nodiscard]] bool selected(std::vector<member> const & group) const
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
    std::uint32_t class_id(std::vector<member> const & group, id_table & local, label_set & merged,
                           shard_walk & out)
    {
        if (group.size() == 1)
        {
            auto const [i, c] = group.front();
            std::uint32_t & cached = single_[i][c];
            if (cached == none)
                cached = intern(g_.input_classes[i][c], local, out);
            return cached;
        }
        return groups_.find_or_add(group,
                                   [&]
                                   {
                                       merged.clear();
                                       for (auto const & [i, c] : group)
                                       {
                                           label_set const & s = g_.input_classes[i][c];
                                           merged.insert(merged.end(), s.begin(), s.end());
                                       }
                                       std::sort(merged.begin(), merged.end());
                                       merged.erase(std::unique(merged.begin(), merged.end()),
                                                    merged.end());
                                       return intern(merged, local, out);
                                   });
    }
    static std::uint32_t intern(label_set const & s, id_table & local, shard_walk & out)
    {
        return local.find_or_add(
            set_hash{}(s), [&](std::uint32_t const id) { return out.classes[id] == s; },
            [&]
            {
                out.classes.push_back(s);
                out.class_kmers.push_back(0);
                return static_cast<std::uint32_t>(out.classes.size() - 1);
            });
    }

    std::span<quotient_filter const * const> parts_;
    global_labels const & g_;
    set_operation op_;
    unsigned p_;
    std::vector<std::vector<std::uint32_t>> single_; // [input][class] -> local id (none: not yet)
    group_table groups_;                             // the groups of several inputs seen
};

// Class ids of the union of every shard's classes: by decreasing fingerprints, then label sets in
// lexicographic order. Fills `table` and, per shard, local id -> class id.
std::vector<std::vector<std::uint32_t>> number_classes(std::vector<shard_walk> const & walks,
                                                       label_table & table)
{
    std::map<label_set, std::pair<std::uint64_t, std::uint32_t>> total; // (fingerprints, class id)
    for (auto const & w : walks)
        for (std::size_t c = 0; c < w.classes.size(); ++c)
            total[w.classes[c]].first += w.class_kmers[c];
    std::vector<decltype(total)::value_type *> order;
    for (auto & e : total)
        order.push_back(&e);
    std::stable_sort(order.begin(), order.end(),
                     [](auto const * a, auto const * b)
                     { return a->second.first > b->second.first; });
    for (auto * const e : order)
    {
        e->second.second = static_cast<std::uint32_t>(table.classes.size());
        table.classes.push_back(e->first);
        table.class_kmers.push_back(e->second.first);
    }
    std::vector<std::vector<std::uint32_t>> to_global(walks.size());
    for (std::size_t s = 0; s < walks.size(); ++s)
        for (auto const & c : walks[s].classes)
            to_global[s].push_back(total.at(c).second);
    return to_global;
}

// The shard built from its fingerprints and class ids (count = class id + 1).
quotient_filter build_shard(std::span<quotient_filter const * const> parts, unsigned const p,
                            shard_walk const & w, std::vector<std::uint32_t> const & to_global)
{
    quotient_filter const & first = *parts[0];
    quotient_builder b{first.key_bits(), p, first.max_load(), first.auto_grow(),
                       detail::counter_remainder_bits(parts, p)};
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
    auto out = std::make_unique<sharded_filter<quotient_filter>>(l.cfg, detail::values_of(done));
    out->set_parts(result_parts);
    out->set_labels(std::move(table));
    return out;
}

} // namespace ksieve
