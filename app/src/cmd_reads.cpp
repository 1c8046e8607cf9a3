// build, classify and dedup: the commands that stream reads.
#include <ksieve/app/commands.hpp>
#include <ksieve/app/runtime.hpp>
#include <ksieve/engine/dedup.hpp>
#include <ksieve/engine/engine.hpp>
#include <ksieve/engine/stream.hpp>
#include <ksieve/filters/error.hpp>
#include <ksieve/filters/hyperloglog.hpp>
#include <ksieve/filters/memory_budget.hpp>
#include <ksieve/filters/sharded_filter.hpp>
#include <ksieve/io/io.hpp>

#include <nlohmann/json.hpp>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <unistd.h>

namespace ksieve
{

namespace
{

// A filter whose estimated false-positive rate is far above its target (a Bloom filter built with too small
// an --expected, say) calls nearly every read known: in host removal that discards every read. A warning, or
// with --strict an error.
void check_saturation(any_filter const & f, std::string const & name, bool const strict)
{
    double const target = f.target_fpr();
    double const estimate = f.stats().estimated_fpr;
    if (!(target > 0.0) || !(estimate > saturation_factor * target))
        return;
    char text[512];
    std::snprintf(
        text, sizeof text,
        "filter '%s' is saturated: its estimated false-positive rate is %.3g, more than %.0fx its target "
        "%.3g (it holds more k-mers than it was sized for), so it calls reads known that are not: "
        "rebuild it with a larger --expected (or without one)",
        name.c_str(), estimate, saturation_factor, target);
    if (strict)
        throw error{text};
    std::fprintf(stderr, "ksieve: warning: %s\n", text);
}

// make_filter, with a filter too large for the memory limit refused before it is allocated, naming what
// sized it.
std::unique_ptr<any_filter> make_filter_within_memory(filter_config const & cfg, bool const expected_given)
{
    try
    {
        return make_filter(cfg);
    }
    catch (memory_limit_error const & e)
    {
        std::string const what =
            expected_given ? "--expected " + std::to_string(cfg.expected)
                           : "the " + std::to_string(cfg.expected) + " distinct k-mers counted in the input";
        throw error{"a filter for " + what + " does not fit in " + format_bytes(memory_limit()) +
                    (memory_limit_is_explicit() ? " (--max-memory)"
                                                : " (the machine's memory; --max-memory sets the limit)") +
                    ": " + e.what()};
    }
}

// classify's rule: --min-count, --min-hit-fraction and --min-hits.
decision_rule classify_rule(classify_output_args const & out) noexcept
{
    return decision_rule{out.min_count, out.min_hit_fraction, out.min_hits};
}

// dedup's rule: --min-count and --min-hit-fraction (dedup has no --min-hits).
decision_rule dedup_rule(classify_output_args const & out) noexcept
{
    return decision_rule{out.min_count, out.min_hit_fraction, 0};
}

void check_classify_options(classify_output_args const & out)
{
    if (!(out.min_hit_fraction > 0.0 && out.min_hit_fraction <= 1.0))
        throw usage_error{"--min-hit-fraction must be in (0, 1], got " +
                          std::to_string(out.min_hit_fraction)};
    if (out.min_count < 1)
        throw usage_error{"--min-count must be at least 1"};
}

void check_filter_options(filter_args const & f)
{
    if (f.k < 1 || f.k > max_k)
        throw usage_error{"-k/--kmer must be in [1, 32], got " + std::to_string(f.k)};
    if (!(f.fpr >= 0.0 && f.fpr < 0.5))
        throw usage_error{"--fpr must be in [0, 0.5), got " + std::to_string(f.fpr)};
    if (f.fpr == 0.0 && f.type != filter_type::quotient)
        throw usage_error{"--fpr 0 (exact mode) needs --type qf"};
    if (f.shards != 0 && !std::has_single_bit(f.shards))
        throw usage_error{"--shards must be a power of two, got " + std::to_string(f.shards)};
    if (f.shards != 0 && std::bit_width(f.shards) - 1 >= 2 * f.k)
        throw usage_error{"--shards " + std::to_string(f.shards) +
                          " is too many for k = " + std::to_string(f.k)};
    if (!(f.max_load > 0.1 && f.max_load < 1.0))
        throw usage_error{"--max-load must be in (0.1, 1)"};
}

// Refuse two outputs on one path (they would overwrite each other) and outputs into a directory that
// does not exist (found before any work is done, not at the end).
void check_output_paths(std::vector<std::pair<std::string, std::string>> const & outputs)
{
    for (std::size_t i = 0; i < outputs.size(); ++i)
    {
        auto const & [opt, path] = outputs[i];
        if (path.empty())
            continue;
        for (std::size_t j = 0; j < i; ++j)
            if (outputs[j].second == path ||
                ((path == "-" || path == "/dev/stdout") &&
                 (outputs[j].second == "-" || outputs[j].second == "/dev/stdout")))
                throw usage_error{outputs[j].first + " and " + opt + " both write to '" + path + "'"};
        if (path == "-" || path.starts_with("/dev/"))
            continue;
        std::filesystem::path const dir = std::filesystem::path{path}.parent_path();
        std::error_code ec;
        if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
            throw io_error{"cannot write '" + path + "': directory '" + dir.string() + "' does not exist"};
        if (::access(dir.empty() ? "." : dir.c_str(), W_OK) != 0)
            throw io_error{"cannot write '" + path + "': directory '" +
                           (dir.empty() ? std::string{"."} : dir.string()) + "' is not writable"};
    }
}

// An output that is also an input (or a filter read by the run) would replace it: refuse before reading.
void check_outputs_are_not_inputs(std::vector<std::string> const & outputs,
                                  std::vector<std::string> const & inputs)
{
    for (auto const & out : outputs)
    {
        std::error_code ec;
        if (out.empty() || out == "-" || !std::filesystem::is_regular_file(out, ec))
            continue;
        for (auto const & in : inputs)
            if (in != "-" && std::filesystem::equivalent(out, in, ec))
                throw usage_error{"'" + out +
                                  "' is both an input and an output of this run; it would be replaced"};
    }
}

filter_config make_config(filter_args const & f)
{
    filter_config cfg;
    cfg.type = f.type;
    cfg.kmer = kmer_params{f.k, f.canonical, hash_id::mix2k_v1, f.seed, f.window};
    cfg.fpr = f.fpr;
    cfg.expected = f.expected;
    // Default (0): 64 shards, fewer for tiny k so that every shard keeps at least 8 key bits.
    cfg.shard_bits = f.shards != 0 ? static_cast<unsigned>(std::bit_width(f.shards) - 1)
                                   : std::min(6u, 2 * f.k > 8 ? 2 * f.k - 8 : 0u);
    cfg.max_load = f.max_load;
    return cfg;
}

io::reader_options reader_opts(unsigned const threads)
{
    io::reader_options o;
    o.threads = threads;
    o.batch_records = 16384;
    o.batch_bases = 2u << 20;
    return o;
}

// The optional outputs of classify / dedup, written in input order by the writer thread.
class output_set
{
public:
    output_set(classify_output_args const & a, unit_source & src, unsigned const threads, bool const paired)
        : paired_{paired}
    {
        io::writer_options wo;
        wo.threads = std::max(1u, threads / 2);
        wo.compression_level = a.compression_level;
        wo.sam_header = src.sam_header();
        auto open = [&](std::string const & path) -> std::unique_ptr<io::writer>
        { return path.empty() ? nullptr : io::writer::open(path, src.format(), wo); };
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
            report_file_ = std::make_unique<io::output_file>(a.report);
            std::string const & wp = report_file_->write_path();
            bool const to_stdout = a.report == "-" || a.report == "/dev/stdout";
            report_ = to_stdout ? stdout : std::fopen(wp.c_str(), "wb");
            if (report_ == nullptr)
                throw io_error{"cannot create report '" + a.report + "'"};
            report_buf_.resize(1 << 20);
            std::setvbuf(report_, report_buf_.data(), _IOFBF, report_buf_.size());
            std::fputs("read_id\tkmers\thits\tclass\n", report_);
        }
    }

    ~output_set()
    {
        if (report_ != nullptr && report_ != stdout)
            std::fclose(report_);
    }

    void write(work_item const & item)
    {
        if (item.r1.format() != format_)
        {
            format_ = item.r1.format();
            for (auto * w : {novel_.get(), known_.get(), novel2_.get(), known2_.get()})
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
                std::string_view const id = item.r1[u].name;
                std::fwrite(id.data(), 1, id.size(), report_);
                std::fprintf(report_, "\t%u\t%u\t%s\n", item.results[u].kmers, item.results[u].hits,
                             known ? "known" : "novel");
            }
        }
    }

    /*! Flush and close every output under its temporary name (nothing committed yet). */
    void finish()
    {
        throw_if_interrupted();
        for (auto * w : {novel_.get(), known_.get(), novel2_.get(), known2_.get()})
            if (w != nullptr)
                w->finish();
        if (report_ != nullptr)
        {
            bool const ok = std::fflush(report_) == 0 && std::ferror(report_) == 0;
            bool const closed = report_ == stdout || std::fclose(report_) == 0;
            report_ = nullptr;
            if (!ok || !closed)
                throw io_error{"cannot write report '" + report_file_->path() + "'"};
        }
    }

    /*! Rename every finished output into place. */
    void commit()
    {
        for (auto * w : {novel_.get(), known_.get(), novel2_.get(), known2_.get()})
            if (w != nullptr)
                w->commit();
        if (report_file_)
            report_file_->commit();
    }

private:
    bool paired_;
    io::seq_format format_;
    std::unique_ptr<io::writer> novel_, known_, novel2_, known2_;
    std::unique_ptr<io::output_file> report_file_;
    std::FILE * report_{nullptr};
    std::vector<char> report_buf_;
};

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

// Writes `text` to `path` under a temporary name; the caller commits the returned file (null: nothing to
// commit, i.e. no path or stdout).
std::unique_ptr<io::output_file> write_text_output(std::string const & path, std::string const & text,
                                                   char const * const what)
{
    if (path.empty())
        return nullptr;
    throw_if_interrupted();
    if (path == "-" || path == "/dev/stdout")
    {
        std::cout << text << std::flush;
        return nullptr;
    }
    auto out = std::make_unique<io::output_file>(path);
    {
        std::ofstream f{out->write_path(), std::ios::binary};
        f << text;
        f.flush();
        if (!f)
            throw io_error{"cannot write " + std::string{what} + " '" + path + "'"};
    }
    return out;
}

struct run_context
{
    std::string command; //!< classify or dedup
    std::vector<std::string> const * inputs;
    std::vector<std::string> filters; //!< classify: -f; dedup: --save-filter if any
};

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

double seconds_since(std::chrono::steady_clock::time_point const t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

// build (and classify with exact hit counts) hash a batch's k-mers at once, unless a record is long (a
// chromosome): then the records are cut into windows (for_each_window: exactly the record's k-mers) and
// hashed in pieces of about one reader batch, so that key memory stays bounded by the batch size instead of
// growing with the longest record.
constexpr std::size_t long_record_window_bases = std::size_t{256} << 10;
constexpr std::size_t long_record_piece_bases = std::size_t{2} << 20;

// fn(keys, owner) for each piece of the batch's k-mers: piece unit w belongs to unit owner[w] of the batch
// (owner empty: piece unit w is unit w); kmers[u] = the k-mers of unit u.
template <typename Fn>
void for_each_key_piece(batch_engine const & engine, work_item const & item, batch_keys & keys,
                        std::vector<std::uint64_t> & kmers, Fn && fn)
{
    std::size_t const n = item.r1.size();
    bool const pairs = !item.r2.empty();
    std::size_t longest = 0;
    for (std::size_t u = 0; u < n; ++u)
        longest = std::max({longest, item.r1[u].seq.size(), pairs ? item.r2[u].seq.size() : std::size_t{0}});
    kmers.assign(n, 0);
    if (longest <= long_record_window_bases)
    {
        engine.extract(item.r1, &item.r2, keys);
        for (std::size_t u = 0; u < n; ++u)
            kmers[u] = keys.count[u];
        fn(keys, std::span<std::size_t const>{});
        return;
    }
    std::vector<sequence_piece> windows;
    std::vector<std::size_t> owner;
    std::size_t bases = 0;
    auto flush = [&]
    {
        engine.extract_windows(windows, keys);
        for (std::size_t w = 0; w < windows.size(); ++w)
            kmers[owner[w]] += keys.count[w];
        fn(keys, std::span<std::size_t const>{owner});
        windows.clear();
        owner.clear();
        bases = 0;
    };
    auto add = [&](std::size_t const u, std::string_view const seq)
    {
        engine.for_each_window(seq, long_record_window_bases,
                               [&](sequence_piece const & w)
                               {
                                   windows.push_back(w);
                                   owner.push_back(u);
                                   bases += w.end - w.begin;
                                   if (bases >= long_record_piece_bases)
                                       flush();
                               });
    };
    for (std::size_t u = 0; u < n; ++u)
    {
        add(u, item.r1[u].seq);
        if (pairs)
            add(u, item.r2[u].seq);
    }
    if (!windows.empty())
        flush();
}

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

run_summary run_classify(classify_args const & args)
{
    auto const t0 = std::chrono::steady_clock::now();
    check_classify_options(args.out);
    if (args.filters.empty())
        throw usage_error{"classify needs at least one -f/--filter"};
    unsigned const threads = resolve_threads(args.common.threads);

    std::vector<std::unique_ptr<any_filter>> owned;
    std::vector<any_filter const *> filters;
    for (auto const & path : args.filters)
    {
        owned.push_back(load_filter(path));
        filters.push_back(owned.back().get());
        if (args.out.min_count > 1 && owned.back()->type() != filter_type::quotient)
            throw usage_error{"--min-count above 1 needs quotient filters; '" + path + "' is a " +
                              std::string{to_string(owned.back()->type())} + " filter"};
    }
    check_query_compatible(filters, args.filters);
    check_parts_complete(filters, args.filters);
    for (std::size_t i = 0; i < filters.size(); ++i)
        check_saturation(*filters[i], args.filters[i], args.out.strict);
    std::vector<std::string> read = args.input.inputs;
    read.insert(read.end(), args.filters.begin(), args.filters.end());
    check_outputs_are_not_inputs({args.out.novel, args.out.known, args.out.novel2, args.out.known2,
                                  args.out.report, args.out.stats, args.out.multiqc},
                                 read);

    unit_source source{args.input, reader_opts(threads)};
    output_set outputs{args.out, source, threads, source.paired()};
    batch_engine engine{filters.front()->kmer(), threads};
    batch_keys keys;
    std::vector<std::uint64_t> kmers, hits;
    std::vector<unit_result> piece_results;
    run_summary summary;
    summary.threads = threads;
    summary.paired = source.paired();
    progress_line progress{"classify", args.common.quiet};
    // Only --report and --stats show hit counts; without them a read's lookups stop once its class is known.
    bool const full_counts = !args.out.report.empty() || args.out.exact_hits;
    summary.hits_exact = full_counts;
    decision_rule const rule = classify_rule(args.out);

    run_stream(
        source,
        [&](work_item & item)
        {
            if (full_counts)
            {
                // long records (chromosomes, contigs) in windows, so that memory stays bounded by the batch
                std::size_t const n = item.r1.size();
                hits.assign(n, 0);
                for_each_key_piece(engine, item, keys, kmers,
                                   [&](batch_keys & piece, std::span<std::size_t const> const owner)
                                   {
                                       engine.query(filters, piece);
                                       engine.decide(piece, rule, piece_results);
                                       for (std::size_t w = 0; w < piece.units(); ++w)
                                           hits[owner.empty() ? w : owner[w]] += piece_results[w].hits;
                                   });
                item.results.resize(n);
                for (std::size_t u = 0; u < n; ++u)
                {
                    auto const c = static_cast<std::uint32_t>(
                        std::min<std::uint64_t>(kmers[u], std::numeric_limits<std::uint32_t>::max()));
                    auto const h = static_cast<std::uint32_t>(std::min<std::uint64_t>(hits[u], c));
                    item.results[u] = unit_result{c, h, rule.known(h, c)};
                }
            }
            else
                engine.classify_early(item.r1, &item.r2, filters, rule, item.results);
        },
        [&](work_item const & item)
        {
            outputs.write(item);
            account(summary, item);
            progress.update(summary.records, summary.known_units, summary.units, summary.bases,
                            source.input_fraction());
        });
    progress.finish();
    outputs.finish();
    summary.seconds = seconds_since(t0);
    run_context const context{"classify", &args.input.inputs, args.filters};
    auto const stats =
        write_text_output(args.out.stats, stats_json(summary, context, args.out, args.common), "stats");
    auto const mqc =
        write_text_output(args.out.multiqc, multiqc_json(summary, context, args.out), "MultiQC file");
    // Every output is complete: only now is any of them renamed into place.
    throw_if_interrupted();
    outputs.commit();
    for (auto * f : {stats.get(), mqc.get()})
        if (f != nullptr)
            f->commit();
    return summary;
}

// build refits a filter of at most build_fit_bytes to its contents; a larger one only where that saves more
// than build_fit_slack of a shard's slots (a rebuild costs a pass over the table, about 40 ns a k-mer; a
// build sized from its first pass ends within about 3% of the fit).
constexpr std::uint64_t build_fit_bytes = std::uint64_t{64} << 20;
constexpr double build_fit_slack = 1.0 / 16;

// The distinct k-mers of the inputs (HyperLogLog over all hashed keys, + 5%; + 2.5% for a quotient filter,
// which build refits to its contents and which grows where the estimate falls short), for a filter sized from
// a first pass. Over all k-mers, also for build --shard: every shard job gets the same estimate, so the parts
// have equal parameters and merge into the filter a full build makes. Only regular files can be read twice.
std::uint64_t first_pass_expected(input_args const & input, kmer_params const & kmer, unsigned const threads,
                                  filter_type const type, char const * const command, bool const quiet)
{
    for (auto const & in : input.inputs)
    {
        std::error_code ec;
        if (in == "-" || !std::filesystem::is_regular_file(in, ec))
            throw usage_error{"a " + std::string{to_string(type)} + " filter " + command + " '" + in +
                              "' (stdin, a pipe or a device) needs --expected N: sizing it from the input "
                              "takes a first pass, and only regular files can be read twice"};
    }
    unit_source source{input, reader_opts(threads)};
    batch_engine engine{kmer, threads, nullptr};
    batch_keys keys;
    std::vector<std::uint64_t> kmers;
    hyperloglog hll;
    progress_line progress{"counting k-mers", quiet};
    std::uint64_t records = 0, bases = 0;
    run_stream(
        source,
        [&](work_item & item)
        {
            for_each_key_piece(engine, item, keys, kmers,
                               [&](batch_keys const & piece, auto const &)
                               {
                                   for (std::size_t u = 0; u < piece.units(); ++u)
                                       for (std::uint32_t j = 0; j < piece.count[u]; ++j)
                                           hll.add(piece.keys[piece.offset[u] + j]);
                               });
        },
        [&](work_item const & item)
        {
            records += item.r1.size() + item.r2.size();
            bases += item.r1.bases() + item.r2.bases();
            progress.update(records, 0, records, bases, source.input_fraction());
        });
    progress.finish();
    double const margin = type == filter_type::quotient ? 1.025 : 1.05; // about 3 and 6 standard errors
    return std::max<std::uint64_t>(1024, static_cast<std::uint64_t>(hll.estimate() * margin));
}

// A filter that took far more k-mers than it was sized for (--expected) answers with a higher false-positive
// rate than asked: a quotient filter grows but keeps its fingerprint width, a Bloom filter fills up (a cuckoo
// filter fails instead). Say so rather than miss the FPR silently.
void warn_if_overgrown(any_filter const & filter, double const asked, std::string const & what)
{
    if (filter.type() == filter_type::cuckoo || asked <= 0.0)
        return;
    filter_stats const s = filter.stats();
    if (s.estimated_fpr <= 1.5 * asked)
        return;
    bool const given = filter.expected() != 0;
    std::fprintf(stderr,
                 "ksieve: warning: %s holds %llu distinct k-mers, more than %s; its estimated false-positive "
                 "rate is %.3g instead of %.3g: give %s\n",
                 what.c_str(), static_cast<unsigned long long>(s.distinct),
                 given ? "the --expected it was sized for"
                       : "the 2^30 k-mers a quotient filter is sized for by default",
                 s.estimated_fpr, asked,
                 given ? "a larger --expected (or leave it out)"
                       : "--expected with the number of distinct k-mers");
}

run_summary run_dedup(dedup_args const & args)
{
    auto const t0 = std::chrono::steady_clock::now();
    check_classify_options(args.out);
    check_filter_options(args.filter);
    if (args.out.min_count > 1 && args.filter.type != filter_type::quotient)
        throw usage_error{"--min-count above 1 needs --type qf"};
    if (args.filter.expected_auto)
        throw usage_error{
            "dedup cannot use --expected auto (it reads its input once): give a number, or leave it out "
            "for a quotient filter, which grows"};
    unsigned const threads = resolve_threads(args.common.threads);
    filter_config cfg = make_config(args.filter);
    // A Bloom or cuckoo filter is sized from a first pass over the input (all its k-mers: an upper bound
    // of those dedup inserts), as in build; a quotient filter grows.
    if (cfg.type != filter_type::quotient && cfg.expected == 0)
        cfg.expected =
            first_pass_expected(args.input, cfg.kmer, threads, cfg.type, "for dedup of", args.common.quiet);
    auto filter = make_filter_within_memory(cfg, args.filter.expected != 0);
    std::vector<any_filter const *> const query_filters{filter.get()};

    check_output_paths({{"--save-filter", args.save_filter},
                        {"--novel", args.out.novel},
                        {"--known", args.out.known},
                        {"--novel2", args.out.novel2},
                        {"--known2", args.out.known2},
                        {"--report", args.out.report},
                        {"--stats", args.out.stats}});
    check_outputs_are_not_inputs({args.save_filter, args.out.novel, args.out.known, args.out.novel2,
                                  args.out.known2, args.out.report, args.out.stats, args.out.multiqc},
                                 args.input.inputs);
    unit_source source{args.input, reader_opts(threads)};
    output_set outputs{args.out, source, threads, source.paired()};
    batch_engine engine{cfg.kmer, threads};
    dedup_resolver resolver{threads};
    dedup_speculator speculator{threads};
    bool const resolvable = filter->collision_keys();
    batch_keys keys;
    run_summary summary;
    summary.threads = threads;
    summary.paired = source.paired();
    progress_line progress{"dedup", args.common.quiet};
    std::string const filter_name = args.save_filter.empty() ? std::string{"dedup"} : args.save_filter;
    // Only --report and --exact-hits ask for exact hit counts; without them a unit already known before its
    // batch is not looked up in the batch's own additions.
    bool const exact_hits = !args.out.report.empty() || args.out.exact_hits;
    summary.hits_exact = exact_hits;
    // Counts at or above min_count all mean "hit": unless the filter is saved, such keys are not inserted
    // again (same classes, hits and outputs; a smaller, faster filter).
    std::uint64_t const skip_at = args.save_filter.empty() ? args.out.min_count : 0;
    decision_rule const rule = dedup_rule(args.out);

    run_stream(
        source,
        [&](work_item & item)
        {
            engine.extract(item.r1, &item.r2, keys);
            // Both quotient-filter paths equal the serial definition. Speculation needs fewer filter
            // operations but does not count exact hits for known reads.
            if (resolvable && !exact_hits)
                speculator.run(*filter, keys, rule, item.results, filter_name);
            else if (resolvable)
            {
                // parallel query, serial in-batch resolution, parallel insert
                engine.query(query_filters, keys);
                resolver.resolve(*filter, keys, rule, exact_hits, item.results);
                engine.insert(*filter, keys, &item.results, filter_name, skip_at);
            }
            else
                engine.dedup_serial(*filter, keys, rule, item.results, filter_name);
        },
        [&](work_item const & item)
        {
            outputs.write(item);
            account(summary, item);
            progress.update(summary.records, summary.known_units, summary.units, summary.bases,
                            source.input_fraction());
        });
    progress.finish();
    throw_if_interrupted();
    warn_if_overgrown(*filter, args.filter.fpr,
                      args.save_filter.empty() ? std::string{"the dedup filter"}
                                               : "filter '" + args.save_filter + "'");
    if (args.out.strict)
        check_saturation(*filter, args.save_filter.empty() ? std::string{"dedup"} : args.save_filter, true);
    std::unique_ptr<io::output_file> saved;
    if (!args.save_filter.empty())
    {
        // Each quotient-filter shard is saved at the fewest home slots that hold it: a size that depends only
        // on its contents, so speculative additions that were rolled back (and made a shard grow where a
        // read-by-read run would not have) leave no trace.
        fit_filter(*filter, 0.0, threads);
        saved = std::make_unique<io::output_file>(args.save_filter);
        filter->save(saved->write_path());
    }
    outputs.finish();
    summary.seconds = seconds_since(t0);
    run_context const context{"dedup", &args.input.inputs,
                              args.save_filter.empty() ? std::vector<std::string>{}
                                                       : std::vector{args.save_filter}};
    auto const stats =
        write_text_output(args.out.stats, stats_json(summary, context, args.out, args.common), "stats");
    auto const mqc =
        write_text_output(args.out.multiqc, multiqc_json(summary, context, args.out), "MultiQC file");
    // Every output is complete: only now is any of them renamed into place.
    throw_if_interrupted();
    outputs.commit();
    if (saved)
        saved->commit();
    for (auto * f : {stats.get(), mqc.get()})
        if (f != nullptr)
            f->commit();
    return summary;
}

run_summary run_build(build_args const & args)
{
    auto const t0 = std::chrono::steady_clock::now();
    check_filter_options(args.filter);
    if (args.output.empty())
        throw usage_error{"build needs -o/--output"};
    unsigned const threads = resolve_threads(args.common.threads);
    filter_config cfg = make_config(args.filter);
    shard_range const * const range = args.shard ? &*args.shard : nullptr;

    check_output_paths({{"-o/--output", args.output}});
    check_outputs_are_not_inputs({args.output}, args.input.inputs);
    // Without --expected a filter is sized to its input from a first pass (distinct k-mers counted), when
    // the inputs are regular files that can be read twice; a quotient filter from stdin or a pipe is designed
    // for a fixed number of k-mers instead (default_design_keys) and grows. Quotient filters sized for
    // different inputs still merge: at the narrower fingerprint width.
    bool const readable_twice = std::all_of(args.input.inputs.begin(), args.input.inputs.end(),
                                            [](std::string const & in)
                                            {
                                                std::error_code ec;
                                                return in != "-" && std::filesystem::is_regular_file(in, ec);
                                            });
    if (cfg.expected == 0 &&
        (cfg.type != filter_type::quotient || args.filter.expected_auto || readable_twice))
    {
        cfg.expected =
            first_pass_expected(args.input, cfg.kmer, threads, cfg.type, "built from", args.common.quiet);
    }
    // A small quotient filter in 64 shards would spend much of its bytes on each shard's overflow slots and
    // on the spread of keys among shards: unless --shards is given, a shard holds at least 2^18 expected
    // k-mers.
    if (args.filter.shards == 0 && cfg.type == filter_type::quotient && cfg.expected > 0)
    {
        std::uint64_t const most_shards = std::max<std::uint64_t>(1, cfg.expected >> 18);
        cfg.shard_bits = std::min(cfg.shard_bits, static_cast<unsigned>(std::bit_width(most_shards) - 1));
    }

    auto filter = make_filter_within_memory(cfg, args.filter.expected != 0);
    if (range != nullptr)
        filter->set_parts(key_parts::one(range->index, range->count)); // recorded in the file
    unit_source source{args.input, reader_opts(threads)};
    batch_engine engine{cfg.kmer, threads, range};
    batch_keys keys;
    std::vector<std::uint64_t> kmers;
    run_summary summary;
    summary.threads = threads;
    summary.paired = source.paired();
    progress_line progress{"build", args.common.quiet};
    run_stream(source,
               [&](work_item & item)
               {
                   for_each_key_piece(engine, item, keys, kmers,
                                      [&](batch_keys const & piece, auto const &)
                                      { engine.insert(*filter, piece, nullptr, args.output); });
                   item.results.assign(item.r1.size(), unit_result{});
                   for (std::size_t u = 0; u < item.r1.size(); ++u)
                       item.results[u].kmers = static_cast<std::uint32_t>(
                           std::min<std::uint64_t>(kmers[u], std::numeric_limits<std::uint32_t>::max()));
                   account(summary, item);
                   progress.update(summary.records, 0, summary.units, summary.bases, source.input_fraction());
               },
               {});
    progress.finish();
    throw_if_interrupted();
    warn_if_overgrown(*filter, args.filter.fpr, "filter '" + args.output + "'");
    // Quotient-filter shards that ended far below their load (an estimate above the k-mers inserted, or
    // growth by doubling) are rebuilt at the fewest home slots that hold them.
    fit_filter(*filter, filter->stats().bytes <= build_fit_bytes ? 0.0 : build_fit_slack, threads);
    io::output_file out{args.output};
    filter->save(out.write_path());
    throw_if_interrupted();
    out.commit();
    summary.novel_units = summary.novel_records = 0;
    summary.seconds = seconds_since(t0);
    return summary;
}

} // namespace ksieve
