// ksieve.build_filter: a filter of the k-mers of sequences held in memory, written to a file. The
// options are `ksieve build`'s, parsed and checked by its own functions, and the filter is sized,
// filled and fitted as build does it for a FASTA file of the same sequences (same batches), so that
// the file is the one build writes.
#include "app_detail.hpp"
#include "binding.hpp"

#include <ksieve/filters/kmers/hyperloglog.hpp>
#include <ksieve/filters/support/error.hpp>

#include <pybind11/stl.h>

#include <algorithm>
#include <bit>
#include <optional>

namespace ksieve::python
{

namespace
{

// The sizing and refitting of build (cmd_build.cpp and first_pass_expected() in sizing.cpp): a
// first pass counts the distinct k-mers (HyperLogLog, + 2.5% for a quotient filter, + 5% for the
// others, at least 1024); a quotient filter's shards hold at least 2^18 expected k-mers each unless
// the shards are given; a filter of at most 64 MiB is refitted to its contents, a larger one where
// that saves more than 1/16 of a shard's slots.
constexpr double quotient_margin = 1.025;
constexpr double other_margin = 1.05;
constexpr std::uint64_t least_expected = 1024;
constexpr unsigned least_shard_bits_of_expected = 18;
constexpr std::uint64_t fit_bytes = std::uint64_t{64} << 20;
constexpr double fit_slack = 1.0 / 16;

// The options of build_filter as `ksieve build` parses them. \throws usage_error
build_args parse_build_options(std::string const & path, unsigned const k,
                               std::optional<double> const fpr, std::string const & sampling,
                               std::string const & mask, std::string const & spaced,
                               std::string const & type, bool const canonical,
                               std::uint64_t const seed, unsigned const shards,
                               py::object const & expected, double const max_load,
                               bool const no_counts)
{
    build_args args;
    args.output = path;
    args.input.inputs = {"<sequences>"};
    filter_args & f = args.filter;
    f.k = k;
    f.canonical = canonical;
    f.type = parse_filter_type(type);
    parse_expected(expected.is_none() ? std::string{} : std::string{py::str(expected)}, f);
    f.shards = shards;
    f.seed = seed;
    f.max_load = max_load;
    parse_sampling(sampling, f);
    f.fpr = fpr.value_or(build_default_fpr_for(f.type, f.window));
    parse_mask(mask, f);
    parse_spaced(spaced, f);
    args.no_counts = no_counts;
    if (no_counts && f.type != filter_type::quotient)
        throw usage_error{"no_counts needs type 'qf' (the other types keep no counts)"};
    detail::check_build_options(args);
    detail::check_filter_output_name("path", path);
    detail::check_output_paths({{"path", path}});
    return args;
}

// The distinct k-mers of the sequences, for a filter sized from a first pass.
std::uint64_t counted_expected(std::vector<std::string> const & seqs, batch_engine const & engine,
                               filter_type const type)
{
    hyperloglog hll;
    batch_keys keys;
    std::vector<std::uint64_t> kmers;
    for_each_batch(seqs, {},
                   [&](work_item & item)
                   {
                       for_each_key_piece(engine, item, keys, kmers,
                                          [&](batch_keys const & piece, auto const &)
                                          { engine.add_to_sketch(piece, hll); });
                   });
    double const margin = type == filter_type::quotient ? quotient_margin : other_margin;
    return std::max<std::uint64_t>(least_expected,
                                   static_cast<std::uint64_t>(hll.estimate() * margin));
}

// Build the filter of `seqs` that `args` describe and write it to args.output.
void build_into_file(std::vector<std::string> const & seqs, build_args const & args,
                     unsigned const threads)
{
    filter_config cfg = detail::make_config(args.filter);
    batch_engine engine{cfg.kmer, threads};
    if (cfg.expected == 0) // sequences in memory can be read twice, as regular files can
        cfg.expected = counted_expected(seqs, engine, cfg.type);
    if (args.filter.shards == 0 && cfg.type == filter_type::quotient)
    {
        std::uint64_t const most_shards =
            std::max<std::uint64_t>(1, cfg.expected >> least_shard_bits_of_expected);
        cfg.shard_bits =
            std::min(cfg.shard_bits, static_cast<unsigned>(std::bit_width(most_shards) - 1));
    }
    auto filter = detail::make_filter_within_memory(cfg, args.filter.expected != 0);
    batch_keys keys;
    std::vector<std::uint64_t> kmers;
    for_each_batch(seqs, {},
                   [&](work_item & item)
                   {
                       for_each_key_piece(engine, item, keys, kmers,
                                          [&](batch_keys const & piece, auto const &)
                                          { engine.insert(*filter, piece, nullptr, args.output); });
                   });
    detail::warn_if_overgrown(*filter, args.filter.fpr, "filter '" + args.output + "'");
    if (args.no_counts)
        drop_counts(*filter, threads);
    fit_filter(*filter, filter->stats().bytes <= fit_bytes ? 0.0 : fit_slack, threads);
    io::output_file out{args.output};
    filter->save(out.write_path());
    out.commit();
}

} // namespace

void register_build(py::module_ & m)
{
    m.def(
        "build_filter",
        [](py::object const & seqs, std::string const & path, unsigned const k,
           std::optional<double> const fpr, std::string const & sampling, std::string const & mask,
           std::string const & spaced, std::string const & type, bool const canonical,
           std::uint64_t const seed, unsigned const shards, py::object const & expected,
           double const max_load, bool const no_counts, unsigned const threads)
        {
            std::vector<std::string> const s = sequences_of(seqs, "seqs");
            build_args const args =
                parse_build_options(path, k, fpr, sampling, mask, spaced, type, canonical, seed,
                                    shards, expected, max_load, no_counts);
            {
                py::gil_scoped_release release;
                build_into_file(s, args, resolve_threads(threads));
            }
            return py_filter::open(path, 1);
        },
        py::arg("seqs"), py::arg("path"), py::kw_only(), py::arg("k") = 31,
        py::arg("fpr") = py::none(), py::arg("sampling") = build_default_sampling,
        py::arg("mask") = build_default_mask, py::arg("spaced") = build_default_spaced,
        py::arg("type") = "qf", py::arg("canonical") = true, py::arg("seed") = default_hash_seed,
        py::arg("shards") = 0, py::arg("expected") = py::none(), py::arg("max_load") = 0.9,
        py::arg("no_counts") = false, py::arg("threads") = 1,
        "Build a filter of the k-mers of `seqs` (str, bytes, or a list of them) with the options "
        "of `ksieve build` (fpr None: build's default for the type; expected None: counted, an "
        "int or 'auto'; threads 0: every core), write it to `path` and return it opened. The file "
        "is the one `ksieve build` writes from a FASTA file of the same sequences.");
}

} // namespace ksieve::python
