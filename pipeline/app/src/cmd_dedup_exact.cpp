// ksieve dedup --exact: a read (or pair) is known iff its sequence (both mates' sequences) was seen
// in an earlier read (pair) of the run, on either strand unless --no-canonical; the 64-bit keys of
// the novel ones are kept in a quotient filter (exact keys with --fpr 0, the default).
#include "app_detail.hpp"

#include <ksieve/engine/dedup_budget.hpp>
#include <ksieve/engine/exact_dedup.hpp>
#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/error.hpp>

#include <cstdio>

namespace ksieve
{

namespace
{

// The filter's name in errors (the messages of a filter that cannot grow name "the dedup filter").
constexpr char const * exact_filter_name = "dedup";

[[noreturn]] void refuse(std::string const & option)
{
    throw usage_error{"dedup --exact compares whole sequences, not k-mers: " + option +
                      " does not apply to it (leave it out)"};
}

// The options of k-mer dedup that --exact has no use for, where they differ from their defaults
// (the command line also refuses them given at their defaults). \throws usage_error
void check_exact_options(dedup_args const & args)
{
    if (args.filter.type != filter_type::quotient)
        throw usage_error{"dedup --exact keeps its keys in a quotient filter: --type must be qf"};
    detail::check_dedup_options(args);
    if (args.filter.k != filter_args{}.k)
        refuse("-k/--kmer");
    if (args.filter.window != 1)
        refuse("--sampling");
    if (args.filter.dust_threshold != 0)
        refuse("--mask");
    if (args.prefilter || args.prefilter_bytes != 0)
        refuse("--prefilter");
    if (!args.save_filter.empty())
        refuse("--save-filter");
    if (args.out.min_count != 1)
        refuse("--min-count");
    if (args.out.min_hit_fraction != classify_output_args{}.min_hit_fraction)
        refuse("--min-hit-fraction");
    if (args.out.min_hits != 0)
        refuse("--min-hits");
    if (!args.out.split_by_label.empty() || !args.out.split_by_label2.empty())
        refuse("--split-by-label");
}

// Every output, compared with every other and with the inputs, before any work.
void check_exact_outputs(dedup_args const & args)
{
    detail::check_read_outputs(args.out, args.input.paired || args.input.interleaved);
    detail::check_outputs_are_not_inputs({args.out.novel, args.out.known, args.out.novel2,
                                          args.out.known2, args.out.report, args.out.stats,
                                          args.out.multiqc},
                                         args.input.inputs);
}

// A lossy filter that took many more sequences than it was sized for answers with a higher
// false-positive rate than asked: a warning, or with --strict (above 10x the target) an error.
void check_filter_rate(any_filter const & filter, dedup_args const & args)
{
    double const asked = args.filter.fpr;
    filter_stats const s = filter.stats();
    if (!(asked > 0.0) || s.estimated_fpr <= 1.5 * asked)
        return;
    char text[400];
    std::snprintf(text, sizeof text,
                  "the dedup filter holds %llu distinct sequences; its estimated false-positive "
                  "rate is %.3g instead of %.3g: give --expected with the number of distinct "
                  "sequences (or --fpr 0)",
                  static_cast<unsigned long long>(s.distinct), s.estimated_fpr, asked);
    if (args.out.strict && s.estimated_fpr > saturation_factor * asked)
        throw error{text};
    std::fprintf(stderr, "ksieve: warning: %s\n", text);
}

} // namespace

namespace detail
{

run_summary run_dedup_exact(dedup_args const & args)
{
    auto const t0 = std::chrono::steady_clock::now();
    check_exact_options(args);
    check_exact_outputs(args);
    unsigned const threads = resolve_threads(args.common.threads);
    sequence_key_options const key_options{args.filter.canonical, args.filter.seed};
    filter_config cfg = make_config(args.filter);
    cfg.kmer = sequence_key_params(key_options);
    std::unique_ptr<any_filter> const filter =
        make_filter_within_memory(cfg, args.filter.expected != 0);

    unit_source source{args.input, reader_opts(threads)};
    output_set outputs{args.out, source, threads, source.paired()};
    exact_deduplicator dedup{key_options, threads};
    std::uint64_t const budget_bytes = dedup_budget_bytes(*filter, true);
    dedup_budget budget{*filter, budget_bytes};
    run_summary summary = start_summary(threads, source);
    progress_line progress{"dedup", args.common.quiet};
    summary.hits_exact = true; // one key per unit, always looked up
    std::uint64_t units = 0, first_forgetting = 0;
    run_stream(
        source,
        [&](work_item & item)
        {
            dedup.dedup(*filter, item.r1, item.r2, item.results, exact_filter_name, &budget);
            if (first_forgetting == 0 && (budget.level() > 0 || budget.forgotten() > 0))
                warn_dedup_budget(budget_bytes, first_forgetting = units + 1);
            units += item.r1.size();
        },
        batch_writer(outputs, summary, progress, source));
    summary.memory_budget = budget_bytes;
    summary.forgotten_kmers = budget.forgotten();
    summary.forgetting_from_unit = first_forgetting;
    summary.kmer_sample_level = budget.level();
    progress.finish();
    throw_if_stop_requested();
    check_filter_rate(*filter, args);
    // --stats gives the rule as one of k-mer dedup: a unit of one key is known iff that key is a
    // hit (hits / kmers >= 1).
    classify_output_args out = args.out;
    out.min_hit_fraction = 1.0;
    out.min_count = 1;
    out.min_hits = 0;
    run_context const context{"dedup", &args.input.inputs, {}};
    finish_read_outputs(outputs, nullptr, summary, t0, context, out, args.common);
    return summary;
}

} // namespace detail

} // namespace ksieve
