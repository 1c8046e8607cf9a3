// ksieve merge, intersect and subtract: one filter from the k-mers of several (set_operation).
#include "app_detail.hpp"

#include <ksieve/filters/common/labels.hpp>
#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

#include <algorithm>
#include <new>

namespace ksieve
{

combine_summary run_merge(merge_args const & args)
{
    auto const t0 = std::chrono::steady_clock::now();
    std::string const verb = operation_name(args.op);
    if (args.inputs.empty())
        throw usage_error{verb + " needs at least one input filter"};
    if (args.output.empty())
        throw usage_error{verb + " needs -o/--output"};
    detail::check_filter_output_name("-o/--output", args.output);
    detail::check_output_paths({{"-o/--output", args.output}});
    // The output may be one of the inputs (an incremental union): it is written to a temporary and
    // renamed over the input only at the end, while the input's mapping keeps the old file
    // readable.
    unsigned const threads = resolve_threads(args.common.threads);
    // Each input is verified when it is loaded (its shards by all threads), each shard's pages
    // given back once checked: they are read again shard by shard when they are combined.
    detail::loaded_filters const inputs = detail::load_filters(
        args.inputs, load_options{.threads = threads, .release_verified = true},
        [](any_filter const &, std::string const &) {});
    io::output_file out{args.output};
    // Into a temporary file, the result is written shard by shard as it is made (memory holds the
    // shards in flight); a device or FIFO gets it whole at the end.
    std::unique_ptr<any_filter> merged;
    filter_stats stats;
    try
    {
        bool const labeled =
            args.label_inputs || std::any_of(inputs.views.begin(), inputs.views.end(),
                                             [](any_filter const * f) { return f->labeled(); });
        if (labeled)
        {
            if (args.min_count > 1)
                throw usage_error{"--min-count above 1 with labeled filters: their counts are "
                                  "label sets"};
            std::vector<std::string> unlabeled_names;
            for (std::size_t i = 0; i < args.inputs.size(); ++i)
            {
                std::string const & in = args.inputs[i];
                std::string const name = args.label_inputs ? label_of_path(in) : std::string{};
                if (args.label_inputs && !inputs.views[i]->labeled() && !is_label_name(name))
                    throw usage_error{"--label-inputs: input '" + in + "' gives the label '" +
                                      printable_label(name) +
                                      "' (its file name without extensions): " + label_name_rule()};
                unlabeled_names.push_back(name);
            }
            merged = combine_labeled(inputs.views, args.inputs, unlabeled_names, args.op, threads);
        }
        else if (out.in_place())
            merged = combine_filters(inputs.views, args.inputs, args.op, args.min_count, threads);
        else
            stats = combine_filters_into(out.write_path(), inputs.views, args.inputs, args.op,
                                         args.min_count, threads);
    }
    catch (memory_limit_error const & e)
    {
        throw error{"cannot " + verb + " " + detail::quoted_names(args.inputs) + " into '" +
                    args.output + "': " + e.what()};
    }
    catch (std::bad_alloc const &)
    {
        throw error{"cannot " + verb + " " + detail::quoted_names(args.inputs) + " into '" +
                    args.output + "': out of memory"};
    }
    throw_if_stop_requested();
    if (merged)
    {
        merged->save(out.write_path());
        stats = merged->stats();
    }
    throw_if_stop_requested();
    detail::warn_if_combined_above_target(stats, inputs.views.front()->target_fpr(), args.output);
    out.commit();
    combine_summary s;
    s.distinct = stats.distinct;
    s.seconds = detail::seconds_since(t0);
    return s;
}

} // namespace ksieve
