// The command line's shared pieces (cli_options.hpp): validators, option groups, the summary line.
#include "cli_options.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ksieve::detail
{

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

void add_inputs(CLI::App & app, input_args & in, bool const required)
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

} // namespace ksieve::detail
