// any_filter's operations: make, view and load filters; set operations shard by shard (quotient
// filters of other layouts first moved to a common one); refit; the compatibility checks of inputs
// used together.
#include <ksieve/filters/bloom/bloom.hpp>
#include <ksieve/filters/bloom/counting_bloom.hpp>
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/cuckoo/cuckoo.hpp>
#include <ksieve/filters/kmers/low_complexity.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>
#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/checksum.hpp>
#include <ksieve/filters/support/error.hpp>

#include "../quotient/combine_layout.hpp"
#include "../quotient/quotient_reshard.hpp"
#include "../support/parallel_for.hpp"

#include <algorithm>
#include <mutex>
#include <optional>
#include <type_traits>

namespace ksieve
{

namespace
{

// fn(std::type_identity<F>{}) with F the shard filter class of `type`; nullptr for a value outside
// the enum (a corrupt header or configuration).
template <typename fn_t>
std::unique_ptr<any_filter> with_filter_class(filter_type const type, fn_t && fn)
{
    switch (type)
    {
    case filter_type::quotient:
        return fn(std::type_identity<quotient_filter>{});
    case filter_type::bloom:
        return fn(std::type_identity<blocked_bloom_filter>{});
    case filter_type::bloom_classic:
        return fn(std::type_identity<classic_bloom_filter>{});
    case filter_type::counting_bloom:
        return fn(std::type_identity<counting_bloom_filter>{});
    case filter_type::cuckoo:
        return fn(std::type_identity<cuckoo_filter>{});
    }
    return nullptr;
}

// The set operation over the shards s of filters of type F; the mapped inputs' pages of the shard
// are released once it is done.
template <typename F>
F combine_shard(std::span<any_filter const * const> inputs, std::size_t const s,
                set_operation const op, std::uint64_t const min_count,
                quotient_filter::combine_scratch & scratch)
{
    std::vector<F const *> parts(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i)
        parts[i] = &static_cast<sharded_filter<F> const *>(inputs[i])->shard(s);
    // (the walk gives back the pages of mapped inputs that it has passed)
    quotient_filter::consumed_fn const consumed =
        [&](std::size_t const i, std::span<std::uint64_t const> const words)
    { static_cast<sharded_filter<F> const *>(inputs[i])->release_shard_words(s, words); };
    auto const combined = [&]
    {
        if constexpr (std::is_same_v<F, quotient_filter>)
            return quotient_filter::combine(parts, op, min_count, &scratch, consumed);
        else // Bloom filters (counting ones unite only: checked by the caller)
        {
            if (op == set_operation::unite)
                return F::merge(parts);
            F r = parts[0]->clone();
            for (auto const * f : std::span<F const * const>{parts}.subspan(1))
                r.intersect_with(*f);
            return r;
        }
    };
    F r = combined();
    for (auto const * f : inputs)
        f->release_shard(s);
    return r;
}

// Shard-wise set operation over filters of one type F, shards in parallel.
template <typename F>
std::unique_ptr<any_filter> combine_typed(std::span<any_filter const * const> inputs,
                                          filter_config const & cfg, set_operation const op,
                                          std::uint64_t const min_count, unsigned const threads)
{
    std::size_t const shards = inputs.front()->num_shards();
    std::vector<std::optional<F>> done(shards);
    std::vector<quotient_filter::combine_scratch> scratch(std::max(threads, 1u));
    detail::parallel_for(shards, threads,
                         [&](std::size_t const s, std::size_t const w)
                         {
                             throw_if_stop_requested();
                             done[s].emplace(
                                 combine_shard<F>(inputs, s, op, min_count, scratch[w]));
                         });
    return std::make_unique<sharded_filter<F>>(cfg, detail::values_of(done));
}

// Shard-wise set operation over quotient filters written to `path` as the shards are made: a worker
// that finishes shard s checksums it, and whichever worker holds the next shard in order writes it
// and every finished one after it, freeing each.
filter_stats combine_quotient_into(std::filesystem::path const & path,
                                   std::span<any_filter const * const> inputs,
                                   filter_config const & cfg, key_parts const & parts,
                                   set_operation const op, std::uint64_t const min_count,
                                   unsigned const threads)
{
    std::size_t const shards = inputs.front()->num_shards();
    filter_file_header header{filter_type::quotient, cfg.kmer, cfg.fpr, cfg.expected,
                              cfg.shard_bits,        {},       parts,   nullptr};
    filter_file_stream out{path, std::move(header), quotient_filter::max_param_count};
    std::vector<std::optional<quotient_filter>> done(shards);
    std::vector<std::uint64_t> sums(shards, 0);
    std::vector<quotient_filter::combine_scratch> scratch(std::max(threads, 1u));
    std::mutex order;
    std::size_t next = 0;
    filter_stats_sum total;
    std::vector<zeroed_memory>
        spares; // tables of shards written, for the next results (guarded by order)
    detail::parallel_for(shards, threads,
                         [&](std::size_t const s, std::size_t const w)
                         {
                             throw_if_stop_requested();
                             {
                                 std::lock_guard const lock{order};
                                 if (!spares.empty())
                                 {
                                     scratch[w].spare_table = std::move(spares.back());
                                     spares.pop_back();
                                 }
                             }
                             quotient_filter r = combine_shard<quotient_filter>(
                                 inputs, s, op, min_count, scratch[w]);
                             std::uint64_t const sum = checksum64(r.words());
                             std::lock_guard const lock{order};
                             done[s].emplace(std::move(r));
                             sums[s] = sum;
                             for (; next < shards && done[next]; ++next)
                             {
                                 quotient_filter const & f = *done[next];
                                 out.put(shard_blob{f.params(), f.words()}, sums[next]);
                                 total.add(f.stats());
                                 spares.push_back(done[next]->release_table());
                                 done[next].reset();
                             }
                         });
    out.finish();
    return total.total();
}

std::string describe(kmer_params const & k)
{
    return "k = " + std::to_string(k.k) + (k.canonical ? ", canonical" : ", not canonical") +
           ", seed " + std::to_string(k.seed) + ", sampling " +
           (k.sampled() ? "minimizer:" + std::to_string(k.window) : std::string{"all k-mers"}) +
           ", mask " + mask_name(k) +
           (k.is_spaced() ? ", spaced " + spaced_name(k) : std::string{});
}

// Which operations each filter type supports.
void check_operation_supported(any_filter const & f, std::string const & name,
                               set_operation const op, std::uint64_t const min_count)
{
    std::string const verb = operation_name(op);
    if (min_count == 0)
        throw usage_error{"--min-count must be at least 1"};
    switch (f.type())
    {
    case filter_type::quotient:
        return;
    case filter_type::cuckoo:
        throw incompatible_error{
            "cannot " + verb + " '" + name +
            "': cuckoo filters cannot be combined (rebuild from all inputs, or use --type qf)"};
    default:
        break;
    }
    if (min_count > 1)
        throw usage_error{"--min-count above 1 needs quotient filters; '" + name + "' is a " +
                          std::string{to_string(f.type())} + " filter"};
    if (op == set_operation::subtract || op == set_operation::subtract_counts)
        throw incompatible_error{
            "cannot subtract from '" + name +
            "': a Bloom filter cannot remove k-mers (a bit "
            "set by a removed k-mer may be set by others too); build quotient filters (--type qf)"};
    if (op == set_operation::intersect && f.type() == filter_type::counting_bloom)
        throw incompatible_error{"cannot intersect '" + name +
                                 "': counting Bloom filters only merge (use --type qf "
                                 "or bloom)"};
}

std::vector<key_parts> parts_of(std::span<any_filter const * const> const inputs)
{
    std::vector<key_parts> parts;
    parts.reserve(inputs.size());
    for (auto const * f : inputs)
        parts.push_back(f->parts());
    return parts;
}

// The union of the parts of split `split` among `parts`.
key_parts union_of_split(std::span<key_parts const> const parts, std::uint64_t const split)
{
    key_parts u;
    bool first = true;
    for (auto const & p : parts)
        if (!p.complete() && p.split == split)
        {
            if (first)
                u = p;
            else
                u.add(p);
            first = false;
        }
    return u;
}

using detail::check_combinable;
using detail::common_layout;
using detail::layout_for;
using detail::quoted_list;
using detail::result_parts_of;

// The set operation: quotient filters written to *to if given (*written: their statistics; nullptr
// returned), else the result returned.
std::unique_ptr<any_filter> combine_impl(std::span<any_filter const * const> const inputs,
                                         std::span<std::string const> const names,
                                         set_operation const op, std::uint64_t const min_count,
                                         unsigned const threads,
                                         std::filesystem::path const * const to,
                                         filter_stats * const written)
{
    std::string const verb = operation_name(op);
    check_combinable(inputs, names, op, min_count);
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i]->labeled())
            throw incompatible_error{"'" + names[i] +
                                     "' is a labeled filter: its counts are label classes, "
                                     "combined only as labels (combine_labeled)"};
    key_parts const result_parts = result_parts_of(inputs, names, verb);
    common_layout const l = layout_for(inputs, names, threads);
    try
    {
        if (to != nullptr && l.cfg.type == filter_type::quotient)
        {
            *written =
                combine_quotient_into(*to, l.inputs, l.cfg, result_parts, op, min_count, threads);
            return nullptr;
        }
        auto out = with_filter_class(l.cfg.type,
                                     [&](auto const f) -> std::unique_ptr<any_filter>
                                     {
                                         using F = typename decltype(f)::type;
                                         if constexpr (std::is_same_v<F, cuckoo_filter>)
                                             return nullptr; // refused by check_combinable
                                         else
                                             return combine_typed<F>(l.inputs, l.cfg, op, min_count,
                                                                     threads);
                                     });
        out->set_parts(result_parts);
        return out;
    }
    catch (incompatible_error const & e)
    {
        throw incompatible_error{"cannot " + verb + " " + quoted_list(names) + ": " + e.what()};
    }
    catch (full_error const & e)
    {
        throw full_error{"cannot " + verb + " " + quoted_list(names) + ": " + e.what() +
                         " (build the inputs with a larger --expected, or leave it out)"};
    }
}

} // namespace

std::unique_ptr<any_filter> make_filter(filter_config const & cfg)
{
    if (cfg.kmer.k < 1 || cfg.kmer.k > max_k)
        throw usage_error{"k must be in [1, 32], got " + std::to_string(cfg.kmer.k)};
    if (cfg.shard_bits >= cfg.kmer.key_bits() || cfg.shard_bits > 16)
        throw usage_error{"too many shards (2^" + std::to_string(cfg.shard_bits) +
                          ") for k = " + std::to_string(cfg.kmer.k)};
    if (!(cfg.fpr >= 0.0 && cfg.fpr < 0.5))
        throw usage_error{"--fpr must be in [0, 0.5)"};
    if (cfg.fpr == 0.0 && cfg.type != filter_type::quotient)
        throw usage_error{"--fpr 0 (exact mode) needs --type qf"};
    auto f = with_filter_class(
        cfg.type, [&](auto const f)
        { return std::make_unique<sharded_filter<typename decltype(f)::type>>(cfg); });
    if (!f)
        throw usage_error{"unknown filter type"};
    return f;
}

std::unique_ptr<any_filter> view_filter(std::shared_ptr<mapped_filter_file const> file)
{
    std::string const name = file->name();
    filter_type const type = file->header().type;
    auto f = with_filter_class(
        type, [&](auto const f)
        { return std::make_unique<sharded_filter<typename decltype(f)::type>>(std::move(file)); });
    if (!f)
        throw format_error{"'" + name + "': unknown filter type"};
    return f;
}

std::unique_ptr<any_filter> load_filter(std::filesystem::path const & path,
                                        load_options const & options)
{
    return view_filter(mapped_filter_file::open(path, options));
}

void check_query_compatible(std::span<any_filter const * const> const inputs,
                            std::span<std::string const> const names)
{
    for (std::size_t i = 1; i < inputs.size(); ++i)
        if (!(inputs[i]->kmer() == inputs[0]->kmer()))
            throw incompatible_error{"filters '" + names[0] + "' (" + describe(inputs[0]->kmer()) +
                                     ") and '" + names[i] + "' (" + describe(inputs[i]->kmer()) +
                                     ") cannot be used together: k, canonical mode, hash seed, "
                                     "sampling and mask must agree"};
}

void check_parts_complete(std::span<any_filter const * const> const inputs,
                          std::span<std::string const> const names)
{
    std::vector<key_parts> const parts = parts_of(inputs);
    std::size_t const i = first_incomplete_split(parts);
    if (i == parts.size())
        return;
    throw incompatible_error{
        "filter '" + names[i] + "' holds only " + parts[i].describe() +
        " of the key space (build --part), but no filter given holds " +
        union_of_split(parts, parts[i].split).describe_missing() +
        ": k-mers there would all be misses (give every part as -f, or their merge)"};
}

void fit_filter(any_filter & filter, double const slack, unsigned const threads)
{
    growable_filter * const g = filter.growable();
    detail::parallel_for(filter.num_shards(), threads,
                         [&](std::size_t const s)
                         {
                             throw_if_stop_requested();
                             if (g != nullptr)
                                 (void)g->fit_shard(s, slack);
                         });
}

void drop_counts(any_filter & filter, unsigned const threads)
{
    growable_filter * const g = filter.growable();
    detail::parallel_for(filter.num_shards(), threads,
                         [&](std::size_t const s)
                         {
                             throw_if_stop_requested();
                             if (g != nullptr)
                                 (void)g->drop_counts_shard(s);
                         });
}

char const * operation_name(set_operation const op) noexcept
{
    switch (op)
    {
    case set_operation::unite:
        return "merge";
    case set_operation::intersect:
        return "intersect";
    case set_operation::subtract:
    case set_operation::subtract_counts:
        return "subtract";
    }
    return "merge";
}

namespace detail
{
std::string quoted_list(std::span<std::string const> const names)
{
    constexpr std::size_t shown = 5;
    std::string all;
    for (std::size_t i = 0; i < names.size() && i < shown; ++i)
        all += (all.empty() ? "'" : ", '") + names[i] + "'";
    if (names.size() > shown)
        all += " and " + std::to_string(names.size() - shown) + " more";
    return all;
}

// The checks of a set operation's inputs that need no layout: their number, query compatibility,
// the operation supported by their type, equal types, --fpr and (except quotient filters) --shards.
void check_combinable(std::span<any_filter const * const> const inputs,
                      std::span<std::string const> const names, set_operation const op,
                      std::uint64_t const min_count)
{
    std::string const verb = operation_name(op);
    if (inputs.empty())
        throw usage_error{verb + " needs at least one input filter"};
    bool const subtracting = op == set_operation::subtract || op == set_operation::subtract_counts;
    if (subtracting && inputs.size() < 2)
        throw usage_error{"subtract needs a filter and at least one filter to subtract from it"};
    check_query_compatible(inputs, names);
    any_filter const & first = *inputs[0];
    check_operation_supported(first, names[0], op, min_count);
    for (std::size_t i = 1; i < inputs.size(); ++i)
    {
        if (inputs[i]->type() != first.type())
            throw incompatible_error{"cannot " + verb + " '" + names[i] + "' (" +
                                     std::string{to_string(inputs[i]->type())} + " filter) with '" +
                                     names[0] + "' (" + std::string{to_string(first.type())} +
                                     " filter): filter types differ"};
        if (inputs[i]->shard_bits() != first.shard_bits() && first.type() != filter_type::quotient)
            throw incompatible_error{
                "cannot " + verb + " '" + names[i] + "' (" +
                std::to_string(inputs[i]->num_shards()) + " shards) with '" + names[0] + "' (" +
                std::to_string(first.num_shards()) +
                " shards): build them with the same --shards (only quotient filters are "
                "re-sharded)"};
        if (inputs[i]->target_fpr() != first.target_fpr())
            throw incompatible_error{"cannot " + verb + " '" + names[i] + "' (--fpr " +
                                     std::to_string(inputs[i]->target_fpr()) + ") with '" +
                                     names[0] + "' (--fpr " + std::to_string(first.target_fpr()) +
                                     "): build them with the same --fpr"};
    }
}

// The key parts of the result: whole if every split among the inputs is complete, else the union of
// one split's parts when that is all the operation holds (the merge of some parts, to be completed
// later). \throws incompatible_error where parts of a split meet whole filters or another split.
key_parts result_parts_of(std::span<any_filter const * const> const inputs,
                          std::span<std::string const> const names, std::string const & verb)
{
    std::vector<key_parts> const parts = parts_of(inputs);
    std::size_t const i = first_incomplete_split(parts);
    if (i == parts.size())
        return key_parts::whole();
    bool const one_split = std::all_of(parts.begin(), parts.end(),
                                       [&](key_parts const & p)
                                       { return !p.complete() && p.split == parts[i].split; });
    key_parts result = union_of_split(parts, parts[i].split);
    if (!one_split)
        throw incompatible_error{
            "cannot " + verb + " '" + names[i] + "' (" + parts[i].describe() +
            " of the key space, from build --part) with filters of the whole key space "
            "or of another split while " +
            result.describe_missing() +
            " are missing: the result could not tell which k-mers it lacks (merge all "
            "parts of the split together)"};
    return result;
}

// Quotient filters are combined in the layout of the input whose fingerprints keep the fewest bits,
// with the most shards any input has where that layout keeps as many bits: the others are moved to
// it first, their fingerprints cut to that width (exactly the filter one build at that width gives,
// no false negatives; the narrower width's false-positive rate). Inputs of the same shards but
// wider fingerprints are cut while they are combined, without a copy.
common_layout layout_for(std::span<any_filter const * const> const inputs,
                         std::span<std::string const> const names, unsigned const threads)
{
    any_filter const & first = *inputs[0];
    common_layout l;
    l.cfg.type = first.type();
    l.cfg.kmer = first.kmer();
    l.cfg.fpr = first.target_fpr();
    l.cfg.shard_bits = first.shard_bits();
    l.cfg.expected = 0;
    for (auto const * f : inputs)
        l.cfg.expected = std::max(l.cfg.expected, f->expected());
    l.inputs.assign(inputs.begin(), inputs.end());
    if (first.type() != filter_type::quotient)
        return l;
    std::size_t narrow = 0;
    for (std::size_t i = 1; i < inputs.size(); ++i)
        if (detail::kept_bits(*inputs[i]) < detail::kept_bits(*inputs[narrow]))
            narrow = i;
    l.cfg.shard_bits = inputs[narrow]->shard_bits();
    l.cfg.expected = inputs[narrow]->expected();
    // The most shards of an input whose layout keeps the same bits as the narrowest: the result's
    // shards are combined in parallel, and that input is cut while it is combined instead of moved.
    unsigned const narrow_bits = detail::kept_bits(*inputs[narrow]);
    for (auto const * f : inputs)
        if (f->shard_bits() > l.cfg.shard_bits)
        {
            filter_config c = l.cfg;
            c.shard_bits = f->shard_bits();
            if (detail::layout_kept_bits(c, first.key_bits()) == narrow_bits)
                l.cfg.shard_bits = c.shard_bits;
        }
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i]->shard_bits() != l.cfg.shard_bits)
        {
            l.moved.push_back(
                detail::reshard_quotient(*inputs[i], l.cfg, names[i], names[narrow], threads));
            l.inputs[i] = l.moved.back().get();
        }
    return l;
}

} // namespace detail

std::unique_ptr<any_filter> combine_filters(std::span<any_filter const * const> const inputs,
                                            std::span<std::string const> const names,
                                            set_operation const op, std::uint64_t const min_count,
                                            unsigned const threads)
{
    return combine_impl(inputs, names, op, min_count, threads, nullptr, nullptr);
}

filter_stats combine_filters_into(std::filesystem::path const & path,
                                  std::span<any_filter const * const> const inputs,
                                  std::span<std::string const> const names, set_operation const op,
                                  std::uint64_t const min_count, unsigned const threads)
{
    filter_stats stats;
    if (auto const out = combine_impl(inputs, names, op, min_count, threads, &path, &stats))
    {
        out->save(path);
        return out->stats();
    }
    return stats;
}

} // namespace ksieve
