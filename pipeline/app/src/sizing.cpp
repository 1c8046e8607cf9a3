// Filters sized from a first pass over the input, made within the memory limit or loaded from
// files, and the warnings about filters that hold more k-mers than they were sized for.
#include "app_detail.hpp"

#include <ksieve/filters/kmers/hyperloglog.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

#include <algorithm>
#include <filesystem>

namespace ksieve::detail
{

// The distinct k-mers of the inputs (HyperLogLog over all hashed keys, + 5%; + 2.5% for a quotient
// filter, which build refits to its contents and which grows where the estimate falls short), for a
// filter sized from a first pass. Over all k-mers, also for build --part: every part job gets the
// same estimate, so the parts have equal parameters and merge into the filter a full build makes.
// Only regular files can be read twice.
std::uint64_t first_pass_expected(input_args const & input, kmer_params const & kmer,
                                  unsigned const threads, filter_type const type,
                                  char const * const command, bool const quiet)
{
    for (auto const & in : input.inputs)
    {
        std::error_code ec;
        if (in == "-" || !std::filesystem::is_regular_file(in, ec))
            throw usage_error{
                "a " + std::string{to_string(type)} + " filter " + command + " '" + in +
                "' (stdin, a pipe or a device) needs --expected N: sizing it from the input "
                "takes a first pass, and only regular files can be read twice"};
    }
    unit_source source{input, reader_opts(threads, false)};
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
            for_each_key_piece(
                engine, item, keys, kmers,
                [&](batch_keys const & piece, auto const &) { engine.add_to_sketch(piece, hll); },
                current_memory_plan().piece_bases);
        },
        [&](work_item const & item)
        {
            records += item.r1.size() + item.r2.size();
            bases += item.r1.bases() + item.r2.bases();
            progress.update(records, 0, records, bases, source.input_fraction());
        });
    progress.finish();
    double const margin =
        type == filter_type::quotient ? 1.025 : 1.05; // about 3 and 6 standard errors
    return std::max<std::uint64_t>(1024, static_cast<std::uint64_t>(hll.estimate() * margin));
}

std::unique_ptr<any_filter> make_filter_within_memory(filter_config const & cfg,
                                                      bool const expected_given)
{
    try
    {
        return make_filter(cfg);
    }
    catch (memory_limit_error const & e)
    {
        std::string const what = expected_given ? "--expected " + std::to_string(cfg.expected)
                                                : "the " + std::to_string(cfg.expected) +
                                                      " distinct k-mers counted in the input";
        throw error{"a filter for " + what + " does not fit in " + format_bytes(memory_limit()) +
                    (memory_limit_is_explicit()
                         ? " (--max-memory)"
                         : " (" + memory_limit_origin() + "; --max-memory sets the limit)") +
                    ": " + e.what()};
    }
}

loaded_filters load_filters(std::vector<std::string> const & paths, load_options const & options,
                            std::function<void(any_filter &, std::string const &)> const & on_load)
{
    loaded_filters filters;
    for (auto const & path : paths)
    {
        filters.owned.push_back(load_filter(path, options));
        filters.views.push_back(filters.owned.back().get());
        on_load(*filters.owned.back(), path);
    }
    return filters;
}

// A filter whose estimated false-positive rate is far above its target (a Bloom filter built with
// too small an --expected, say) calls nearly every read known: in host removal that discards every
// read. A warning, or with --strict an error.
void check_saturation(any_filter const & f, std::string const & name, bool const strict)
{
    double const target = f.target_fpr();
    double const estimate = f.stats().estimated_fpr;
    if (!(target > 0.0) || !(estimate > saturation_factor * target))
        return;
    char text[512];
    std::snprintf(
        text, sizeof text,
        "filter '%s' is saturated: its estimated false-positive rate is %.3g, more than %.0fx its "
        "target "
        "%.3g (it holds more k-mers than it was sized for), so it calls reads known that are not: "
        "rebuild it with a larger --expected (or without one)",
        name.c_str(), estimate, saturation_factor, target);
    if (strict)
        throw error{text};
    std::fprintf(stderr, "ksieve: warning: %s\n", text);
}

// A filter made by the run (build, dedup) that took far more keys than it was sized for
// (--expected) answers with a higher false-positive rate than asked: a quotient filter grows but
// keeps its fingerprint width, a Bloom filter fills up (a cuckoo filter fails instead). Say so
// rather than miss the FPR silently; with `strict`, far above it (saturation_factor), refuse.
void warn_if_overgrown(any_filter const & filter, double const asked, std::string const & what,
                       char const * const keys, bool const strict)
{
    if (filter.type() == filter_type::cuckoo || asked <= 0.0)
        return;
    filter_stats const s = filter.stats();
    if (s.estimated_fpr <= 1.5 * asked)
        return;
    bool const given = filter.expected() != 0;
    std::string const bound =
        given ? std::string{"the --expected it was sized for"}
              : "the 2^30 " + std::string{keys} + " a quotient filter is sized for by default";
    std::string const remedy = given
                                   ? std::string{"a larger --expected (or leave it out)"}
                                   : "--expected with the number of distinct " + std::string{keys};
    char text[640];
    std::snprintf(text, sizeof text,
                  "%s holds %llu distinct %s, more than %s; its estimated false-positive rate is "
                  "%.3g instead of %.3g: give %s",
                  what.c_str(), static_cast<unsigned long long>(s.distinct), keys, bound.c_str(),
                  s.estimated_fpr, asked, remedy.c_str());
    if (strict && s.estimated_fpr > saturation_factor * asked)
        throw error{text};
    std::fprintf(stderr, "ksieve: warning: %s\n", text);
}

// The result of merge (or intersect, subtract) keeps the fingerprints of its narrowest input, and
// their false-positive rate grows with the k-mers the result holds: per-sample filters sized for
// their own k-mers (build without --expected) merge into a filter whose rate is far above their
// target. Say so, and how to merge at the target.
void warn_if_combined_above_target(filter_stats const & s, double const target,
                                   std::string const & output)
{
    if (!(target > 0.0) || !(s.estimated_fpr > 1.5 * target))
        return;
    std::fprintf(
        stderr,
        "ksieve: warning: '%s' holds %llu distinct k-mers, more than its inputs were sized for; "
        "its "
        "estimated false-positive rate is %.3g instead of %.3g: build the inputs with the same "
        "--expected, at least the distinct k-mers of the result, to combine them at the target\n",
        output.c_str(), static_cast<unsigned long long>(s.distinct), s.estimated_fpr, target);
}

} // namespace ksieve::detail
