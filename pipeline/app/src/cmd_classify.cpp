// ksieve classify: each read (or pair) is known or novel by the k-mers it shares with the filters.
#include "app_detail.hpp"
#include "read_run.hpp"

#include <ksieve/filters/support/error.hpp>

#include <ksieve/engine/read_classifier.hpp>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace ksieve
{

namespace
{

// The filters of -f, loaded and checked: they must answer the same k-mers and together hold every
// part of the key space, --min-count above 1 needs counts, and none may be saturated. No output may
// replace one of them or an input.
detail::loaded_filters load_classify_filters(classify_args const & args, unsigned const threads)
{
    detail::loaded_filters filters = detail::load_filters(
        args.filters, load_options{.threads = threads},
        [&](any_filter const & filter, std::string const & path)
        {
            if (args.out.min_count > 1 && filter.type() != filter_type::quotient)
                throw usage_error{"--min-count above 1 needs quotient filters; '" + path +
                                  "' is a " + std::string{to_string(filter.type())} + " filter"};
        });
    check_query_compatible(filters.views, args.filters);
    for (std::size_t i = 0; i < filters.views.size(); ++i)
        if (filters.views[i]->labeled() && filters.views.size() > 1)
            throw usage_error{"'" + args.filters[i] +
                              "' is a labeled filter: classify takes it as the only -f (merge "
                              "filters, or parts of a split, into one first)"};
        else if (filters.views[i]->labeled() && args.out.min_count > 1)
            throw usage_error{"--min-count above 1 with the labeled filter '" + args.filters[i] +
                              "': its counts are label sets"};
    if (!args.out.split_by_label.empty() && !filters.views.front()->labeled())
        throw usage_error{"--split-by-label needs a labeled filter ('" + args.filters.front() +
                          "' has no labels)"};
    check_parts_complete(filters.views, args.filters);
    for (std::size_t i = 0; i < filters.views.size(); ++i)
        detail::check_saturation(*filters.views[i], args.filters[i], args.out.strict);
    std::vector<std::string> read = args.input.inputs;
    read.insert(read.end(), args.filters.begin(), args.filters.end());
    detail::check_outputs_are_not_inputs(detail::read_output_paths(args.out), read);
    return filters;
}

} // namespace

run_summary run_classify(classify_args const & args)
{
    detail::read_run run{"classify", args.common};
    detail::check_classify_options(args);
    // before the filters are loaded and the input opened (which reads from a pipe): refused at once
    detail::check_read_outputs(args.out, args.input.paired || args.input.interleaved);
    unsigned const threads = resolve_threads(args.common.threads);
    detail::loaded_filters const filters = load_classify_filters(args, threads);

    any_filter const & first = *filters.views.front();
    run.open(args.input, detail::reader_opts(threads), args.out, threads, first.labels().get());
    if (first.labeled())
    {
        run_summary & summary = run.summary();
        summary.label_names = first.labels()->names;
        summary.label_names.push_back("ambiguous");
        summary.label_reads.assign(summary.label_names.size(), 0);
    }
    // Only --report and --exact-hits ask for exact hit counts; without them a read's lookups stop
    // once its class is known. A labeled filter needs every hit of a read to name its label.
    bool const full_counts = detail::exact_hits_asked(args.out) || first.labeled();
    run.summary().hits_exact = full_counts;
    decision_rule const rule = detail::classify_rule(args.out);
    // One batch per thread at a time, each with its own single-threaded classifier: the batches
    // need no synchronisation between them, and a thread that waits for a batch sleeps instead of
    // spinning.
    std::vector<std::unique_ptr<read_classifier>> classifiers;
    for (unsigned w = 0; w < threads; ++w)
        classifiers.push_back(
            std::make_unique<read_classifier>(filters.views, rule, full_counts, 1));
    run.stream([&](work_item & item, unsigned const worker) { classifiers[worker]->decide(item); },
               threads);
    return run.finish(args.out, args.input.inputs, args.filters);
}

} // namespace ksieve
