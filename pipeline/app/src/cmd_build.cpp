// ksieve build: a filter of the k-mers of the input.
#include "app_detail.hpp"
#include "read_run.hpp"

#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/error.hpp>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <limits>

namespace ksieve
{

namespace
{

// build refits a filter of at most build_fit_bytes to its contents; a larger one only where that
// saves more than build_fit_slack of a shard's slots (a rebuild costs a pass over the table, about
// 40 ns a k-mer; a build sized from its first pass ends within about 3% of the fit).
constexpr std::uint64_t build_fit_bytes = std::uint64_t{64} << 20;
constexpr double build_fit_slack = 1.0 / 16;

// The filter that build makes. Without --expected a filter is sized to its input from a first pass
// (distinct k-mers counted), when the inputs are regular files that can be read twice; a quotient
// filter from stdin or a pipe is designed for a fixed number of k-mers instead
// (default_design_keys) and grows. Quotient filters sized for different inputs still merge: at the
// narrower fingerprint width.
filter_config build_config(build_args const & args, unsigned const threads)
{
    filter_config cfg = detail::make_config(args.filter);
    input_args all = args.input; // with the files of --label
    for (auto const & [name, files] : args.labels)
        all.inputs.insert(all.inputs.end(), files.begin(), files.end());
    bool const readable_twice =
        std::all_of(all.inputs.begin(), all.inputs.end(),
                    [](std::string const & in)
                    {
                        std::error_code ec;
                        return in != "-" && std::filesystem::is_regular_file(in, ec);
                    });
    if (cfg.expected == 0 &&
        (cfg.type != filter_type::quotient || args.filter.expected_auto || readable_twice))
        cfg.expected = detail::first_pass_expected(all, cfg.kmer, threads, cfg.type, "built from",
                                                   args.common.quiet);
    // A small quotient filter in 64 shards would spend much of its bytes on each shard's overflow
    // slots and on the spread of keys among shards: unless --shards is given, a shard holds at
    // least 2^18 expected k-mers.
    if (args.filter.shards == 0 && cfg.type == filter_type::quotient && cfg.expected > 0)
    {
        std::uint64_t const most_shards = std::max<std::uint64_t>(1, cfg.expected >> 18);
        cfg.shard_bits =
            std::min(cfg.shard_bits, static_cast<unsigned>(std::bit_width(most_shards) - 1));
    }
    return cfg;
}

} // namespace

run_summary run_build(build_args const & args)
{
    key_part_range const * const range = args.part ? &*args.part : nullptr; // build --part I/S
    detail::read_run run{"build", args.common};
    detail::check_build_options(args);
    detail::check_label_options(args);
    unsigned const threads = resolve_threads(args.common.threads);
    detail::check_filter_output_name("-o/--output", args.output);
    detail::check_output_paths({{"-o/--output", args.output}});
    std::vector<std::string> read = args.input.inputs;
    for (auto const & [name, files] : args.labels)
        read.insert(read.end(), files.begin(), files.end());
    if (!args.label_map.empty())
        read.push_back(args.label_map);
    detail::check_outputs_are_not_inputs({args.output}, read);
    filter_config const cfg = build_config(args, threads);
    if (args.labeled())
        return detail::run_labeled_build(args, cfg, threads, run);

    auto filter = detail::make_filter_within_memory(cfg, args.filter.expected != 0);
    if (range != nullptr)
        filter->set_parts(key_parts::one(range->index, range->count)); // recorded in the file
    run.open_input(args.input, detail::reader_opts(threads, false), threads);
    batch_engine engine{cfg.kmer, threads, range};
    batch_keys keys;
    std::vector<std::uint64_t> kmers;
    run.stream(
        [&](work_item & item)
        {
            for_each_key_piece(
                engine, item, keys, kmers,
                [&](batch_keys const & piece, auto const &)
                { engine.insert(*filter, piece, nullptr, args.output); },
                current_memory_plan().piece_bases);
            detail::set_kmer_counts(item, kmers);
        });
    detail::warn_if_overgrown(*filter, args.filter.fpr, "filter '" + args.output + "'");
    // Quotient-filter shards that ended far below their load (an estimate above the k-mers
    // inserted, or growth by doubling) are rebuilt at the fewest home slots that hold them.
    if (args.no_counts) // every count 1: each k-mer one slot, the table then fitted to that
        drop_counts(*filter, threads);
    fit_filter(*filter, filter->stats().bytes <= build_fit_bytes ? 0.0 : build_fit_slack, threads);
    return run.finish(*filter, args.output);
}

} // namespace ksieve
