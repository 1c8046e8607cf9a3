// The outputs of the commands that classify reads: the read files and the per-read report (output_set), the
// run summary, and the --stats and --multiqc JSON files.
#include "app_detail.hpp"

#include <ksieve/filters/error.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <charconv>
#include <filesystem>
#include <initializer_list>
#include <iostream>

namespace ksieve
{

std::string sample_name(std::vector<std::string> const & inputs)
{
    if (inputs.empty() || inputs.front() == "-")
        return "stdin";
    std::string name = std::filesystem::path{inputs.front()}.filename().string();
    auto strip = [&](std::initializer_list<char const *> const suffixes)
    {
        for (char const * const suffix : suffixes)
        {
            std::string const x{suffix};
            if (name.size() > x.size() && name.compare(name.size() - x.size(), x.size(), x) == 0)
            {
                name.resize(name.size() - x.size());
                return;
            }
        }
    };
    strip({".gz", ".bgz", ".zst", ".xz", ".bz2"});
    strip({".fastq", ".fq", ".fasta", ".fa", ".fna", ".sam", ".bam", ".cram"});
    strip({"_R1_001", "_R2_001", "_R1", "_R2", ".R1", ".R2", "_1", "_2"});
    return name.empty() ? std::string{"sample"} : name;
}

namespace detail
{

// The options of the read outputs that only make sense together, and their paths.
void check_read_outputs(classify_output_args const & a, bool const paired)
{
    if (!a.novel2.empty() && a.novel.empty())
        throw usage_error{"--novel2 needs --novel"};
    if (!a.known2.empty() && a.known.empty())
        throw usage_error{"--known2 needs --known"};
    if ((!a.novel2.empty() || !a.known2.empty()) && !paired)
        throw usage_error{"--novel2/--known2 need --paired or --interleaved input"};
    check_output_paths({{"--novel", a.novel},
                        {"--known", a.known},
                        {"--novel2", a.novel2},
                        {"--known2", a.known2},
                        {"--report", a.report},
                        {"--stats", a.stats},
                        {"--multiqc", a.multiqc}});
}

namespace
{

// Writes `text` to `path` under a temporary name (compressed by its name, like the read outputs); the caller
// commits the returned file (null: nothing to commit, i.e. no path or stdout).
std::unique_ptr<io::text_output> write_text_output(std::string const & path, std::string const & text,
                                                   int const compression_level)
{
    if (path.empty())
        return nullptr;
    throw_if_interrupted();
    if (is_stdout(path))
    {
        std::cout << text << std::flush;
        return nullptr;
    }
    io::writer_options o;
    o.compression_level = compression_level;
    auto out = std::make_unique<io::text_output>(path, o);
    out->write(text);
    out->finish();
    return out;
}

// The --stats JSON.
std::string stats_json(run_summary const & s, run_context const & c, classify_output_args const & a,
                       common_args const & common)
{
    nlohmann::ordered_json j;
    j["command"] = c.command;
    j["sample"] = a.sample.empty() ? sample_name(*c.inputs) : a.sample;
    j["inputs"] = *c.inputs;
    j["filters"] = c.filters;
    j["command_line"] = common.command_line;
    j["reads"] = s.records;
    j["known"] = s.known_records;
    j["novel"] = s.novel_records;
    j["units"] = s.units;
    j["known_units"] = s.known_units;
    j["novel_units"] = s.novel_units;
    j["paired"] = s.paired;
    j["known_fraction"] =
        s.units == 0 ? 0.0 : static_cast<double>(s.known_units) / static_cast<double>(s.units);
    j["kmers"] = s.kmers;
    if (s.hits_exact)
        j["hits"] = s.hits;
    else
        j["hits"] = nullptr; // lookups stopped once a read's class was decided: --exact-hits counts them all
    j["bases"] = s.bases;
    j["min_hit_fraction"] = a.min_hit_fraction;
    j["min_hits"] = a.min_hits;
    j["min_count"] = a.min_count;
    j["seconds"] = s.seconds;
    j["reads_per_second"] = s.seconds > 0 ? static_cast<double>(s.records) / s.seconds : 0.0;
    j["threads"] = s.threads;
    j["ksieve_version"] = KSIEVE_VERSION;
    return j.dump(2) + '\n';
}

// The --multiqc custom-content JSON: known and novel reads of the sample as a bar graph. MultiQC finds files
// named *_mqc.json and draws one bar per sample (the same id across files joins them into one plot).
std::string multiqc_json(run_summary const & s, run_context const & c, classify_output_args const & a)
{
    std::string const sample = a.sample.empty() ? sample_name(*c.inputs) : a.sample;
    nlohmann::ordered_json j;
    j["id"] = "ksieve_" + c.command;
    j["section_name"] = "ksieve " + c.command;
    j["description"] =
        c.command == "classify"
            ? "Reads classified by ksieve: known (found in the filters, e.g. host) or novel."
            : "Reads of ksieve dedup: known (duplicates, or above the normalization depth) or novel (kept).";
    j["plot_type"] = "bargraph";
    j["pconfig"] = {{"id", "ksieve_" + c.command + "_plot"},
                    {"title", "ksieve " + c.command + ": reads"},
                    {"ylab", "Reads"}};
    j["categories"] = {{"novel", {{"name", "Novel"}}}, {"known", {{"name", "Known"}}}};
    j["data"] = {{sample, {{"novel", s.novel_records}, {"known", s.known_records}}}};
    return j.dump(2) + '\n';
}

} // namespace

output_set::output_set(classify_output_args const & a, unit_source & src, unsigned const threads,
                       bool const paired)
    : paired_{paired}
{
    io::writer_options wo;
    wo.threads = std::max(1u, threads / 2);
    wo.compression_level = a.compression_level;
    wo.sam_header = src.sam_header();
    auto open = [&](std::string const & path) -> std::unique_ptr<io::writer>
    { return path.empty() ? nullptr : io::writer::open(path, src.format(), wo); };
    check_read_outputs(a, paired);
    format_ = src.format();
    for (std::string const * const p : {&a.novel, &a.known, &a.novel2, &a.known2})
    {
        if (p->empty())
            continue;
        if (io::hts_format(io::format_from_extension(*p, format_)))
            src.require_same_dictionary();
        // no format extension (or stdout): the first input's format, whatever the later inputs are
        if (io::format_from_extension(*p, io::seq_format::fasta) !=
            io::format_from_extension(*p, io::seq_format::fastq))
            src.require_same_format(*p);
    }
    novel_ = open(a.novel);
    known_ = open(a.known);
    novel2_ = open(a.novel2);
    known2_ = open(a.known2);
    if (!a.report.empty())
    {
        report_ = std::make_unique<io::text_output>(is_stdout(a.report) ? std::string{"-"} : a.report, wo);
        report_->write("read_id\tkmers\thits\tclass\n");
    }
}

output_set::~output_set() = default;

std::array<io::writer *, 4> output_set::writers() const noexcept
{
    return {novel_.get(), known_.get(), novel2_.get(), known2_.get()};
}

void output_set::write(work_item const & item)
{
    if (item.r1.format() != format_)
    {
        format_ = item.r1.format();
        for (io::writer * const w : writers())
            if (w != nullptr)
                w->set_input_format(format_);
    }
    for (std::size_t u = 0; u < item.r1.size(); ++u)
    {
        bool const known = item.results[u].known;
        io::writer * const w1 = known ? known_.get() : novel_.get();
        io::writer * const w2 = known ? (known2_ ? known2_.get() : w1) : (novel2_ ? novel2_.get() : w1);
        if (w1 != nullptr)
            w1->write(item.r1[u]);
        if (paired_ && w2 != nullptr)
            w2->write(item.r2[u]);
        if (report_ != nullptr)
        {
            std::string & row = report_->buffer();
            char digits[24];
            row.append(item.r1[u].name);
            for (std::uint32_t const v : {item.results[u].kmers, item.results[u].hits})
            {
                row.push_back('\t');
                row.append(digits, std::to_chars(digits, digits + sizeof digits, v).ptr);
            }
            row.append(known ? "\tknown\n" : "\tnovel\n");
            report_->appended();
        }
    }
}

void output_set::finish()
{
    throw_if_interrupted();
    for (io::writer * const w : writers())
        if (w != nullptr)
            w->finish();
    if (report_ != nullptr)
        report_->finish();
}

void output_set::commit()
{
    for (io::writer * const w : writers())
        if (w != nullptr)
            w->commit();
    if (report_ != nullptr)
        report_->commit();
}

run_summary start_summary(unsigned const threads, unit_source const & source)
{
    run_summary summary;
    summary.threads = threads;
    summary.paired = source.paired();
    return summary;
}

void account(run_summary & s, work_item const & item)
{
    std::uint64_t const per_unit = item.r2.empty() ? 1 : 2;
    for (std::size_t u = 0; u < item.r1.size(); ++u)
    {
        auto const & r = item.results[u];
        ++s.units;
        s.records += per_unit;
        s.kmers += r.kmers;
        s.hits += r.hits;
        if (r.known)
        {
            ++s.known_units;
            s.known_records += per_unit;
        }
        else
        {
            ++s.novel_units;
            s.novel_records += per_unit;
        }
    }
    s.bases += item.r1.bases() + item.r2.bases();
}

std::function<void(work_item const &)> batch_writer(output_set & outputs, run_summary & summary,
                                                    progress_line & progress, unit_source const & source)
{
    return [&outputs, &summary, &progress, &source](work_item const & item)
    {
        outputs.write(item);
        account(summary, item);
        progress.update(summary.records, summary.known_units, summary.units, summary.bases,
                        source.input_fraction());
    };
}

void finish_read_outputs(output_set & outputs, io::output_file * const saved, run_summary & summary,
                         std::chrono::steady_clock::time_point const t0, run_context const & context,
                         classify_output_args const & out, common_args const & common)
{
    outputs.finish();
    summary.seconds = seconds_since(t0);
    auto const stats =
        write_text_output(out.stats, stats_json(summary, context, out, common), out.compression_level);
    auto const mqc =
        write_text_output(out.multiqc, multiqc_json(summary, context, out), out.compression_level);
    // Every output is complete: only now is any of them renamed into place.
    throw_if_interrupted();
    outputs.commit();
    if (saved != nullptr)
        saved->commit();
    for (auto * f : {stats.get(), mqc.get()})
        if (f != nullptr)
            f->commit();
}

double seconds_since(std::chrono::steady_clock::time_point const t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace detail

} // namespace ksieve
