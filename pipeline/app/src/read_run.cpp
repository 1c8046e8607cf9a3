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
    open_input(input, reading, threads);
    outputs_.emplace(out, *source_, threads, source_->paired(), labels);
}

void read_run::open_input(input_args const & input, io::reader_options const & reading,
                          unsigned const threads)
{
    source_.emplace(input, reading);
    summary_.threads = threads;
    summary_.paired = summary_.paired || source_->paired();
}

run_summary read_run::finish(any_filter const & filter, std::string const & path)
{
    io::output_file out{path};
    filter.save(out.write_path());
    throw_if_stop_requested();
    out.commit();
    summary_.novel_units = summary_.novel_records = 0;
    summary_.seconds = seconds_since(t0_);
    return summary_;
}

} // namespace ksieve::detail
