#include <ksieve/filters/error.hpp>
#include <ksieve/filters/memory_budget.hpp>
#include <ksieve/app/cli.hpp>
#include <ksieve/app/commands.hpp>
#include <ksieve/app/runtime.hpp>

#include <CLI/CLI.hpp>

#include <cmath>
#include <iostream>
#include <limits>
#include <string_view>

namespace ksieve
{

namespace
{

void add_common(CLI::App & app, common_args & c)
{
    app.add_option("-t,--threads", c.threads, "Worker threads (0 = all cores)")->default_val(0)->check(CLI::NonNegativeNumber);
    app.add_flag("-q,--quiet", c.quiet, "No progress line");
}

void add_max_memory(CLI::App & app, std::string & text)
{
    app.add_option("--max-memory", text,
                   "Refuse filters that would need more than SIZE of memory (such as 8G or 512M), before allocating "
                   "them; default: the machine's memory (or the container's limit)");
}

void add_inputs(CLI::App & app, input_args & in)
{
    app.add_option("inputs", in.inputs, "FASTA/FASTQ (plain, gzip, BGZF) or SAM/BAM/CRAM files; - for stdin")
        ->required();
    app.add_flag("--paired", in.paired, "Inputs are mate files in pairs: R1 R2 [R1 R2 ...]; a pair is one unit");
    app.add_flag("--interleaved", in.interleaved, "Each input holds mates consecutively; a pair is one unit");
    app.add_flag("--allow-missing-eof", in.allow_missing_eof,
                 "Accept BGZF and BAM inputs without the end-of-file marker (from tools that never write it); "
                 "otherwise such an input is refused as truncated");
}

void add_filter_options(CLI::App & app, filter_args & f, std::string & type, std::string & expected,
                        char const * const default_fpr_text)
{
    app.add_option("-k,--kmer", f.k, "k-mer length, 1..32")->default_val(31);
    app.add_flag("!--no-canonical", f.canonical, "Use forward k-mers instead of canonical ones");
    app.add_option("--type", type, "Filter type: qf (counting quotient filter), bloom, cuckoo, counting-bloom, bloom-classic")
        ->default_val("qf");
    app.add_option("--fpr", f.fpr, "Target false-positive rate per k-mer, 0 <= EPS < 0.5; 0 = exact quotient filter")
        ->default_str(default_fpr_text);
    app.add_option("--expected", expected,
                   "Expected distinct k-mers, or 'auto' (build: counted in a first pass over the input; Bloom/cuckoo "
                   "filters do that when it is absent, also in dedup; from stdin they need a number)");
    app.add_option("--shards", f.shards, "Shards inside the filter file (power of two; default 64, fewer for k < 7)");
    app.add_option("--seed", f.seed, "Hash seed (filters used together must share it)")
        ->default_val(default_hash_seed);
    app.add_option("--max-load", f.max_load, "Quotient filter: grow when the load would exceed this")
        ->default_val(0.9);
}

void add_classify_outputs(CLI::App & app, classify_output_args & o, double const default_fraction)
{
    app.add_option("--min-hit-fraction", o.min_hit_fraction, "Known iff hits / kmers >= F, 0 < F <= 1")
        ->default_val(default_fraction);
    app.add_option("--min-count", o.min_count, "A k-mer is a hit only if its count is >= C (quotient filters)")
        ->default_val(1);
    app.add_option("--novel", o.novel, "Write novel reads here (format from the extension; .gz compresses; - = stdout)");
    app.add_option("--known", o.known, "Write known reads here");
    app.add_option("--novel2", o.novel2, "Mate 2 of novel pairs (otherwise pairs are interleaved)");
    app.add_option("--known2", o.known2, "Mate 2 of known pairs");
    app.add_option("--report", o.report, "Per-read TSV: read_id, kmers, hits, class");
    app.add_option("--stats", o.stats, "JSON summary (MultiQC-friendly)");
    app.add_option("--compression-level", o.compression_level,
                   "Level of compressed outputs (by extension: .gz as BGZF, .zst, .xz, .bz2), 0-9 (bzip2 1-9); "
                   "default: gzip 2, zstd 3, xz 3, bzip2 9 (fast, a few percent larger than the slow levels); "
                   "gzip levels 1-3 use ISA-L igzip, 4-9 libdeflate; "
                   "the -t threads compress in parallel")
        ->check(CLI::Range(0, 9));
}

} // namespace

int run_cli(int argc, char ** argv)
{
    CLI::App app{"ksieve: stream reads through k-mer filters and sort them into novel and known.\n"
                 "Build a filter from references, classify reads against it, deduplicate or normalize\n"
                 "reads on the fly, merge per-sample filters, and inspect filter files."};
    app.name("ksieve");
    app.set_version_flag("--version", std::string{"ksieve "} + KSIEVE_VERSION);
    app.require_subcommand(1);
    app.failure_message(CLI::FailureMessage::simple);

    build_args build;
    classify_args classify;
    dedup_args dedup;
    // --fpr given or not: its default depends on the filter type (build)
    build.filter.fpr = dedup.filter.fpr = std::numeric_limits<double>::quiet_NaN();
    merge_args merge;
    info_args info;
    std::string build_type, dedup_type, shard_text, build_expected, dedup_expected, build_sampling, max_memory;

    auto * cmd_build = app.add_subcommand("build", "Insert the k-mers of all INPUT sequences into a new filter file");
    add_max_memory(*cmd_build, max_memory);
    add_common(*cmd_build, build.common);
    cmd_build->add_option("-o,--output", build.output, "Filter file to write")->required();
    add_filter_options(*cmd_build, build.filter, build_type, build_expected,
                       "0.0001 for qf, 0.001 for bloom, cuckoo and counting-bloom");
    cmd_build->add_option("--sampling", build_sampling,
                          "Which k-mers to store: 'all', or 'minimizer:W' (the smallest-hash k-mer of every W "
                          "consecutive ones; classify then looks up the same minimizers of each read)")
        ->default_val(build_default_sampling);
    cmd_build->add_option(
        "--shard", shard_text,
        "Build only the k-mers of part I of S (I/S, I from 0; S <= 65536): scatter over S jobs, then merge");
    add_inputs(*cmd_build, build.input);

    auto * cmd_classify = app.add_subcommand("classify", "Classify each read (or pair) as known or novel against filters");
    add_max_memory(*cmd_classify, max_memory);
    add_common(*cmd_classify, classify.common);
    cmd_classify->add_option("-f,--filter", classify.filters, "Filter file (repeat for several; a hit in any counts)")
        ->required()
        ->allow_extra_args(false);
    add_classify_outputs(*cmd_classify, classify.out, classify_default_fraction);
    cmd_classify->add_option("--min-hits", classify.out.min_hits,
                             "Known also needs at least A hits (a pair: of both mates together)")
        ->default_val(classify_default_min_hits);
    add_inputs(*cmd_classify, classify.input);

    auto * cmd_dedup = app.add_subcommand(
        "dedup", "Streaming deduplication / digital normalization: a read is known if enough of its k-mers were\n"
                 "seen in earlier novel reads; novel reads' k-mers are inserted");
    add_max_memory(*cmd_dedup, max_memory);
    add_common(*cmd_dedup, dedup.common);
    add_filter_options(*cmd_dedup, dedup.filter, dedup_type, dedup_expected, "0.001");
    add_classify_outputs(*cmd_dedup, dedup.out, 0.5);
    cmd_dedup->add_option("--save-filter", dedup.save_filter, "Write the accumulated filter here");
    add_inputs(*cmd_dedup, dedup.input);

    auto * cmd_merge = app.add_subcommand("merge", "Union of compatible filter files (quotient: counts add; Bloom: OR)");
    add_max_memory(*cmd_merge, max_memory);
    add_common(*cmd_merge, merge.common);
    cmd_merge->add_option("-o,--output", merge.output, "Merged filter file")->required();
    cmd_merge->add_option("inputs", merge.inputs, "Filter files")->required();

    auto * cmd_info = app.add_subcommand("info", "Parameters, shards, load, distinct k-mers and estimated FPR of a filter");
    add_common(*cmd_info, info.common);
    cmd_info->add_flag("--json", info.json, "JSON output");
    cmd_info->add_option("filter", info.filter, "Filter file")->required();

    try
    {
        app.parse(argc, argv);
    }
    catch (CLI::ParseError const & e)
    {
        if (e.get_exit_code() == 0)
            return app.exit(e);
        std::string msg = e.what();
        while (!msg.empty() && msg.back() == '\n')
            msg.pop_back();
        std::cerr << "ksieve: error: " << msg << " (see ksieve --help)\n";
        return 2;
    }

    install_interrupt_handler();
    try
    {
        if (!max_memory.empty())
            set_memory_limit(parse_size(max_memory, "--max-memory"));
        if (cmd_build->parsed())
        {
            build.filter.type = parse_filter_type(build_type);
            if (std::isnan(build.filter.fpr))
                build.filter.fpr = build.filter.type == filter_type::quotient ? build_default_fpr : 0.001;
            parse_expected(build_expected, build.filter);
            parse_sampling(build_sampling, build.filter);
            if (!shard_text.empty())
                build.shard = parse_shard_range(shard_text);
            run_build(build);
        }
        else if (cmd_classify->parsed())
            run_classify(classify);
        else if (cmd_dedup->parsed())
        {
            dedup.filter.type = parse_filter_type(dedup_type);
            if (std::isnan(dedup.filter.fpr))
                dedup.filter.fpr = 0.001;
            parse_expected(dedup_expected, dedup.filter);
            run_dedup(dedup);
        }
        else if (cmd_merge->parsed())
            run_merge(merge);
        else if (cmd_info->parsed())
            run_info(info, std::cout);
        std::cout.flush();
        if (!std::cout)
            throw io_error{"cannot write to standard output"};
    }
    catch (error const & e)
    {
        std::cerr << "ksieve: error: " << e.what() << '\n';
        return e.exit_status();
    }
    catch (std::bad_alloc const &)
    {
        std::cerr << "ksieve: error: out of memory\n";
        return 1;
    }
    catch (std::exception const & e)
    {
        std::cerr << "ksieve: error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}

} // namespace ksieve
