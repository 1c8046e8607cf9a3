#pragma once
// What the subcommands' source files share (internal to the app layer; not installed):
// - options.cpp: option checks, the filter configuration and reader options they give;
// - sizing.cpp: filters sized from a first pass over the input, made within the memory limit,
// loaded from
//   files, and the warnings about filters holding more k-mers than they were sized for;
// - outputs.cpp: the read outputs of classify and dedup (output_set), the run summary, --stats and
// --multiqc;
// - read_run.hpp / read_run.cpp: the skeleton of the commands that stream reads (classify, dedup,
//   dedup --exact, build);
// - cmd_build.cpp, cmd_classify.cpp, cmd_dedup.cpp, cmd_combine.cpp (merge, intersect, subtract),
//   cmd_info.cpp: one subcommand each.
#include <ksieve/app/commands.hpp>
#include <ksieve/app/runtime.hpp>
#include <ksieve/engine/dedup_budget.hpp>
#include <ksieve/engine/engine.hpp>
#include <ksieve/engine/key_pieces.hpp>
#include <ksieve/engine/stream.hpp>
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/io/io.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ksieve::detail
{

// Whether an output path means standard output.
[[nodiscard]] inline bool is_stdout(std::string const & path) noexcept
{
    return path == "-" || path == "/dev/stdout";
}

// 'a', 'b', 'c', 'd' and N more: input names in a message.
[[nodiscard]] inline std::string quoted_names(std::vector<std::string> const & names)
{
    std::string s;
    for (std::size_t i = 0; i < names.size() && i < 4; ++i)
        s += (i == 0 ? "'" : ", '") + names[i] + "'";
    if (names.size() > 4)
        s += " and " + std::to_string(names.size() - 4) + " more";
    return s;
}

// --- options.cpp

// The rule of classify (--min-count, --min-hit-fraction, --min-hits) and of dedup (no --min-hits).
[[nodiscard]] decision_rule classify_rule(classify_output_args const & out) noexcept;
[[nodiscard]] decision_rule dedup_rule(classify_output_args const & out) noexcept;

// Whether the outputs need exact hit counts (--report, --exact-hits): every k-mer is then looked
// up.
[[nodiscard]] inline bool exact_hits_asked(classify_output_args const & out) noexcept
{
    return !out.report.empty() || out.exact_hits;
}

// The checks of each command's options, before any input is read. \throws usage_error
void check_build_options(build_args const & args);
void check_classify_options(classify_args const & args);
void check_dedup_options(dedup_args const & args);

// Refuse two outputs on one path (they would overwrite each other) and outputs into a directory
// that does not exist or cannot be written (found before any work is done, not at the end).
// outputs: (option, path); an empty path is not written. \throws usage_error, io_error
void check_output_paths(std::vector<std::pair<std::string, std::string>> const & outputs);
// The read outputs' options that only make sense together (--novel2 needs --novel, ...) and their
// paths, with the command's `other` outputs (such as --save-filter), all compared with each other
// (check_output_paths). \throws usage_error, io_error
void check_read_outputs(classify_output_args const & a, bool paired,
                        std::vector<std::pair<std::string, std::string>> const & other = {});
// A usage error for a filter output (`option` names it) whose name ends with a compression suffix.
void check_filter_output_name(std::string const & option, std::string const & path);

// An output that is also an input (or a filter read by the run) would replace it: refuse before
// reading. \throws usage_error
void check_outputs_are_not_inputs(std::vector<std::string> const & outputs,
                                  std::vector<std::string> const & inputs);

// The filter that the options of build or dedup describe (expected 0: not given).
[[nodiscard]] filter_config make_config(filter_args const & f);

// The reader options of the commands that stream reads.
// keep_raw false: for readers of sequences only (see io::reader_options::keep_raw).
[[nodiscard]] io::reader_options reader_opts(unsigned threads, bool keep_raw = true);

// --- sizing.cpp

// The distinct k-mers of the inputs (HyperLogLog over all hashed keys, with a margin), for a filter
// of `type` sized from a first pass; `command` completes the error about an input that cannot be
// read twice ("built from", "for dedup of"). \throws usage_error if an input is not a regular file.
[[nodiscard]] std::uint64_t first_pass_expected(input_args const & input, kmer_params const & kmer,
                                                unsigned threads, filter_type type,
                                                char const * command, bool quiet);

// make_filter, with a filter too large for the memory limit refused before it is allocated, naming
// what sized it (expected_given: --expected, else the k-mers counted in the input). \throws error
[[nodiscard]] std::unique_ptr<any_filter> make_filter_within_memory(filter_config const & cfg,
                                                                    bool expected_given);

// The filters of `paths`, loaded (and verified) in order; on_load(filter, path) runs after each one
// is loaded, before the next one is. \throws error
struct loaded_filters
{
    std::vector<std::unique_ptr<any_filter>> owned;
    std::vector<any_filter const *> views; // views[i] = owned[i].get()
};
[[nodiscard]] loaded_filters
load_filters(std::vector<std::string> const & paths, load_options const & options,
             std::function<void(any_filter &, std::string const &)> const & on_load);

// A filter whose estimated false-positive rate is far above its target (saturation_factor) calls
// nearly every read known: a warning, or with `strict` an error. \throws error
void check_saturation(any_filter const & f, std::string const & name, bool strict);

// The one check of a filter made by the run (build, dedup) against the rate asked of it: a warning
// on stderr when it took so many more keys (`keys`: "k-mers", "sequences") than it was sized for
// that its estimated false-positive rate is above 1.5 x `asked` (`what` names it); with `strict`,
// above saturation_factor x `asked`, that text as an error instead. (A loaded filter is checked by
// check_saturation.) \throws error
void warn_if_overgrown(any_filter const & filter, double asked, std::string const & what,
                       char const * keys = "k-mers", bool strict = false);
// A warning when the result of a set operation (its stats) has an estimated false-positive rate
// above 1.5x the inputs' target (fingerprints narrower than its contents need).
void warn_if_combined_above_target(filter_stats const & s, double target,
                                   std::string const & output);

// --- cmd_build_labels.cpp

// The label options of build (--label, --label-by, --label-map). \throws usage_error
void check_label_options(build_args const & args);
// The k-mers of each unit of a batch that build inserted (`kmers`, one per unit) as its results.
void set_kmer_counts(work_item & item, std::span<std::uint64_t const> kmers);
class read_run;
// build of a labeled filter (args.labeled()) of configuration `cfg` (sized for all its inputs), as
// `run`. \throws error
run_summary run_labeled_build(build_args const & args, filter_config const & cfg, unsigned threads,
                              read_run & run);

// --- outputs.cpp

// A finished output (under its temporary name) and how to move it into place.
struct pending_output
{
    std::string path;             // as given: "-" and devices are written in place, nothing to move
    std::function<void()> commit; // renames the temporary over path (\throws io_error)
};

// The optional outputs of classify / dedup (--novel, --known, their mates, --report), written in
// input order by the writer thread. Each is written under a temporary name and moved into place by
// commit_all().
class output_set
{
public:
    // Opens every output given in `a`; `labels`: the labeled filter's (report column, --split-by-
    // label), or null. \throws usage_error (inconsistent options), io_error
    output_set(classify_output_args const & a, unit_source & src, unsigned threads, bool paired,
               label_table const * labels = nullptr);
    output_set(output_set const &) = delete;
    output_set & operator=(output_set const &) = delete;
    ~output_set();

    // The records of a classified batch, each to the output of its class, and its rows of the
    // report.
    void write(work_item const & item);
    // Flush and close every output under its temporary name (nothing committed yet). \throws
    // io_error
    void finish();
    // The finished outputs, to be moved into place with the command's others (commit_all).
    void add_to(std::vector<pending_output> & pending);

private:
    bool paired_;
    std::array<std::string, 5> paths_; // novel, known, novel2, known2, report
    io::seq_format format_;
    std::array<std::unique_ptr<io::writer>, 4> writers_; // novel, known, novel2, known2
    std::unique_ptr<io::text_output> report_; // compressed by its name, like the read outputs
    label_table const * labels_{nullptr};
    // --split-by-label: per label, then ambiguous (mate 1, mate 2 where given), with their paths
    std::vector<std::unique_ptr<io::writer>> split1_, split2_;
    std::vector<std::string> split_paths1_, split_paths2_;
};

// Refuse a --split-by-label pattern without {label} exactly once in its file name (the last path
// component), so that every file it names is inside the pattern's directory. \throws usage_error
void check_split_pattern(std::string const & option, std::string const & pattern);

// The paths of --split-by-label PATTERN: {label} replaced by each label, then by "ambiguous".
// \throws usage_error (check_split_pattern), format_error for a label outside the name rule
[[nodiscard]] std::vector<std::string> split_paths(std::string const & pattern,
                                                   std::vector<std::string> const & labels);

// Move every finished output into place, or none: every destination is checked before the first
// rename (a directory in its place, its directory gone), each file replaced is kept under a second
// name (a hard link) until all renames succeeded, and a failed rename puts back every output
// already moved (the files they replaced, or no file). Outputs not moved lose their temporaries
// when they are destroyed. \throws io_error naming the output that could not be moved
void commit_all(std::vector<pending_output> const & outputs);

// Add a classified batch to the summary.
void account(run_summary & s, work_item const & item);

// What the --stats and --multiqc files of a classify or dedup run say besides its summary.
struct run_context
{
    std::string command; // classify or dedup
    std::vector<std::string> const * inputs;
    std::vector<std::string> filters; // classify: -f; dedup: --save-filter if any
};

// The text of the --stats file of a finished classify or dedup run (what read_run::finish
// writes), for callers that want the statistics without the file (the Python module).
[[nodiscard]] std::string stats_text(run_summary const & summary, run_context const & context,
                                     classify_output_args const & out, common_args const & common);

// Seconds since t0.
[[nodiscard]] double seconds_since(std::chrono::steady_clock::time_point t0);

// --- cmd_dedup_exact.cpp

// The bytes that a growing quotient filter's tables may take in dedup (0: no limit, or not a
// growing filter): the memory limit less what is charged besides those tables (the prefilter); the
// default limit's reserve counts every core, not -t, so that the outputs are the same for any -t.
[[nodiscard]] std::uint64_t dedup_budget_bytes(any_filter const & filter, bool growing);
// Every output of dedup, compared with every other and with the inputs, before any work (also
// before the first pass of a Bloom or cuckoo filter). \throws usage_error, io_error
void check_dedup_outputs(dedup_args const & args);
// The warning, once, that dedup reached its budget at read (or pair) `unit`, counted from 1.
void warn_dedup_budget(std::uint64_t budget, std::uint64_t unit);
// What the budget did, into the summary (--stats): the budget's bytes, the keys forgotten, the
// first unit (from 1) that saw forgetting or sampling (0: none), the sample's depth.
void note_budget(run_summary & summary, std::uint64_t budget_bytes, dedup_budget const & budget,
                 std::uint64_t forgetting_from_unit);

// The usage error for an option of k-mer dedup given to dedup --exact (the command line refuses
// one given at all, run_dedup_exact one whose value is not the default). \throws usage_error
[[noreturn]] void refuse_for_exact(std::string const & option);

// dedup --exact (args.exact): a read (or pair) is known iff its sequence was seen in an earlier
// one. \throws usage_error for options of k-mer dedup that do not apply; error as run_dedup
[[nodiscard]] run_summary run_dedup_exact(dedup_args const & args);

} // namespace ksieve::detail
