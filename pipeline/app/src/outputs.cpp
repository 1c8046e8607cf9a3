// The outputs of the commands that classify reads: the read files and the per-read report
// (output_set), the run summary, and the --stats and --multiqc JSON files.
#include "app_detail.hpp"
#include "platform_app.hpp"
#include "read_run.hpp"

#include <ksieve/filters/common/labels.hpp>
#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <iostream>
#include <span>

#include <sys/stat.h>
#include <unistd.h>

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

std::string multiqc_general_path(std::string const & path)
{
    if (path.empty() || detail::is_stdout(path) || io::is_kernel_path(path))
        return {};
    std::string const tag = "_mqc.json";
    std::size_t const name = path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1;
    std::size_t const at = path.rfind(tag);
    if (at == std::string::npos || at < name)
        return path + "_general_mqc.json";
    return path.substr(0, at) + "_general" + path.substr(at);
}

namespace detail
{

namespace
{

// The read outputs of `a` and the files about the run, as (option, path).
std::vector<std::pair<std::string, std::string>> named_outputs(classify_output_args const & a)
{
    return {{"--novel", a.novel},    {"--known", a.known},   {"--novel2", a.novel2},
            {"--known2", a.known2},  {"--report", a.report}, {"--stats", a.stats},
            {"--multiqc", a.multiqc}};
}

} // namespace

void check_read_outputs(classify_output_args const & a, bool const paired,
                        std::vector<std::pair<std::string, std::string>> const & other)
{
    if (!a.novel2.empty() && a.novel.empty())
        throw usage_error{"--novel2 needs --novel"};
    if (!a.known2.empty() && a.known.empty())
        throw usage_error{"--known2 needs --known"};
    if ((!a.novel2.empty() || !a.known2.empty()) && !paired)
        throw usage_error{"--novel2/--known2 need --paired or --interleaved input"};
    std::vector<std::pair<std::string, std::string>> outputs = named_outputs(a);
    for (auto const & [option, path] : std::span{outputs}.first(4)) // the read files
    {
        std::string lower = path;
        for (char & c : lower)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (!is_stdout(path) &&
            io::hts_format(io::format_from_extension(path, io::seq_format::fastq)) &&
            io::names_compression(path) && !lower.ends_with(".gz") && !lower.ends_with(".bgz"))
            throw usage_error{
                option + " '" + path +
                "': SAM, BAM and CRAM outputs can only be gzip-compressed (use .sam.gz, .bam "
                "or .cram)"};
    }
    outputs.insert(outputs.begin(), other.begin(), other.end());
    outputs.emplace_back("--multiqc", multiqc_general_path(a.multiqc));
    check_output_paths(outputs);
}

namespace
{

// The text of a JSON output: bytes that are not UTF-8 (in file or sample names) become U+FFFD, so
// that the names stay recognisable; any other failure names the output (`option` `path`). \throws
// io_error
std::string json_text(nlohmann::ordered_json const & j, std::string const & option,
                      std::string const & path)
{
    try
    {
        return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + '\n';
    }
    catch (nlohmann::ordered_json::exception const & e)
    {
        throw io_error{option + " '" + path + "': cannot write the JSON: " + e.what()};
    }
}

// Writes `text` to `path` under a temporary name (compressed by its name, like the read outputs);
// the caller commits the returned file (null: nothing to commit, i.e. no path or stdout).
std::unique_ptr<io::text_output>
write_text_output(std::string const & path, std::string const & text, int const compression_level)
{
    if (path.empty())
        return nullptr;
    throw_if_stop_requested();
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
nlohmann::ordered_json stats_json(run_summary const & s, run_context const & c,
                                  classify_output_args const & a, common_args const & common)
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
    if (c.command == "classify")
        j["rescued_units"] = s.rescued_units;
    j["paired"] = s.paired;
    j["known_fraction"] =
        s.units == 0 ? 0.0 : static_cast<double>(s.known_units) / static_cast<double>(s.units);
    j["kmers"] = s.kmers;
    // null: lookups stopped once a read's class was decided (--exact-hits counts them all)
    j["hits"] = s.hits_exact ? nlohmann::ordered_json(s.hits) : nullptr;
    j["bases"] = s.bases;
    j["bases_known"] = s.known_bases;
    j["bases_novel"] = s.novel_bases;
    j["min_hit_fraction"] = a.min_hit_fraction;
    j["min_hits"] = a.min_hits;
    j["min_count"] = a.min_count;
    j["seconds"] = s.seconds;
    j["reads_per_second"] = s.seconds > 0 ? static_cast<double>(s.records) / s.seconds : 0.0;
    j["threads"] = s.threads;
    j["ksieve_version"] = KSIEVE_VERSION;
    // the process's memory: the limit it kept within (--max-memory, or the cgroup's or the
    // machine's memory) and its peak resident set so far
    j["memory_limit"] = process_memory_limit();
    j["peak_resident_bytes"] = app_platform::peak_resident_bytes();
    // how that limit was planned: what each part got
    memory_plan const & plan = current_memory_plan();
    nlohmann::ordered_json parts;
    parts["batch_bases"] = plan.batch_bases;
    parts["output_buffer_bytes"] = plan.output_buffer_bytes;
    parts["split_outputs_bytes"] = plan.split_bytes;
    parts["long_record_piece_bases"] = plan.piece_bases;
    parts["kept_bytes"] = plan.kept;
    parts["filter_tables_bytes"] = memory_limit();
    j["memory_plan"] = parts;
    if (c.command == "dedup")
    {
        j["memory_budget"] = s.memory_budget;
        j["forgotten_kmers"] = s.forgotten_kmers;
        j["kmer_sample"] = 1.0 / static_cast<double>(std::uint64_t{1} << s.kmer_sample_level);
        j["forgetting_from_read"] =
            s.forgetting_from_unit != 0 ? nlohmann::ordered_json(s.forgetting_from_unit) : nullptr;
    }
    if (!s.label_names.empty())
    {
        nlohmann::ordered_json labels = nlohmann::ordered_json::object();
        for (std::size_t l = 0; l < s.label_names.size(); ++l)
            labels[s.label_names[l]] = s.label_reads[l];
        j["labels"] = labels;
    }
    return j;
}

// The --multiqc custom-content JSON: known and novel reads of the sample as a bar graph. MultiQC
// finds files named *_mqc.json and draws one bar per sample (the same id across files joins them
// into one plot).
nlohmann::ordered_json multiqc_json(run_summary const & s, run_context const & c,
                                    classify_output_args const & a)
{
    std::string const sample = a.sample.empty() ? sample_name(*c.inputs) : a.sample;
    bool const labeled = !s.label_names.empty(); // a stacked bar per label, like FastQ Screen's
    std::string const id = "ksieve_" + c.command + (labeled ? "_labels" : "");
    nlohmann::ordered_json j;
    j["id"] = id;
    j["section_name"] = "ksieve " + c.command + (labeled ? ": labels" : "");
    j["description"] =
        labeled ? "Reads classified by ksieve against a labeled filter: known reads by the label "
                  "with the most hits (ambiguous: a tie), and novel reads."
        : c.command == "classify"
            ? "Reads classified by ksieve: known (found in the filters, e.g. host) or novel."
            : "Reads of ksieve dedup: known (duplicates, or above the normalization depth) or "
              "novel (kept).";
    j["plot_type"] = "bargraph";
    j["pconfig"] = {{"id", id + "_plot"},
                    {"title", "ksieve " + c.command + (labeled ? ": reads per label" : ": reads")},
                    {"ylab", "Reads"}};
    nlohmann::ordered_json categories = nlohmann::ordered_json::object();
    nlohmann::ordered_json counts = nlohmann::ordered_json::object();
    for (std::size_t l = 0; l < s.label_names.size(); ++l)
    {
        categories[s.label_names[l]] = {{"name", s.label_names[l]}};
        counts[s.label_names[l]] = s.label_reads[l];
    }
    categories["novel"] = {{"name", "Novel"}};
    counts["novel"] = s.novel_records;
    if (!labeled)
    {
        categories["known"] = {{"name", "Known"}};
        counts["known"] = s.known_records;
    }
    j["categories"] = categories;
    j["data"] = {{sample, counts}};
    return j;
}

// A column of General Statistics: its title, description, format and colour scale (`percent`: of
// 0 to 100%).
nlohmann::ordered_json general_column(std::string const & title, std::string const & description,
                                      char const * const format, char const * const scale,
                                      bool const percent = false)
{
    nlohmann::ordered_json h;
    h["title"] = title;
    h["description"] = description;
    h["format"] = format;
    h["scale"] = scale;
    h["min"] = 0;
    if (percent)
    {
        h["max"] = 100;
        h["suffix"] = "%";
    }
    return h;
}

// The General Statistics file beside --multiqc (multiqc_general_path): the sample's reads, % known,
// % novel and the bases removed (those of the known reads), each column's description naming the
// ksieve version that wrote it.
nlohmann::ordered_json multiqc_general_json(run_summary const & s, run_context const & c,
                                            classify_output_args const & a)
{
    std::string const sample = a.sample.empty() ? sample_name(*c.inputs) : a.sample;
    std::string const by = " (ksieve " + std::string{KSIEVE_VERSION} + " " + c.command + ")";
    bool const dedup = c.command == "dedup";
    auto percent = [&s](std::uint64_t const n) {
        return s.records == 0 ? 0.0
                              : 100.0 * static_cast<double>(n) / static_cast<double>(s.records);
    };
    nlohmann::ordered_json j;
    j["id"] = "ksieve_" + c.command + "_general_stats";
    j["namespace"] = "ksieve " + c.command;
    j["plot_type"] = "generalstats";
    nlohmann::ordered_json const pct_known =
        general_column(dedup ? "% dup" : "% known",
                       (dedup ? "Reads known (duplicates, or above the depth)"
                              : "Reads known (found in the filters, e.g. host)") +
                           by,
                       "{:,.2f}", "OrRd", true);
    nlohmann::ordered_json const pct_novel =
        general_column("% novel", "Reads novel (kept)" + by, "{:,.2f}", "Greens", true);
    std::string const prefix = "ksieve_" + c.command + "_";
    j["pconfig"] = nlohmann::ordered_json::array(
        {{{prefix + "reads",
           general_column("Reads", "Reads (records) read" + by, "{:,.0f}", "Blues")}},
         {{prefix + "percent_known", pct_known}},
         {{prefix + "percent_novel", pct_novel}},
         {{prefix + "bases_removed",
           general_column("Bases removed", "Bases of the known reads" + by, "{:,.0f}",
                          "Purples")}}});
    j["data"] = {{sample,
                  {{prefix + "reads", s.records},
                   {prefix + "percent_known", percent(s.known_records)},
                   {prefix + "percent_novel", percent(s.novel_records)},
                   {prefix + "bases_removed", s.known_bases}}}};
    return j;
}

// The buffer of each of `files` --split-by-label outputs (`buffer`: the plan's for every output):
// many files share the plan's part for them, 128 MiB where the limit is large (at least 64 KiB
// each), else an eighth of the limit, in which a compressed file counts twice (its buffer and its
// compressed bytes), at least 8 KiB each.
std::size_t split_buffer_bytes(std::size_t const files, bool const compressed,
                               std::size_t const buffer)
{
    if (files <= 16)
        return buffer;
    memory_plan const & plan = current_memory_plan();
    std::size_t const share = plan.split_bytes == 0 ? std::size_t{128} << 20 : plan.split_bytes;
    std::size_t const each =
        plan.split_bytes == 0
            ? std::max<std::size_t>(std::size_t{64} << 10, share / files)
            : std::max<std::size_t>(std::size_t{8} << 10, share / (files * (compressed ? 2 : 1)));
    return buffer == 0 || buffer > each ? each : buffer;
}

// Create the directory of a --split-by-label pattern where it is missing. \throws io_error
void make_split_directory(std::string const & pattern)
{
    std::filesystem::path const dir = std::filesystem::path{pattern}.parent_path();
    if (dir.empty() || pattern.starts_with("/dev/"))
        return;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
        throw io_error{"cannot create the directory '" + dir.string() + "' of --split-by-label '" +
                       pattern + "': " + ec.message()};
}

// Where a finished output goes, checked before any output is moved.
struct destination
{
    std::string target; // the file that the rename replaces or makes (empty: written in place)
    std::string aside;  // a second name of the file replaced, until every output is in place
    bool replaces{false};
};

std::string move_error(std::string const & path, std::string const & why)
{
    return "'" + path + "': cannot move the finished output into place: " + why;
}

// The destination of an output given as `path`. \throws io_error if the rename cannot succeed: a
// directory in its place, or its directory gone.
destination check_destination(std::string const & path)
{
    destination d;
    if (path.empty() || is_stdout(path) || io::is_kernel_path(path))
        return d;
    std::string target = io::final_target(path);
    struct stat st
    {
    };
    if (::stat(target.c_str(), &st) == 0)
    {
        if (S_ISDIR(st.st_mode))
            throw io_error{move_error(path, "a directory is in its place")};
        if (!S_ISREG(st.st_mode)) // a FIFO or a device: written in place
            return d;
        d.replaces = true;
    }
    else if (int const e = errno; e != ENOENT)
        throw io_error{move_error(path, std::strerror(e))};
    std::filesystem::path dir = std::filesystem::path{target}.parent_path();
    if (dir.empty())
        dir = ".";
    struct stat ds
    {
    };
    if (::stat(dir.c_str(), &ds) != 0 || !S_ISDIR(ds.st_mode))
        throw io_error{move_error(path, "its directory '" + dir.string() + "' is gone")};
    d.target = std::move(target);
    return d;
}

// A second name (hard link) of the file at `target` beside it; empty where none can be made (a file
// system without hard links).
std::string link_aside(std::string const & target)
{
    for (unsigned n = 0; n < 100; ++n)
    {
        std::string aside =
            target + ".ksieve-old." + std::to_string(::getpid()) + '.' + std::to_string(n);
        if (::link(target.c_str(), aside.c_str()) == 0)
            return aside;
        if (errno != EEXIST)
            break;
    }
    return {};
}

// Undo the first `moved` renames: each file replaced back in place (rename of its second name),
// each new file removed.
void put_back(std::vector<destination> & dest, std::size_t const moved) noexcept
{
    for (std::size_t i = moved; i-- > 0;)
    {
        destination & d = dest[i];
        if (d.target.empty())
            continue;
        if (!d.aside.empty())
        {
            // renamed back, the second name is gone; if that failed, it keeps the file replaced
            (void)::rename(d.aside.c_str(), d.target.c_str());
            d.aside.clear();
        }
        else if (!d.replaces)
            (void)::unlink(d.target.c_str());
    }
}

} // namespace

void check_split_pattern(std::string const & option, std::string const & pattern)
{
    std::string const key = "{label}";
    std::size_t const at = pattern.find(key);
    std::size_t const slash = pattern.rfind('/');
    auto bad = [&](std::string const & why)
    {
        return usage_error{option + " '" + pattern + "': " + why +
                           " (such as by_label/{label}.fq.gz)"};
    };
    if (at == std::string::npos)
        throw bad("the pattern needs {label}");
    if (pattern.find(key, at + 1) != std::string::npos)
        throw bad("the pattern holds {label} more than once");
    if (slash != std::string::npos && at < slash)
        throw bad("{label} must be in the file name, not in a directory");
}

std::vector<std::string> split_paths(std::string const & pattern,
                                     std::vector<std::string> const & labels)
{
    check_split_pattern("--split-by-label", pattern);
    std::string const key = "{label}";
    std::size_t const at = pattern.find(key);
    std::vector<std::string> paths;
    for (std::size_t l = 0; l <= labels.size(); ++l)
    {
        std::string const name = l < labels.size() ? labels[l] : std::string{"ambiguous"};
        // (the labels of a filter follow the rule: checked when it was opened; checked again here,
        // where a name becomes a path)
        if (name != "ambiguous" && !is_label_name(name))
            throw format_error{"label '" + printable_label(name) + "': " + label_name_rule()};
        paths.push_back(pattern.substr(0, at) + name + pattern.substr(at + key.size()));
    }
    return paths;
}

output_set::output_set(classify_output_args const & a, unit_source & src, unsigned const threads,
                       bool const paired, label_table const * const labels)
    : paired_{paired}, labels_{labels}
{
    io::writer_options wo;
    wo.threads = std::max(1u, threads / 2);
    wo.buffer_bytes = current_memory_plan().output_buffer_bytes; // smaller under --max-memory
    wo.compression_level = a.compression_level;
    wo.sam_header = src.sam_header();
    auto open = [&](std::string const & path) -> std::unique_ptr<io::writer>
    { return path.empty() ? nullptr : io::writer::open(path, src.format(), wo); };
    check_read_outputs(a, paired);
    format_ = src.format();
    paths_ = {a.novel, a.known, a.novel2, a.known2, a.report};
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
    for (std::size_t i = 0; i < writers_.size(); ++i)
        writers_[i] = open(paths_[i]);
    if (!a.report.empty())
    {
        report_ = std::make_unique<io::text_output>(
            is_stdout(a.report) ? std::string{"-"} : a.report, wo);
        report_->write(labels_ != nullptr ? "read_id\tkmers\thits\tclass\tlabel\n"
                                          : "read_id\tkmers\thits\tclass\n");
    }
    if (labels_ != nullptr && !a.split_by_label.empty())
    {
        io::writer_options one = wo;
        one.threads = 1; // (one file per label)
        split_paths1_ = split_paths(a.split_by_label, labels_->names);
        if (!a.split_by_label2.empty())
            split_paths2_ = split_paths(a.split_by_label2, labels_->names);
        // one file per label (and mate), besides the inputs and outputs open now
        ensure_open_files(
            split_paths1_.size() + split_paths2_.size(),
            "--split-by-label (" + std::to_string(labels_->names.size()) + " labels and ambiguous" +
                (split_paths2_.empty() ? std::string{")"} : std::string{", two mates)"}));
        one.buffer_bytes =
            split_buffer_bytes(split_paths1_.size() + split_paths2_.size(),
                               io::names_compression(a.split_by_label), one.buffer_bytes);
        one.lean = split_paths1_.size() + split_paths2_.size() > 16;
        make_split_directory(a.split_by_label);
        if (!a.split_by_label2.empty())
            make_split_directory(a.split_by_label2);
        std::vector<std::pair<std::string, std::string>> all = named_outputs(a);
        for (auto const & p : split_paths1_)
            all.emplace_back("--split-by-label", p);
        for (auto const & p : split_paths2_)
            all.emplace_back("--split-by-label2", p);
        check_output_paths(all);
        for (auto const & p : split_paths1_)
            split1_.push_back(io::writer::open(p, src.format(), one));
        for (auto const & p : split_paths2_)
            split2_.push_back(io::writer::open(p, src.format(), one));
    }
}

output_set::~output_set() = default;

void output_set::write(work_item const & item)
{
    if (item.r1.format() != format_)
    {
        format_ = item.r1.format();
        for (auto const & w : writers_)
            if (w != nullptr)
                w->set_input_format(format_);
    }
    for (std::size_t u = 0; u < item.r1.size(); ++u)
    {
        bool const known = item.results[u].known;
        io::writer * const w1 = writers_[known ? 1 : 0].get();
        io::writer * const w2 = writers_[known ? 3 : 2] ? writers_[known ? 3 : 2].get() : w1;
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
            row.append(known ? "\tknown" : "\tnovel");
            if (labels_ != nullptr)
            {
                std::uint32_t const l = item.results[u].label;
                row.push_back('\t');
                row.append(l == unit_result::no_label    ? std::string_view{"-"}
                           : l == unit_result::ambiguous ? std::string_view{"ambiguous"}
                                                         : std::string_view{labels_->names[l]});
            }
            row.push_back('\n');
            report_->appended();
        }
        if (known && !split1_.empty())
        {
            std::uint32_t const l = item.results[u].label;
            std::size_t const i = l == unit_result::ambiguous ? labels_->names.size() : l;
            if (i < split1_.size())
            {
                split1_[i]->write(item.r1[u]);
                if (paired_)
                    (split2_.empty() ? split1_[i] : split2_[i])->write(item.r2[u]);
            }
        }
    }
}

void output_set::finish()
{
    throw_if_stop_requested();
    for (auto const & w : writers_)
        if (w != nullptr)
            w->finish();
    if (report_ != nullptr)
        report_->finish();
    for (auto const * v : {&split1_, &split2_})
        for (auto const & w : *v)
            w->finish();
}

void output_set::add_to(std::vector<pending_output> & pending)
{
    auto add = [&pending](std::string const & path, auto * const f)
    {
        if (f != nullptr)
            pending.push_back({path, [f] { f->commit(); }});
    };
    for (std::size_t i = 0; i < writers_.size(); ++i)
        add(paths_[i], writers_[i].get());
    add(paths_[4], report_.get());
    for (std::size_t i = 0; i < split1_.size(); ++i)
        add(split_paths1_[i], split1_[i].get());
    for (std::size_t i = 0; i < split2_.size(); ++i)
        add(split_paths2_[i], split2_[i].get());
}

void commit_all(std::vector<pending_output> const & outputs)
{
    std::vector<destination> dest;
    dest.reserve(outputs.size());
    for (pending_output const & o : outputs)
        dest.push_back(check_destination(o.path));
    for (destination & d : dest)
        if (d.replaces)
            d.aside = link_aside(d.target);
    auto drop_asides = [&dest]() noexcept
    {
        for (destination const & d : dest)
            if (!d.aside.empty())
                (void)::unlink(d.aside.c_str());
    };
    std::size_t moved = 0;
    try
    {
        for (; moved < outputs.size(); ++moved)
            outputs[moved].commit();
    }
    catch (...)
    {
        put_back(dest, moved);
        drop_asides();
        throw;
    }
    drop_asides();
}

void account(run_summary & s, work_item const & item)
{
    std::uint64_t const per_unit = item.r2.empty() ? 1 : 2;
    for (std::size_t u = 0; u < item.r1.size(); ++u)
    {
        auto const & r = item.results[u];
        std::uint64_t const bases =
            item.r1[u].seq.size() + (item.r2.empty() ? 0 : item.r2[u].seq.size());
        ++s.units;
        s.records += per_unit;
        s.kmers += r.kmers;
        s.hits += r.hits;
        if (r.known)
        {
            ++s.known_units;
            s.rescued_units += r.rescued ? 1 : 0;
            s.known_records += per_unit;
            s.known_bases += bases;
            if (!s.label_reads.empty())
                s.label_reads[std::min<std::size_t>(
                    r.label == unit_result::ambiguous ? s.label_reads.size() - 1 : r.label,
                    s.label_reads.size() - 1)] += per_unit;
        }
        else
        {
            ++s.novel_units;
            s.novel_records += per_unit;
            s.novel_bases += bases;
        }
    }
    s.bases += item.r1.bases() + item.r2.bases();
}

run_summary read_run::finish(classify_output_args const & out,
                             std::vector<std::string> const & inputs,
                             std::vector<std::string> filters, io::output_file * const saved)
{
    run_context const context{command_, &inputs, std::move(filters)};
    outputs_->finish();
    summary_.seconds = seconds_since(t0_);
    std::string const general = multiqc_general_path(out.multiqc);
    std::pair<std::string, std::string> const texts[] = {
        // (path, text)
        {out.stats, stats_text(summary_, context, out, common_)},
        {out.multiqc, json_text(multiqc_json(summary_, context, out), "--multiqc", out.multiqc)},
        {general, json_text(multiqc_general_json(summary_, context, out), "--multiqc", general)}};
    std::vector<std::unique_ptr<io::text_output>> files;
    for (auto const & [path, text] : texts)
        files.push_back(write_text_output(path, text, out.compression_level));
    // Every output is complete: only now are they moved into place, all of them or none.
    throw_if_stop_requested();
    std::vector<pending_output> pending;
    outputs_->add_to(pending);
    if (saved != nullptr)
        pending.push_back({saved->path(), [saved] { saved->commit(); }});
    for (std::size_t i = 0; i < files.size(); ++i)
        if (files[i] != nullptr)
            pending.push_back({texts[i].first, [f = files[i].get()] { f->commit(); }});
    commit_all(pending);
    return summary_;
}

std::string stats_text(run_summary const & summary, run_context const & context,
                       classify_output_args const & out, common_args const & common)
{
    return json_text(stats_json(summary, context, out, common), "--stats", out.stats);
}

double seconds_since(std::chrono::steady_clock::time_point const t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace detail

} // namespace ksieve
