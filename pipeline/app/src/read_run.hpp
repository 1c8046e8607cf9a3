#pragma once
// read_run: the skeleton of the commands that stream reads (classify, dedup, dedup --exact, build;
// internal to the app layer). A command checks its options, makes its filters, then opens the run
// (the input, and every read output where it writes reads), streams its batches through its own
// per-batch work and finishes: progress line, stop request, the summary; with read outputs also
// --stats and --multiqc, every output committed at once. Only the checks, the filters, the
// per-batch work and what the run leaves (read outputs or a filter) differ between the commands.
#include "app_detail.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ksieve::detail
{

// The paths of the read outputs of `out` (--novel, --known, their mates, --report, --stats,
// --multiqc), in that order; an empty path is an output not asked for.
[[nodiscard]] std::vector<std::string> read_output_paths(classify_output_args const & out);

// One run of a command that streams reads. Thread safety: one thread; stream()'s work runs as
// run_stream says.
class read_run
{
public:
    // The run of `command` ("classify", "dedup", "build"); its clock starts now.
    read_run(char const * command, common_args const & common)
        : command_{command}, common_{common}, t0_{std::chrono::steady_clock::now()}
    {
    }

    // Open `input` and the read outputs of `out` (labels: a labeled filter's table, or null), and
    // start the summary of a run on `threads` threads. \throws io_error, usage_error
    void open(input_args const & input, io::reader_options const & reading,
              classify_output_args const & out, unsigned threads,
              label_table const * labels = nullptr);

    // Open `input` for a run without read outputs (build), on `threads` threads. Called again, the
    // run goes on with the next input (the summary adds up). \throws io_error, usage_error
    void open_input(input_args const & input, io::reader_options const & reading, unsigned threads);

    // The summary, which the writer keeps up to date (after open()).
    [[nodiscard]] run_summary & summary() noexcept { return summary_; }

    // Process every batch with work(item) on the calling thread, or with work(item, worker) on
    // `workers` threads (one batch each at a time); each processed batch goes to the outputs, the
    // summary and the progress line in input order. Then the progress line is erased and a stop
    // request honoured. \throws what work throws, io_error, interrupted_error
    template <typename Work> void stream(Work && work, unsigned const workers = 1)
    {
        // (one line for every input of the run: its rate counts from the first)
        if (!progress_)
            progress_.emplace(command_, common_.quiet);
        progress_line & progress = *progress_;
        auto const write = [this, &progress](work_item const & item)
        {
            if (outputs_)
                outputs_->write(item);
            account(summary_, item);
            progress.update(summary_.records, summary_.known_units, summary_.units, summary_.bases,
                            source_->input_fraction());
        };
        if constexpr (std::is_invocable_v<Work &, work_item &, unsigned>)
            run_stream(*source_, std::forward<Work>(work), write, workers);
        else
            run_stream(*source_, std::forward<Work>(work), write);
        progress.finish();
        throw_if_stop_requested();
    }

    // Finish the outputs, write --stats and --multiqc (`out`: as given, or as the statistics should
    // state the rule; `filters`: the filters the statistics name) and move every output into
    // place, `saved` (a filter file the run wrote, or null) with them. \returns the summary.
    // \throws io_error, interrupted_error
    run_summary finish(classify_output_args const & out, std::vector<std::string> const & inputs,
                       std::vector<std::string> filters, io::output_file * saved = nullptr);
    // Finish a run without read outputs: save `filter` to `path`, honour a stop request, move the
    // file into place. \returns the summary (no novel units), its time taken now. \throws io_error,
    // interrupted_error
    run_summary finish(any_filter const & filter, std::string const & path);

private:
    char const * command_;
    common_args const & common_;
    std::chrono::steady_clock::time_point t0_;
    std::optional<unit_source> source_;
    std::optional<output_set> outputs_;
    std::optional<progress_line> progress_;
    run_summary summary_;
};

} // namespace ksieve::detail
