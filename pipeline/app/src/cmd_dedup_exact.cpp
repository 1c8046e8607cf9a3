// ksieve dedup --exact: a read (or pair) is known iff its sequence (both mates' sequences) was seen
// in an earlier read (pair) of the run, on either strand unless --no-canonical; the 64-bit keys of
// the novel ones are kept in a quotient filter (exact keys with --fpr 0, the default).
#include "app_detail.hpp"
#include "read_run.hpp"

#include <ksieve/engine/dedup_budget.hpp>
#include <ksieve/engine/exact_dedup.hpp>
#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/error.hpp>

#include <cstdio>
#include <utility>

namespace ksieve
{

namespace
{

// The filter's name in errors (the messages of a filter that cannot grow name "the dedup filter").
constexpr char const * exact_filter_name = "dedup";

// The options of k-mer dedup that --exact has no use for, where they differ from their defaults
// (the command line also refuses them given at their defaults). \throws usage_error
void check_exact_options(dedup_args const & args)
{
    if (args.filter.type != filter_type::quotient)
        throw usage_error{"dedup --exact keeps its keys in a quotient filter: --type must be qf"};
    detail::check_dedup_options(args);
    std::pair<bool, char const *> const refused[] = {
        {args.filter.k != filter_args{}.k, "-k/--kmer"},
        {args.filter.window != 1, "--sampling"},
        {args.filter.dust_threshold != 0, "--mask"},
        {args.prefilter || args.prefilter_bytes != 0, "--prefilter"},
        {!args.save_filter.empty(), "--save-filter"},
        {args.out.min_count != 1, "--min-count"},
        {args.out.min_hit_fraction != classify_output_args{}.min_hit_fraction,
         "--min-hit-fraction"},
        {args.out.min_hits != 0, "--min-hits"},
        {!args.out.split_by_label.empty() || !args.out.split_by_label2.empty(),
         "--split-by-label"}};
    for (auto const & [given, option] : refused)
        if (given)
            detail::refuse_for_exact(option);
}

} // namespace

namespace detail
{

void refuse_for_exact(std::string const & option)
{
    throw usage_error{"dedup --exact compares whole sequences, not k-mers: " + option +
                      " does not apply to it (leave it out)"};
}

run_summary run_dedup_exact(dedup_args const & args)
{
    read_run run{"dedup", args.common};
    check_exact_options(args);
    check_dedup_outputs(args); // as dedup's: --save-filter was refused
    unsigned const threads = resolve_threads(args.common.threads);
    sequence_key_options const key_options{args.filter.canonical, args.filter.seed};
    filter_config cfg = make_config(args.filter);
    cfg.kmer = sequence_key_params(key_options);
    std::unique_ptr<any_filter> const filter =
        make_filter_within_memory(cfg, args.filter.expected != 0);

    run.open(args.input, reader_opts(threads), args.out, threads);
    std::uint64_t const budget_bytes = dedup_budget_bytes(*filter, true);
    dedup_budget budget{*filter, budget_bytes};
    exact_deduplicator dedup{key_options, threads, *filter, exact_filter_name, &budget};
    run.summary().hits_exact = true; // one key per unit, always looked up
    std::uint64_t units = 0, first_forgetting = 0;
    run.stream(
        [&](work_item & item)
        {
            dedup.decide(item);
            if (first_forgetting == 0 && (budget.level() > 0 || budget.forgotten() > 0))
                warn_dedup_budget(budget_bytes, first_forgetting = units + 1);
            units += item.r1.size();
        });
    note_budget(run.summary(), budget_bytes, budget, first_forgetting);
    warn_if_overgrown(*filter, args.filter.fpr, "the dedup filter", "sequences", args.out.strict);
    // --stats gives the rule as one of k-mer dedup: a unit of one key is known iff that key is a
    // hit (hits / kmers >= 1).
    classify_output_args out = args.out;
    out.min_hit_fraction = 1.0;
    out.min_count = 1;
    out.min_hits = 0;
    return run.finish(out, args.input.inputs, {});
}

} // namespace detail

} // namespace ksieve
