// ksieve.classify_files and ksieve.dedup_files (the compiled part): `ksieve classify` and `ksieve
// dedup` on files, run by the command line's own run_classify and run_dedup with their option
// structs (so that the outputs are the bytes the command line writes), within the memory plan the
// command line makes (plan_run_memory), without the interpreter lock; each returns the text of the
// --stats file of the run.
#include "app_detail.hpp"
#include "binding.hpp"

#include <ksieve/app/commands.hpp>
#include <ksieve/app/runtime.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

#include <pybind11/stl.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace ksieve::python
{

namespace
{

// The read outputs and the files about a run from their list, in the order of ksieve._OUTPUTS
// (empty: not written).
void set_outputs(classify_output_args & o, std::vector<std::string> const & out)
{
    std::string * const fields[] = {&o.novel,  &o.known, &o.novel2,  &o.known2,
                                    &o.report, &o.stats, &o.multiqc, &o.sample};
    for (std::size_t i = 0; i < std::size(fields); ++i)
        *fields[i] = out.at(i);
}

// The start of every run, as the command line makes it before any work: the memory plan of
// `command` with --max-memory `max_memory` (empty: the cgroup's or the machine's memory), the
// common options (quiet: no progress line) and the inputs as the positional arguments and
// --paired / --interleaved give them, set in `args` (classify_args or dedup_args).
// \throws usage_error, error
template <class Args>
void start_run(Args & args, char const * const command, std::string const & max_memory,
               unsigned const threads, std::string const & command_line,
               std::vector<std::string> const & inputs, bool const paired, bool const interleaved)
{
    plan_run_memory(max_memory.empty() ? 0 : parse_size(max_memory, "max_memory"), command,
                    resolve_threads(threads));
    if (inputs.empty())
        throw usage_error{"inputs: no read files given"};
    if (paired && interleaved)
        throw usage_error{"paired and interleaved: give one of them"};
    args.common.threads = threads;
    args.common.quiet = true;
    args.common.command_line = command_line;
    args.input.inputs = inputs;
    args.input.paired = paired;
    args.input.interleaved = interleaved;
}

std::string classify_files(std::vector<std::string> const & filters,
                           std::vector<std::string> const & inputs, bool const paired,
                           bool const interleaved, std::vector<std::string> const & outputs,
                           double const min_hit_fraction, std::uint64_t const min_hits,
                           std::uint64_t const min_count, bool const exact_hits, bool const strict,
                           int const compression_level, unsigned const threads,
                           std::string const & max_memory, std::string const & command_line)
{
    classify_args args;
    set_outputs(args.out, outputs);
    start_run(args, "classify", max_memory, threads, command_line, inputs, paired, interleaved);
    args.filters = filters;
    if (filters.empty())
        throw usage_error{"filter: no filter given"};
    args.out.min_hit_fraction = min_hit_fraction;
    args.out.min_hits = min_hits;
    args.out.min_count = min_count;
    args.out.exact_hits = exact_hits;
    args.out.strict = strict;
    args.out.compression_level = compression_level;
    run_summary summary;
    {
        py::gil_scoped_release release;
        summary = run_classify(args);
    }
    detail::run_context const context{"classify", &args.input.inputs, args.filters};
    return detail::stats_text(summary, context, args.out, args.common);
}

// dedup_files' engine, with dedup's k-mer options as its command line takes them.
std::string dedup_files(std::vector<std::string> const & inputs, bool const paired,
                        bool const interleaved, std::vector<std::string> const & outputs,
                        unsigned const k, bool const canonical, std::string const & type,
                        std::optional<double> const fpr, std::string const & expected,
                        std::string const & sampling, unsigned const shards,
                        std::uint64_t const seed, double const max_load,
                        double const min_hit_fraction, std::uint64_t const min_count,
                        bool const exact, bool const prefilter, std::string const & save_filter,
                        int const compression_level, unsigned const threads,
                        std::string const & max_memory, std::string const & command_line)
{
    dedup_args args;
    set_outputs(args.out, outputs);
    start_run(args, "dedup", max_memory, threads, command_line, inputs, paired, interleaved);
    args.out.min_hit_fraction = min_hit_fraction;
    args.out.min_count = min_count;
    args.out.compression_level = compression_level;
    filter_args & f = args.filter;
    f.k = k;
    f.canonical = canonical;
    f.type = parse_filter_type(type);
    f.fpr = fpr.value_or(exact ? 0.0 : 0.001); // as dedup's command line defaults it
    f.shards = shards;
    f.seed = seed;
    f.max_load = max_load;
    parse_expected(expected, f);
    parse_sampling(sampling, f);
    args.exact = exact;
    args.prefilter = prefilter;
    args.save_filter = save_filter;
    run_summary summary;
    {
        py::gil_scoped_release release;
        summary = run_dedup(args);
    }
    std::vector<std::string> const saved =
        save_filter.empty() ? std::vector<std::string>{} : std::vector{save_filter};
    classify_output_args out = args.out;
    if (exact)
        out.min_hit_fraction = 1.0; // as --exact's statistics give its rule: the whole sequence
    detail::run_context const context{"dedup", &args.input.inputs, saved};
    return detail::stats_text(summary, context, out, args.common);
}

} // namespace

void register_files(py::module_ & m)
{
    m.attr("_DEFAULT_SEED") = default_hash_seed;
    m.def("_classify_files", &classify_files,
          "classify_files' engine: run_classify; the --stats text (see ksieve.classify_files).");
    m.def("_dedup_files", &dedup_files,
          "dedup_files' engine: run_dedup; the --stats text (see ksieve.dedup_files).");
}

} // namespace ksieve::python
