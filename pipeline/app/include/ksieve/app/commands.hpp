#pragma once
/*! \file
 * \brief The subcommands: one arguments struct and one core function each. `main` only parses the
 * command line into these structs (cli.cpp); tests call the core functions directly.
 *
 * Every core function throws ksieve::error (or a subclass) on failure and leaves no partial output
 * file behind (outputs are committed only when the whole run succeeded).
 */
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ksieve/engine/key_part_range.hpp>
#include <ksieve/filters/common/filter.hpp>
#include <ksieve/io/unit_source.hpp>

namespace ksieve
{

/*! \brief Options shared by every subcommand. */
struct common_args
{
    unsigned threads{0}; //!< 0 = all cores
    bool quiet{false};
    std::string command_line; //!< the command line as given, for --stats and --multiqc
};

/*! \brief Parse "I/S" of build --part: part I of S of the key space. \throws usage_error */
[[nodiscard]] key_part_range parse_part(std::string const & text);

struct filter_args;
/*! \brief Parse the value of --expected into f: a positive number of distinct k-mers, or "auto"
 * (sized from a first pass over the input). \throws usage_error */
void parse_expected(std::string const & text, filter_args & f);

/*! \brief Filter construction options (build, dedup). */
struct filter_args
{
    unsigned k{31};
    bool canonical{true};
    filter_type type{filter_type::quotient};
    double fpr{0.001};
    std::uint64_t expected{0};
    bool expected_auto{false}; //!< --expected auto: size from a first pass over the input (build)
    unsigned shards{0};        //!< power of two; 0 = default (64, fewer for k < 7)
    std::uint64_t seed{default_hash_seed};
    double max_load{0.9};
    std::uint32_t window{1};         //!< --sampling minimizer:W (1 = every k-mer)
    std::uint32_t dust_threshold{0}; //!< --mask dust:T, T in hundredths (0 = --mask none)
    std::uint32_t spaced{0};         //!< --spaced: kmer_params::spaced (0 = none)
};

/*! \brief Parse the value of --sampling into f: "all", "minimizer:W" (1 <= W <= 1024; minimizer:1 =
 * every k-mer). \throws usage_error */
void parse_sampling(std::string const & text, filter_args & f);

/*! \brief Parse the value of --mask into f: "none", "dust" (dust:1.5) or "dust:T" (0 < T <= 15, two
 * decimals at most). \pre f.window and f.k already set. \throws usage_error (also for a mask
 * without minimizer sampling or with k < 8) */
void parse_mask(std::string const & text, filter_args & f);

/*! \brief build's default --mask. */
inline constexpr char const * build_default_mask = "none";

/*! \brief build's default --spaced ("auto": build_spaced_pattern for k = 31 with minimizer
 * sampling, none otherwise), and that pattern: 31 positions, every fifth one from the sixth
 * ignored (docs/design.md, "Why the defaults"). */
inline constexpr char const * build_default_spaced = "auto";
inline constexpr char const * build_spaced_pattern = "1111101111011110111101111011111";

/*! \brief Parse the value of --spaced into f: "none", "auto" (see build_default_spaced) or a
 * pattern of k characters, 1 for a compared position and 0 for an ignored one (valid_spaced()).
 * \pre f.k, f.canonical and f.window already set. \throws usage_error (also for a pattern without
 * minimizer sampling) */
void parse_spaced(std::string const & text, filter_args & f);

/*! \brief classify's default decision rule, and build's default sampling and false-positive rate:
 * chosen together by measured accuracy on host depletion (docs/design.md, "Why the defaults"). A
 * read of n looked-up k-mers is falsely known with probability about (n x FPR)^2 / 2
 * under a two-hit rule. */
inline constexpr double classify_default_fraction = 0.004;
inline constexpr std::uint64_t classify_default_min_hits = 2;
inline constexpr char const * build_default_sampling = "minimizer:8";
inline constexpr double build_default_fpr = 0.0001;
/*! \brief build's default false-positive rate of a quotient filter of minimizers: classify's
 * second look at a read one hit short asks for every k-mer, about four times its minimizers. */
inline constexpr double build_default_sampled_fpr = 0.00001;

/*! \brief build's default --fpr for a filter of `type` and sampling window `window`. */
[[nodiscard]] constexpr double build_default_fpr_for(filter_type const type,
                                                     std::uint32_t const window) noexcept
{
    return type != filter_type::quotient ? 0.001
           : window > 1                  ? build_default_sampled_fpr
                                         : build_default_fpr;
}

/*! \brief classify and dedup warn about (with --strict: refuse) a filter whose estimated
 * false-positive rate exceeds its target by more than this factor. */
inline constexpr double saturation_factor = 10.0;

/*! \brief Classification options and outputs (classify, dedup). */
struct classify_output_args
{
    double min_hit_fraction{0.5};
    std::uint64_t min_hits{0}; //!< known also needs hits >= this (classify)
    std::uint64_t min_count{1};
    std::string novel, known, novel2, known2; //!< empty = not written
    std::string report;                       //!< per-read TSV
    std::string stats;                        //!< JSON summary
    /*! \brief MultiQC custom-content JSON (known / novel reads of the sample); beside it the
     * General Statistics columns (multiqc_general_path). */
    std::string multiqc;
    std::string sample; //!< sample name of the stats; empty: from the first input's name
    /*! \brief --split-by-label PATTERN (with `{label}`): the known reads of each label (labeled
     * filters); --split-by-label2 for mate 2. */
    std::string split_by_label, split_by_label2;
    /*! \brief Look up every k-mer so that hits are exact (--exact-hits; implied by --report).
     * Slower; the classes are the same either way. */
    bool exact_hits{false};
    bool strict{false}; //!< refuse (instead of warning about) filters far above their target FPR
    int compression_level{-1}; //!< -1 = the format's default (gzip 1, zstd 3, xz 3, bzip2 9)
};

/*! \brief The General Statistics file that --multiqc `path` writes beside it: `_mqc.json` of the
 * file name becomes `_general_mqc.json` (S_mqc.json.gz: S_general_mqc.json.gz), any other name
 * gets `_general_mqc.json` appended; empty (nothing written) for an empty path, standard output
 * or a device (/dev/..., /proc/...). */
[[nodiscard]] std::string multiqc_general_path(std::string const & path);

/*! \brief The sample name of inputs: the first input's file name without directories, compression
 * and format extensions and a mate suffix (_R1, _R1_001, _1, .R1); "stdin" for "-". */
[[nodiscard]] std::string sample_name(std::vector<std::string> const & inputs);

struct build_args
{
    common_args common;
    input_args input;
    filter_args filter;
    std::string output;
    std::optional<key_part_range> part; //!< --part I/S: only the k-mers of part I of S
    bool no_counts{false}; //!< --no-counts: every stored k-mer with count 1 (quotient filters)
    /*! \brief --label NAME=FILE[,FILE...]: (label, its inputs), in the order given. */
    std::vector<std::pair<std::string, std::vector<std::string>>> labels;
    std::string label_by;  //!< --label-by file|record (empty: not given)
    std::string label_map; //!< --label-map FILE: record name -> label (TSV), with --label-by record
    /*! \brief Whether the filter is labeled. */
    [[nodiscard]] bool labeled() const noexcept { return !labels.empty() || !label_by.empty(); }
};

/*! \brief Parse one --label value "NAME=FILE[,FILE...]" into args.labels. \throws usage_error */
void parse_label(std::string const & text, build_args & args);

struct classify_args
{
    common_args common;
    input_args input;
    std::vector<std::string> filters;
    classify_output_args out;
};

struct dedup_args
{
    common_args common;
    input_args input;
    filter_args filter;
    classify_output_args out;
    std::string save_filter;
    /*! \brief Admit k-mers to the quotient filter on their second sighting (a prefilter of
     * collision keys remembers the first). Applies to a quotient filter with fpr > 0, min_count >=
     * 3 and no save_filter. */
    bool prefilter{false};
    std::uint64_t prefilter_bytes{0}; //!< the prefilter's size; 0: from the inputs (see run_dedup)
    /*! \brief --exact: a unit is known iff its sequence (a pair: both mates') was seen in an
     * earlier unit, on either strand unless filter.canonical is false (--no-canonical); the k-mer
     * options (k, sampling, min_count, min_hit_fraction, prefilter, save_filter) do not apply. */
    bool exact{false};
};

/*! \brief merge, intersect and subtract. */
struct merge_args
{
    common_args common;
    std::vector<std::string>
        inputs; //!< subtract: the filter to subtract from, then the filters to subtract
    std::string output;
    set_operation op{set_operation::unite};
    std::uint64_t min_count{1}; //!< a k-mer counts in an input only with a count >= this
    /*! \brief --label-inputs: each unlabeled input is a label named by its file name (labels.hpp,
     * label_of_path); labeled inputs keep their labels. */
    bool label_inputs{false};
};

/*! \brief What merge, intersect and subtract report. */
struct combine_summary
{
    std::uint64_t distinct{0}; //!< distinct k-mers (or fingerprints) of the result
    double seconds{0};
};

struct info_args
{
    common_args common;
    std::string filter;
    bool json{false};
};

/*! \brief Summary of a build/classify/dedup run (what --stats writes).
 * Records are counted one by one (known_records + novel_records = records); units are what is
 * classified: a read, or a pair with --paired/--interleaved. */
struct run_summary
{
    std::uint64_t records{0};
    std::uint64_t known_records{0};
    std::uint64_t novel_records{0};
    std::uint64_t units{0};
    std::uint64_t known_units{0};
    std::uint64_t novel_units{0};
    /*! \brief classify: known units that a second look at every k-mer decided (their minimizers
     * left them one hit short). */
    std::uint64_t rescued_units{0};
    std::uint64_t kmers{
        0}; //!< valid k-mer positions (classify/dedup: of all units; build: inserted)
    std::uint64_t hits{0};  //!< exact only if hits_exact (else a lower bound)
    bool hits_exact{false}; //!< every k-mer was looked up (--report or --exact-hits)
    std::uint64_t bases{0};
    std::uint64_t known_bases{0}; //!< bases of the known units (a pair: both mates)
    std::uint64_t novel_bases{0}; //!< bases of the novel units; known_bases + novel_bases = bases
    double seconds{0};
    unsigned threads{1};
    bool paired{false};
    /*! \brief dedup: the bytes its filter's tables may take (0: no limit), the fingerprints it
     * forgot to stay within them, and the unit (read or pair, from 1) before which it first forgot
     * (0: never). */
    std::uint64_t memory_budget{0};
    std::uint64_t forgotten_kmers{0};
    std::uint64_t forgetting_from_unit{0};
    /*! \brief dedup: its rule looked at 2^-kmer_sample_level of the k-mers at the end. */
    unsigned kmer_sample_level{0};
    /*! \brief Labeled filters: the label names, then "ambiguous"; reads (records) per entry. */
    std::vector<std::string> label_names;
    std::vector<std::uint64_t> label_reads;
};

/*! \brief `ksieve build`. */
run_summary run_build(build_args const & args);
/*! \brief `ksieve classify`. */
run_summary run_classify(classify_args const & args);
/*! \brief `ksieve dedup`. */
run_summary run_dedup(dedup_args const & args);
/*! \brief `ksieve merge`, `intersect` and `subtract` (args.op). */
combine_summary run_merge(merge_args const & args);
/*! \brief `ksieve info`: writes the description to `out`. */
void run_info(info_args const & args, std::ostream & out);

/*! \brief Resolve -t: 0 -> number of cores; a count above 4 per core (at least 16) is capped there,
 * with a warning on stderr. */
[[nodiscard]] unsigned resolve_threads(unsigned requested) noexcept;

} // namespace ksieve
