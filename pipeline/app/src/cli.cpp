// The command line of ksieve (CLI11): the options of each subcommand, their help texts and checks,
// and the run of the subcommand given, with errors turned into messages and exit codes.
#include "app_detail.hpp"

#include <ksieve/app/cli.hpp>
#include <ksieve/app/commands.hpp>
#include <ksieve/app/runtime.hpp>
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <string_view>
#include <vector>

namespace ksieve
{

namespace
{

// Validators with messages that say what a value must be (CLI11's own print the type's whole
// range).
CLI::Validator const whole_number{
    [](std::string & v)
    {
        if (v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos)
            return std::string{"expects a whole number (0, 1, 2, ...), got '"} + v + "'";
        return std::string{};
    },
    "N"};
// A 64-bit seed: decimal or 0x-prefixed hexadecimal, within 0 .. 2^64 - 1.
CLI::Validator const seed_number{
    [](std::string & v)
    {
        bool const hex = v.starts_with("0x") || v.starts_with("0X");
        std::uint64_t x = 0;
        char const * const first = v.data() + (hex ? 2 : 0);
        char const * const last = v.data() + v.size();
        auto const [end, ec] = std::from_chars(first, last, x, hex ? 16 : 10);
        if (first == last || ec != std::errc{} || end != last)
            return std::string{"expects a whole number from 0 to 2^64 - 1 (decimal or "
                               "0x hexadecimal), got '"} +
                   v + "'";
        v = std::to_string(x); // as read here (the parser takes a leading 0 as octal)
        return std::string{};
    },
    "SEED"};
CLI::Validator const real_number{
    [](std::string & v)
    {
        char * end = nullptr;
        double const x = std::strtod(v.c_str(), &end);
        if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(x))
            return std::string{"expects a number (such as 0.5 or 1e-4), got '"} + v + "'";
        return std::string{};
    },
    "X"};

void add_common(CLI::App & app, common_args & c)
{
    app.add_option("-t,--threads", c.threads, "Worker threads (0 = all cores)")
        ->default_val(0)
        ->check(whole_number);
    app.add_flag("-q,--quiet", c.quiet,
                 "No progress line and no summary line (warnings and errors are still printed)");
}

void add_max_memory(CLI::App & app, std::string & text)
{
    app.add_option("--max-memory", text,
                   "Memory of the whole process, SIZE such as 8G or 512M: batches of reads and "
                   "output buffers are sized from it, filter tables get the rest (a table that "
                   "would not fit is refused before it is allocated); default: the memory limit "
                   "of the process's cgroup (a container or batch job), else the machine's "
                   "memory, planned the same way; an empty value is an error");
}

void add_inputs(CLI::App & app, input_args & in, bool const required = true)
{
    app.add_option("inputs", in.inputs,
                   "FASTA/FASTQ, GenBank/EMBL (plain, gzip, BGZF, zstd, xz, bzip2) or SAM/BAM/CRAM "
                   "files; - for stdin")
        ->required(required);
    app.add_flag("--paired", in.paired,
                 "Inputs are mate files in pairs: R1 R2 [R1 R2 ...]; a pair is one unit");
    app.add_flag("--interleaved", in.interleaved,
                 "Each input holds mates consecutively; a pair is one unit");
    app.add_flag("--allow-missing-eof", in.allow_missing_eof,
                 "Accept BGZF and BAM inputs without the end-of-file marker (from tools that never "
                 "write it); "
                 "otherwise such an input is refused as truncated");
}

void add_filter_options(CLI::App & app, filter_args & f, std::string & type, std::string & expected,
                        char const * const default_fpr_text)
{
    app.add_option("-k,--kmer", f.k, "k-mer length, 1..32")->default_val(31)->check(whole_number);
    app.add_flag("!--no-canonical", f.canonical, "Use forward k-mers instead of canonical ones");
    app.add_option("--type", type,
                   "Filter type: qf (counting quotient filter), bloom, cuckoo, counting-bloom, "
                   "bloom-classic")
        ->default_val("qf");
    app.add_option(
           "--fpr", f.fpr,
           "Target false-positive rate per k-mer, 0 <= EPS < 0.5; 0 = exact quotient filter")
        ->default_str(default_fpr_text)
        ->check(real_number);
    bool const dedup = app.get_name() == "dedup";
    app.add_option(
        "--expected", expected,
        dedup ? "Expected distinct k-mers (a quotient filter grows without it; Bloom and "
                "cuckoo filters are sized from a first pass over the input files when "
                "it is absent; from stdin they need a number)"
              : "Expected distinct k-mers, or 'auto' (counted in a first pass over the "
                "input); default: counted in a first pass when every input is a regular "
                "file (from stdin a quotient filter grows, the other types need a number)");
    app.add_option("--shards", f.shards,
                   dedup ? "Shards inside the filter (power of two; default 64, fewer for k < 7 "
                           "and under a small --max-memory)"
                         : "Shards inside the filter file (power of two; default 64, fewer for "
                           "k < 7 and for small quotient filters)")
        ->check(whole_number);
    app.add_option("--seed", f.seed, "Hash seed (filters used together must share it)")
        ->default_val(default_hash_seed)
        ->transform(seed_number);
    app.add_option("--max-load", f.max_load,
                   "Quotient filter: grow when the load would exceed this")
        ->default_val(0.9)
        ->check(real_number);
}

void add_classify_outputs(CLI::App & app, classify_output_args & o, double const default_fraction)
{
    app.add_option("--min-hit-fraction", o.min_hit_fraction,
                   "Known iff hits / kmers >= F, 0 < F <= 1")
        ->default_val(default_fraction)
        ->check(real_number);
    app.add_option("--min-count", o.min_count,
                   "A k-mer is a hit only if its count is >= C (quotient filters)")
        ->default_val(1)
        ->check(whole_number);
    app.add_option(
        "--novel", o.novel,
        "Write novel reads here (format from the extension; .gz compresses; - = stdout)");
    app.add_option("--known", o.known, "Write known reads here");
    app.add_option("--novel2", o.novel2, "Mate 2 of novel pairs (otherwise pairs are interleaved)");
    app.add_option("--known2", o.known2, "Mate 2 of known pairs");
    app.add_option("--report", o.report, "Per-read TSV: read_id, kmers, hits, class");
    app.add_option(
        "--stats", o.stats,
        "JSON summary: sample, inputs, filters, command line, reads, known, novel, k-mers, bases");
    app.add_option("--multiqc", o.multiqc,
                   "MultiQC custom-content file of the known and novel reads (name it "
                   "SAMPLE_mqc.json: MultiQC run "
                   "on a folder of them draws one bar per sample)");
    app.add_option("--sample", o.sample,
                   "Sample name in --stats and --multiqc (default: the first input's file name)");
    app.add_flag("--exact-hits", o.exact_hits,
                 "Count every k-mer's hit for --stats (--report does anyway); otherwise a read's "
                 "lookups stop once "
                 "its class is decided, and --stats gives hits as null");
    app.add_flag("--strict", o.strict,
                 "Refuse a filter whose estimated false-positive rate is more than 10x its target "
                 "(default: warn)");
    app.add_option("--compression-level", o.compression_level,
                   "Level of compressed outputs (by extension: .gz as BGZF, .zst, .xz, .bz2), 0-9 "
                   "(bzip2 0 is taken as 1); "
                   "default: gzip 1, zstd 3, xz 3, bzip2 9 (fast, a few percent larger than the "
                   "slow levels); "
                   "gzip 1 through ISA-L igzip (where built with it), 0 and 2-9 libdeflate; "
                   "half of the -t threads compress in parallel")
        ->check(CLI::Range(0, 9));
}

// Levenshtein distance, for "did you mean".
std::size_t edit_distance(std::string_view const a, std::string_view const b)
{
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
    {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j)
        {
            std::size_t const up = row[j];
            row[j] =
                std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0u : 1u)});
            diag = up;
        }
    }
    return row[b.size()];
}

// The candidate closest to `word` (at most a third of its letters off, or a prefix of it), or "".
std::string closest(std::string const & word, std::vector<std::string> const & candidates)
{
    std::string best;
    std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
    for (auto const & c : candidates)
    {
        std::size_t const d = c.starts_with(word) && word.size() >= 3 ? 1 : edit_distance(word, c);
        if (d < best_d)
        {
            best_d = d;
            best = c;
        }
    }
    return best;
}

// Every long and short option name of a subcommand, with its dashes.
std::vector<std::string> option_names(CLI::App const & app)
{
    std::vector<std::string> names;
    for (CLI::Option const * o : app.get_options())
    {
        for (auto const & n : o->get_lnames())
            names.push_back("--" + n);
        for (auto const & n : o->get_snames())
            names.push_back("-" + n);
    }
    return names;
}

// The unknown arguments of a CLI11 "not expected" error, with a suggestion for the first option
// among them.
std::string explain_extras(CLI::App const & app, std::vector<std::string> const & extras)
{
    std::string text = "unexpected argument";
    text += extras.size() > 1 ? "s" : "";
    for (auto const & e : extras)
        text += " '" + e + "'";
    for (auto const & e : extras)
    {
        if (!e.starts_with("-"))
            continue;
        std::string const word = e.substr(0, e.find('='));
        std::string const guess = closest(word, option_names(app));
        text += guess.empty() ? std::string{": unknown option"}
                              : ": unknown option, did you mean '" + guess + "'?";
        break;
    }
    return text;
}

void print_summary(std::string const & command, run_summary const & s)
{
    auto pct = [&](std::uint64_t const n)
    { return s.units == 0 ? 0.0 : 100.0 * static_cast<double>(n) / static_cast<double>(s.units); };
    char const * const unit = s.paired ? "pairs" : "reads";
    if (command == "build")
        std::fprintf(
            stderr, "ksieve build: %llu sequences, %llu bases, %llu k-mers inserted in %.2f s\n",
            static_cast<unsigned long long>(s.records), static_cast<unsigned long long>(s.bases),
            static_cast<unsigned long long>(s.kmers), s.seconds);
    else
        std::fprintf(
            stderr,
            "ksieve %s: %llu %s: %llu known (%.2f%%), %llu novel (%.2f%%), %llu bases in %.2f s\n",
            command.c_str(), static_cast<unsigned long long>(s.units), unit,
            static_cast<unsigned long long>(s.known_units), pct(s.known_units),
            static_cast<unsigned long long>(s.novel_units), pct(s.novel_units),
            static_cast<unsigned long long>(s.bases), s.seconds);
}

std::string join_command_line(int const argc, char ** const argv)
{
    std::string line;
    for (int i = 0; i < argc; ++i)
    {
        std::string const a = argv[i];
        line += i == 0 ? "" : " ";
        line += a.find_first_of(" \t'\"$") == std::string::npos && !a.empty() ? a : "'" + a + "'";
    }
    return line;
}

// Everything the command line fills in, and the subcommands that fill it.
struct cli_state
{
    build_args build;
    classify_args classify;
    dedup_args dedup;
    merge_args merge, intersect, subtract;
    info_args info;
    std::string build_type, dedup_type, part_text, shard_text, build_expected, dedup_expected,
        build_sampling, build_mask, build_spaced, max_memory, prefilter_size, dedup_sampling;
    std::vector<std::string> label_texts;
    bool subtract_counts{false};
    CLI::App *cmd_build{}, *cmd_classify{}, *cmd_dedup{}, *cmd_merge{}, *cmd_intersect{},
        *cmd_subtract{}, *cmd_info{};
};

void add_build(CLI::App & app, cli_state & st)
{
    auto * c = st.cmd_build = app.add_subcommand(
        "build", "Insert the k-mers of all INPUT sequences into a new filter file");
    add_max_memory(*c, st.max_memory);
    add_common(*c, st.build.common);
    c->add_option("-o,--output", st.build.output, "Filter file to write")->required();
    add_filter_options(*c, st.build.filter, st.build_type, st.build_expected,
                       "0.00001 for qf with minimizer sampling, 0.0001 for qf of every k-mer, "
                       "0.001 for the others");
    c->add_option(
         "--sampling", st.build_sampling,
         "Which k-mers to store: 'all', or 'minimizer:W' (the smallest-hash k-mer of every W "
         "consecutive ones; classify then looks up the same minimizers of each read)")
        ->default_val(build_default_sampling);
    c->add_option("--mask", st.build_mask,
                  "Skip low-complexity minimizers at build and classify time: 'none', 'dust' "
                  "(dust:1.5) or 'dust:T' (a minimizer whose trinucleotide DUST score exceeds T; "
                  "needs --sampling minimizer:W; recorded in the filter)")
        ->default_val(build_default_mask);
    c->add_option("--spaced", st.build_spaced,
                  "Spaced k-mers: 'auto' (for k 31 with minimizer sampling the pattern " +
                      std::string{build_spaced_pattern} +
                      ", none otherwise), 'none', or k characters of 1 (compared) and 0 (ignored "
                      "at build and classify time, so that a sequencing error there does not "
                      "break the k-mer); recorded in the filter")
        ->default_val(build_default_spaced);
    c->add_flag("--no-counts", st.build.no_counts,
                "Quotient filter: store every k-mer with count 1 (presence only), so that a filter "
                "of several assemblies of one host grows only by their distinct k-mers; classify "
                "--min-count above 1 then finds nothing");
    c->add_option("--part", st.part_text,
                  "Build only the k-mers of part I of S of the key space (I/S, I from 0; "
                  "S <= 65536; default: the whole key space): scatter over S jobs, then merge "
                  "(--shard I/S: its older name)");
    c->add_option("--shard", st.shard_text, "The older name of --part")->group(""); // not listed
    c->add_option("--label", st.label_texts,
                  "NAME=FILE[,FILE...]: a labeled filter, whose every k-mer carries the set of "
                  "labels whose files hold it (repeatable; no other input needed)")
        ->allow_extra_args(false);
    c->add_option("--label-by", st.build.label_by,
                  "Label the inputs: 'file' (each input file is a label, named by its file name "
                  "without directory and extensions) or 'record' (each record's name, or its label "
                  "in --label-map)");
    c->add_option("--label-map", st.build.label_map,
                  "With --label-by record: a TSV of record name, tab, label");
    add_inputs(*c, st.build.input, false);
    c->footer("Example:\n  ksieve build -o host.ksf host.fa.gz\n"
              "  ksieve build --part 0/4 -o part0.ksf host.fa.gz   (then merge the parts)\n"
              "  ksieve build -o screen.ksf --label human=GRCh38.fa.gz --label phix=phix.fa");
}

void add_classify(CLI::App & app, cli_state & st)
{
    auto * c = st.cmd_classify = app.add_subcommand(
        "classify", "Classify each read (or pair) as known or novel against filters");
    add_max_memory(*c, st.max_memory);
    add_common(*c, st.classify.common);
    c->add_option("-f,--filter", st.classify.filters,
                  "Filter file (repeat for several; a hit in any counts)")
        ->required()
        ->allow_extra_args(false);
    add_classify_outputs(*c, st.classify.out, classify_default_fraction);
    c->add_option("--split-by-label", st.classify.out.split_by_label,
                  "Labeled filter: write the known reads of each label to PATTERN with {label} "
                  "replaced by the label (and by 'ambiguous' for ties), such as out/{label}.fq.gz");
    c->add_option("--split-by-label2", st.classify.out.split_by_label2,
                  "Mate 2 of --split-by-label (otherwise pairs are interleaved)");
    c->add_option("--min-hits", st.classify.out.min_hits,
                  "Known also needs at least A hits (a pair: of both mates together)")
        ->default_val(classify_default_min_hits)
        ->check(whole_number);
    add_inputs(*c, st.classify.input);
    c->footer(
        "Example:\n  ksieve classify -f host.ksf --paired R1.fq.gz R2.fq.gz --novel clean_R1.fq.gz "
        "--novel2 clean_R2.fq.gz --stats sample.json --multiqc sample_mqc.json");
}

void add_dedup(CLI::App & app, cli_state & st)
{
    auto * c = st.cmd_dedup = app.add_subcommand(
        "dedup", "Streaming deduplication / digital normalization: a read is known if enough of "
                 "its k-mers were\n"
                 "seen in earlier novel reads; novel reads' k-mers are inserted");
    add_max_memory(*c, st.max_memory);
    add_common(*c, st.dedup.common);
    add_filter_options(*c, st.dedup.filter, st.dedup_type, st.dedup_expected,
                       "0.001; 0 with --exact");
    add_classify_outputs(*c, st.dedup.out, 0.5);
    c->add_flag("--exact", st.dedup.exact,
                "Exact duplicates: a read (pair) is known iff its sequence (both mates') was seen "
                "in an earlier read (pair), also as its reverse complement (a pair: mates swapped) "
                "unless --no-canonical; case is ignored. Keeps a 64-bit hash per distinct "
                "sequence (exact keys with the default --fpr 0); no k-mer options");
    c->get_option("--no-canonical")
        ->description("Use forward k-mers instead of canonical ones; with --exact, compare "
                      "sequences only as given (not their reverse complements, nor swapped mates)");
    c->get_option("--max-memory")
        ->description("Memory of the whole process, SIZE such as 8G or 512M: batches of reads and "
                      "output buffers are sized from it, the filter's tables get the rest and a "
                      "quotient filter samples or forgets k-mers to stay within it (the same "
                      "outputs for any -t); default: the memory limit of the process's cgroup (a "
                      "container or batch job), else the machine's memory, planned the same way");
    c->add_option("--save-filter", st.dedup.save_filter, "Write the accumulated filter here");
    c->add_flag("--prefilter", st.dedup.prefilter,
                "Normalization (--min-count >= 3, a quotient filter): a small Bloom filter "
                "remembers the k-mers seen "
                "once, and the quotient filter admits a k-mer on its second sighting");
    c->add_option("--sampling", st.dedup_sampling,
                  "Which k-mers of each read the rule counts and the filter stores: 'all', or "
                  "'minimizer:W' (the "
                  "smallest-hash k-mer of every W consecutive ones: about 2 / (W + 1) of them)")
        ->default_val("all");
    c->add_option("--prefilter-size", st.prefilter_size,
                  "Bytes of the prefilter (such as 256M; at least 1M); default: 1 byte per k-mer "
                  "of --expected if given, else a quarter of the input files' bytes (128M for "
                  "stdin), at most 128M and at most an eighth of the filter tables' part of "
                  "the memory limit");
    add_inputs(*c, st.dedup.input);
    c->footer("Example:\n  ksieve dedup --novel unique.fq.gz reads.fq.gz\n"
              "  ksieve dedup --min-count 20 --novel normalized.fq.gz reads.fq.gz   (normalize to "
              "depth 20)\n"
              "  ksieve dedup --min-count 20 --sampling minimizer:9 --novel normalized.fq.gz "
              "reads.fq.gz   (faster)\n"
              "  ksieve dedup --exact --paired --novel u_R1.fq.gz --novel2 u_R2.fq.gz R1.fq.gz "
              "R2.fq.gz   (exact duplicates)");
}

// dedup --exact: the k-mer options of dedup, given at all, are usage errors (run_dedup refuses
// values other than their defaults). \throws usage_error
void refuse_kmer_options_of_exact(CLI::App const & dedup)
{
    for (std::string const option : {"--kmer", "--sampling", "--min-count", "--min-hit-fraction",
                                     "--prefilter", "--prefilter-size", "--save-filter"})
        if (dedup.count(option) > 0)
            detail::refuse_for_exact(option == "--kmer" ? std::string{"-k/--kmer"} : option);
}

// merge, intersect or subtract.
CLI::App * add_combine(CLI::App & app, cli_state & st, merge_args & m, set_operation const op,
                       char const * const what, char const * const output_help,
                       char const * const inputs_help, char const * const example)
{
    m.op = op;
    auto * c = app.add_subcommand(operation_name(op), what);
    add_max_memory(*c, st.max_memory);
    add_common(*c, m.common);
    c->add_option("-o,--output", m.output, output_help)->required();
    c->add_option("--min-count", m.min_count, "A k-mer counts in an input only with a count >= C")
        ->default_val(1)
        ->check(whole_number);
    if (op == set_operation::subtract)
        c->add_flag("--counts", st.subtract_counts,
                    "Subtract the counts of the other filters instead: keep a k-mer whose count is "
                    "larger than their "
                    "sum, with the difference");
    if (op == set_operation::unite)
        c->add_flag("--label-inputs", m.label_inputs,
                    "A labeled result: each unlabeled input is a label named by its file name "
                    "(without directory and extensions); labeled inputs keep their labels");
    c->add_option("inputs", m.inputs, inputs_help)->required();
    c->footer(std::string{"Example:\n  "} + example);
    return c;
}

void add_subcommands(CLI::App & app, cli_state & st)
{
    add_build(app, st);
    add_classify(app, st);
    add_dedup(app, st);
    st.cmd_merge = add_combine(app, st, st.merge, set_operation::unite,
                               "Union of compatible filter files (quotient: counts add; Bloom: OR)",
                               "Merged filter file", "Filter files",
                               "ksieve merge -o all.ksf sample1.ksf sample2.ksf sample3.ksf");
    st.cmd_intersect = add_combine(
        app, st, st.intersect, set_operation::intersect,
        "K-mers present in every input filter (quotient: the smallest count; Bloom: AND)",
        "Filter file of the intersection", "Filter files",
        "ksieve intersect -o shared.ksf sample1.ksf sample2.ksf sample3.ksf");
    st.cmd_subtract = add_combine(
        app, st, st.subtract, set_operation::subtract,
        "K-mers of the first filter absent from every other one (quotient filters)",
        "Filter file of the difference",
        "The filter to subtract from, then the filters to subtract",
        "ksieve subtract -o host_only.ksf host.ksf microbes.ksf   (host filter that spares "
        "the microbes' k-mers)");
    auto * c = st.cmd_info = app.add_subcommand(
        "info", "Parameters, shards, load, distinct k-mers and estimated FPR of a filter");
    add_common(*c, st.info.common);
    c->add_flag("--json", st.info.json, "JSON output");
    c->add_option("filter", st.info.filter, "Filter file")->required();
    c->footer("Example:\n  ksieve info --json host.ksf");
    app.footer(
        "Run 'ksieve help COMMAND' (or 'ksieve COMMAND --help') for the options of a command.");
}

// `ksieve help [COMMAND]` becomes `ksieve COMMAND --help`; a first word that is no command is
// refused with the closest one (exit status 2, else -1).
int rewrite_arguments(std::vector<char *> & args)
{
    static std::vector<std::string> const commands{"build",     "classify", "dedup", "merge",
                                                   "intersect", "subtract", "info"};
    static char help_flag[] = "--help";
    if (args.size() >= 2 && std::string_view{args[1]} == "help")
    {
        args.erase(args.begin() + 1);
        if (args.size() > 2)
            args.resize(2);
        args.push_back(help_flag);
    }
    std::string_view const first =
        args.size() >= 2 ? std::string_view{args[1]} : std::string_view{};
    if (first.starts_with('-') && first != "--help" && first != "-h" && first != "--version")
    {
        auto const cmd = std::find_if(
            args.begin() + 1, args.end(),
            [&](char const * a)
            { return std::find(commands.begin(), commands.end(), a) != commands.end(); });
        if (cmd != args.end())
        {
            std::cerr << "ksieve: error: options go after the command: 'ksieve " << *cmd << " "
                      << first << " ...' (see ksieve " << *cmd << " --help)\n";
            return 2;
        }
    }
    if (args.size() >= 2 && args[1][0] != '-' &&
        std::find(commands.begin(), commands.end(), std::string{args[1]}) == commands.end())
    {
        std::string const guess = closest(args[1], commands);
        std::cerr << "ksieve: error: '" << args[1] << "' is not a ksieve command"
                  << (guess.empty() ? std::string{} : ": did you mean '" + guess + "'?")
                  << " (commands: build, classify, dedup, merge, intersect, subtract, info; see "
                     "ksieve --help)\n";
        return 2;
    }
    return -1;
}

// The message of a command line CLI11 refused (exit status 2).
int parse_failure(CLI::App & app, CLI::ParseError const & e)
{
    if (e.get_exit_code() == 0)
        return app.exit(e);
    CLI::App const * sub = &app;
    for (CLI::App const * c : app.get_subcommands())
        sub = c;
    std::string const see =
        " (see ksieve " + (sub == &app ? std::string{} : sub->get_name() + " ") + "--help)\n";
    // An unknown option is named before a missing required one: `build --expeted 5` is a typo, not
    // a forgotten -o.
    std::vector<std::string> const unknown = sub->remaining();
    bool const typo = dynamic_cast<CLI::RequiredError const *>(&e) != nullptr &&
                      std::any_of(unknown.begin(), unknown.end(),
                                  [](std::string const & a) { return a.starts_with("-"); });
    if (dynamic_cast<CLI::ExtrasError const *>(&e) != nullptr || typo)
    {
        std::vector<std::string> const left = sub->remaining();
        std::cerr << "ksieve: error: " << (sub == &app ? "" : sub->get_name() + ": ")
                  << explain_extras(*sub, left.empty() ? std::vector<std::string>{e.what()} : left)
                  << see;
        return 2;
    }
    std::string msg = e.what();
    while (!msg.empty() && msg.back() == '\n')
        msg.pop_back();
    std::cerr << "ksieve: error: " << msg << see;
    return 2;
}

// An option or argument given an empty or blank value (what a job script passes as "$UNSET") is a
// usage error, never taken as "not given": every option of the command that takes a value, and its
// positional arguments. \throws usage_error
void refuse_empty_values(CLI::App const & command)
{
    for (CLI::Option const * o : command.get_options())
    {
        if (o->get_type_size() == 0) // a flag
            continue;
        for (std::string const & v : o->results())
            if (v.find_first_not_of(" \t\n\r\v\f") == std::string::npos)
            {
                std::string const name =
                    o->get_lnames().empty()
                        ? (o->get_snames().empty() ? o->get_name() : "-" + o->get_snames()[0])
                        : "--" + o->get_lnames()[0];
                throw usage_error{(o->get_lnames().empty() && o->get_snames().empty()
                                       ? "an argument of " + name
                                       : name) +
                                  " is " + (v.empty() ? "empty" : "blank") +
                                  ": give a value, or leave the option out"};
            }
    }
}

// One memory plan for every limit, whatever set it (plan_run_memory). \throws usage_error for a
// malformed --max-memory, error for a limit too small
void plan_memory_for(cli_state const & st)
{
    common_args const * const common = st.cmd_build->parsed()       ? &st.build.common
                                       : st.cmd_classify->parsed()  ? &st.classify.common
                                       : st.cmd_dedup->parsed()     ? &st.dedup.common
                                       : st.cmd_merge->parsed()     ? &st.merge.common
                                       : st.cmd_intersect->parsed() ? &st.intersect.common
                                       : st.cmd_subtract->parsed()  ? &st.subtract.common
                                                                    : nullptr;
    if (common == nullptr)
        return; // info
    std::uint64_t const option =
        st.max_memory.empty() ? 0 : parse_size(st.max_memory, "--max-memory");
    plan_run_memory(option,
                    st.cmd_classify->parsed() ? "classify"
                    : st.cmd_dedup->parsed()  ? "dedup"
                                              : "other",
                    resolve_threads(common->threads));
}

// Run the parsed subcommand and print its summary line. \throws ksieve::error
void dispatch(cli_state & st)
{
    for (CLI::App const * c : {st.cmd_build, st.cmd_classify, st.cmd_dedup, st.cmd_merge,
                               st.cmd_intersect, st.cmd_subtract, st.cmd_info})
        if (c->parsed())
            refuse_empty_values(*c);
    if (!st.max_memory.empty() && st.cmd_info->parsed())
        set_memory_limit(parse_size(st.max_memory, "--max-memory"));
    plan_memory_for(st);
    if (st.cmd_build->parsed())
    {
        auto & b = st.build;
        b.filter.type = parse_filter_type(st.build_type);
        parse_expected(st.build_expected, b.filter);
        parse_sampling(st.build_sampling, b.filter);
        if (std::isnan(b.filter.fpr))
            b.filter.fpr = build_default_fpr_for(b.filter.type, b.filter.window);
        parse_mask(st.build_mask, b.filter);
        parse_spaced(st.build_spaced, b.filter);
        if (b.no_counts && b.filter.type != filter_type::quotient)
            throw usage_error{"--no-counts needs --type qf (the other types keep no counts)"};
        if (!st.part_text.empty() && !st.shard_text.empty())
            throw usage_error{"--part and --shard (its older name) are one option: give it once"};
        if (!st.part_text.empty() || !st.shard_text.empty())
            b.part = parse_part(st.part_text.empty() ? st.shard_text : st.part_text);
        for (std::string const & l : st.label_texts)
            parse_label(l, b);
        auto const s = run_build(b);
        if (!b.common.quiet)
            print_summary("build", s);
    }
    else if (st.cmd_classify->parsed())
    {
        auto const s = run_classify(st.classify);
        if (!st.classify.common.quiet)
            print_summary("classify", s);
    }
    else if (st.cmd_dedup->parsed())
    {
        auto & d = st.dedup;
        d.filter.type = parse_filter_type(st.dedup_type);
        if (std::isnan(d.filter.fpr))
            d.filter.fpr = d.exact ? 0.0 : 0.001; // --exact: exact 64-bit keys by default
        if (d.exact)
            refuse_kmer_options_of_exact(*st.cmd_dedup);
        parse_expected(st.dedup_expected, d.filter);
        parse_sampling(st.dedup_sampling, d.filter);
        if (!st.prefilter_size.empty())
            d.prefilter_bytes = parse_size(st.prefilter_size, "--prefilter-size");
        auto const s = run_dedup(d);
        if (!d.common.quiet)
            print_summary("dedup", s);
    }
    else if (st.cmd_merge->parsed() || st.cmd_intersect->parsed() || st.cmd_subtract->parsed())
    {
        merge_args & m = st.cmd_merge->parsed()       ? st.merge
                         : st.cmd_intersect->parsed() ? st.intersect
                                                      : st.subtract;
        if (st.subtract_counts)
            m.op = set_operation::subtract_counts;
        auto const s = run_merge(m);
        if (!m.common.quiet)
            std::fprintf(stderr,
                         "ksieve %s: %zu filters into '%s': %llu distinct k-mers in %.2f s\n",
                         operation_name(m.op), m.inputs.size(), m.output.c_str(),
                         static_cast<unsigned long long>(s.distinct), s.seconds);
    }
    else if (st.cmd_info->parsed())
        run_info(st.info, std::cout);
    std::cout.flush();
    if (!std::cout)
        throw io_error{"cannot write to standard output"};
}

} // namespace

namespace
{

// After a stop signal, an error on the way out is a consequence of it (an open of a FIFO or a write
// cut short): the run reports the interruption, with its exit status 128 + signal, instead.
int report_interruption()
{
    try
    {
        throw_if_stop_requested();
    }
    catch (interrupted_error const & e)
    {
        std::cerr << "ksieve: error: " << e.what() << '\n';
        return e.exit_status();
    }
    return 1;
}

} // namespace

int run_cli(int argc, char ** argv)
{
    CLI::App app{
        "ksieve: stream reads through k-mer filters and sort them into novel and known.\n"
        "Build a filter from references, classify reads against it, deduplicate or normalize\n"
        "reads on the fly, combine per-sample filters, and inspect filter files."};
    app.name("ksieve");
    app.set_version_flag("--version", std::string{"ksieve "} + KSIEVE_VERSION);
    app.require_subcommand(1);
    app.failure_message(CLI::FailureMessage::simple);
    cli_state st;
    // --fpr given or not: its default depends on the filter type (build)
    st.build.filter.fpr = st.dedup.filter.fpr = std::numeric_limits<double>::quiet_NaN();
    add_subcommands(app, st);

    std::vector<char *> args(argv, argv + argc);
    if (int const status = rewrite_arguments(args); status >= 0)
        return status;
    try
    {
        app.parse(static_cast<int>(args.size()), args.data());
    }
    catch (CLI::ParseError const & e)
    {
        return parse_failure(app, e);
    }

    install_interrupt_handler();
    fit_allocator_to_address_limit();
    std::string const command_line = join_command_line(static_cast<int>(args.size()), args.data());
    st.build.common.command_line = st.classify.common.command_line = st.dedup.common.command_line =
        command_line;
    try
    {
        dispatch(st);
    }
    catch (error const & e)
    {
        if (stop_requested() && dynamic_cast<interrupted_error const *>(&e) == nullptr)
            return report_interruption(); // an open or write that the signal cut short, a reader
                                          // gone
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
