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

/*! \brief The read outputs and the files about a run, as classify_files and dedup_files take them
 * (empty: not written). */
struct file_outputs
{
    std::string novel, known, novel2, known2, report, stats, multiqc, sample;
};

// The inputs as the command line's positional arguments and --paired / --interleaved give them.
input_args inputs_of(std::vector<std::string> const & inputs, bool const paired,
                     bool const interleaved)
{
    if (inputs.empty())
        throw usage_error{"inputs: no read files given"};
    if (paired && interleaved)
        throw usage_error{"paired and interleaved: give one of them"};
    input_args in;
    in.inputs = inputs;
    in.paired = paired;
    in.interleaved = interleaved;
    return in;
}

void set_outputs(classify_output_args & o, file_outputs const & f)
{
    o.novel = f.novel;
    o.known = f.known;
    o.novel2 = f.novel2;
    o.known2 = f.known2;
    o.report = f.report;
    o.stats = f.stats;
    o.multiqc = f.multiqc;
    o.sample = f.sample;
}

// The memory plan of the run, as the command line makes it before any work: --max-memory
// `max_memory` (empty: the cgroup's or the machine's memory). \throws usage_error, error
void plan_memory_of(std::string const & max_memory, char const * const command,
                    unsigned const threads)
{
    plan_run_memory(max_memory.empty() ? 0 : parse_size(max_memory, "max_memory"), command,
                    resolve_threads(threads));
}

/*! \brief What a run is given besides its options: the command, --max-memory (empty: the
 * default), -t and the command line that stands for the call. */
struct run_start
{
    char const * command;
    std::string const & max_memory;
    unsigned threads;
    std::string const & command_line;
};

// The start of every run: its memory planned, its common options (quiet: no progress line) and
// its inputs set in `args` (classify_args or dedup_args).
template <class Args>
void start_run(Args & args, run_start const & start, std::vector<std::string> const & inputs,
               bool const paired, bool const interleaved)
{
    plan_memory_of(start.max_memory, start.command, start.threads);
    args.common.threads = start.threads;
    args.common.quiet = true;
    args.common.command_line = start.command_line;
    args.input = inputs_of(inputs, paired, interleaved);
}

// The --stats text of a finished run, with the summary the run returned.
std::string stats_of(run_summary const & summary, std::string const & command,
                     input_args const & in, std::vector<std::string> const & filters,
                     classify_output_args const & out, common_args const & common)
{
    detail::run_context const context{command, &in.inputs, filters};
    return detail::stats_text(summary, context, out, common);
}

std::string classify_files(std::vector<std::string> const & filters,
                           std::vector<std::string> const & inputs, bool const paired,
                           bool const interleaved, file_outputs const & outputs,
                           double const min_hit_fraction, std::uint64_t const min_hits,
                           std::uint64_t const min_count, bool const exact_hits, bool const strict,
                           int const compression_level, unsigned const threads,
                           std::string const & max_memory, std::string const & command_line)
{
    classify_args args;
    start_run(args, {"classify", max_memory, threads, command_line}, inputs, paired, interleaved);
    args.filters = filters;
    if (filters.empty())
        throw usage_error{"filter: no filter given"};
    set_outputs(args.out, outputs);
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
    return stats_of(summary, "classify", args.input, args.filters, args.out, args.common);
}

/*! \brief The k-mer options of dedup_files, as dedup's command line takes them. */
struct dedup_kmer_options
{
    unsigned k{31};
    bool canonical{true};
    std::string type{"qf"};
    std::optional<double> fpr;
    std::string expected;
    std::string sampling{"all"};
    unsigned shards{0};
    std::uint64_t seed{default_hash_seed};
    double max_load{0.9};
};

std::string dedup_files(std::vector<std::string> const & inputs, bool const paired,
                        bool const interleaved, file_outputs const & outputs,
                        dedup_kmer_options const & kmer, double const min_hit_fraction,
                        std::uint64_t const min_count, bool const exact, bool const prefilter,
                        std::string const & save_filter, int const compression_level,
                        unsigned const threads, std::string const & max_memory,
                        std::string const & command_line)
{
    dedup_args args;
    start_run(args, {"dedup", max_memory, threads, command_line}, inputs, paired, interleaved);
    set_outputs(args.out, outputs);
    args.out.min_hit_fraction = min_hit_fraction;
    args.out.min_count = min_count;
    args.out.compression_level = compression_level;
    filter_args & f = args.filter;
    f.k = kmer.k;
    f.canonical = kmer.canonical;
    f.type = parse_filter_type(kmer.type);
    f.fpr = kmer.fpr.value_or(exact ? 0.0 : 0.001); // as dedup's command line defaults it
    f.shards = kmer.shards;
    f.seed = kmer.seed;
    f.max_load = kmer.max_load;
    parse_expected(kmer.expected, f);
    parse_sampling(kmer.sampling, f);
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
    return stats_of(summary, "dedup", args.input, saved, out, args.common);
}

} // namespace

void register_files(py::module_ & m)
{
    m.attr("_DEFAULT_SEED") = default_hash_seed;
    m.def(
        "_classify_files",
        [](std::vector<std::string> const & filters, std::vector<std::string> const & inputs,
           bool const paired, bool const interleaved, std::vector<std::string> const & out,
           double const min_hit_fraction, std::uint64_t const min_hits,
           std::uint64_t const min_count, bool const exact_hits, bool const strict,
           int const compression_level, unsigned const threads, std::string const & max_memory,
           std::string const & command_line)
        {
            file_outputs const o{out.at(0), out.at(1), out.at(2), out.at(3),
                                 out.at(4), out.at(5), out.at(6), out.at(7)};
            return classify_files(filters, inputs, paired, interleaved, o, min_hit_fraction,
                                  min_hits, min_count, exact_hits, strict, compression_level,
                                  threads, max_memory, command_line);
        },
        "classify_files' engine: run_classify; the --stats text (see ksieve.classify_files).");
    m.def(
        "_dedup_files",
        [](std::vector<std::string> const & inputs, bool const paired, bool const interleaved,
           std::vector<std::string> const & out, unsigned const k, bool const canonical,
           std::string const & type, std::optional<double> const fpr, std::string const & expected,
           std::string const & sampling, unsigned const shards, std::uint64_t const seed,
           double const max_load, double const min_hit_fraction, std::uint64_t const min_count,
           bool const exact, bool const prefilter, std::string const & save_filter,
           int const compression_level, unsigned const threads, std::string const & max_memory,
           std::string const & command_line)
        {
            file_outputs const o{out.at(0), out.at(1), out.at(2), out.at(3),
                                 out.at(4), out.at(5), out.at(6), out.at(7)};
            dedup_kmer_options const kmer{k,        canonical, type, fpr,     expected,
                                          sampling, shards,    seed, max_load};
            return dedup_files(inputs, paired, interleaved, o, kmer, min_hit_fraction, min_count,
                               exact, prefilter, save_filter, compression_level, threads,
                               max_memory, command_line);
        },
        "dedup_files' engine: run_dedup; the --stats text (see ksieve.dedup_files).");
}

} // namespace ksieve::python
