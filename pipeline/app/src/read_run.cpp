// read_run (read_run.hpp): opening and finishing a run of a command that streams reads.
#include "read_run.hpp"

namespace ksieve::detail
{

std::vector<std::string> read_output_paths(classify_output_args const & out)
{
    return {out.novel, out.known, out.novel2, out.known2, out.report, out.stats, out.multiqc};
}

void read_run::open(input_args const & input, io::reader_options const & reading,
                    classify_output_args const & out, unsigned const threads,
                    label_table const * const labels)
{
    source_.emplace(input, reading);
    outputs_.emplace(out, *source_, threads, source_->paired(), labels);
    summary_.threads = threads;
    summary_.paired = source_->paired();
}

void read_run::open_input(input_args const & input, io::reader_options const & reading,
                          unsigned const threads)
{
    source_.emplace(input, reading);
    summary_.threads = threads;
    summary_.paired = summary_.paired || source_->paired();
}

run_summary read_run::finish(classify_output_args const & out,
                             std::vector<std::string> const & inputs,
                             std::vector<std::string> filters, io::output_file * const saved)
{
    run_context const context{command_, &inputs, std::move(filters)};
    finish_read_outputs(*outputs_, saved, summary_, t0_, context, out, common_);
    return summary_;
}

run_summary read_run::finish()
{
    summary_.seconds = seconds_since(t0_);
    return summary_;
}

} // namespace ksieve::detail
