// ksieve dedup: a read (or pair) is known iff enough of its k-mers were added by earlier novel
// reads; the k-mers of the novel ones are added to the filter.
#include "app_detail.hpp"
#include "read_run.hpp"

#include <ksieve/engine/kmer_dedup.hpp>
#include <ksieve/filters/quotient/prefiltered_filter.hpp>
#include <ksieve/filters/quotient/table_counting_filter.hpp>
#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace ksieve
{

namespace
{

// The filter of dedup: a Bloom or cuckoo filter is sized from a first pass over the input (all its
// k-mers: an upper bound of those dedup inserts), as in build; a quotient filter grows.
filter_config dedup_config(dedup_args const & args, unsigned const threads)
{
    filter_config cfg = detail::make_config(args.filter);
    if (cfg.type != filter_type::quotient && cfg.expected == 0)
        cfg.expected = detail::first_pass_expected(args.input, cfg.kmer, threads, cfg.type,
                                                   "for dedup of", args.common.quiet);
    return cfg;
}

// Whether --prefilter (see prefiltered_filter) is asked, where it applies: a lossy quotient filter,
// normalization (a rule that needs three sightings or more: a prefilter false positive adds one to
// a k-mer's count, which changes a hit only for a k-mer seen exactly C - 1 times; with C = 2 it
// would be a false hit for every k-mer seen once), and no saved filter (which must hold every k-mer
// seen). \throws usage_error
bool use_prefilter(dedup_args const & args)
{
    if (!args.prefilter)
    {
        if (args.prefilter_bytes != 0)
            throw usage_error{"--prefilter-size needs --prefilter"};
        return false;
    }
    if (args.filter.type != filter_type::quotient || args.filter.fpr <= 0 ||
        args.out.min_count < 3 || !args.save_filter.empty())
        throw usage_error{
            "--prefilter is for normalization: it needs --min-count 3 or more, a quotient filter "
            "with --fpr above 0, and no --save-filter (a saved filter must hold every k-mer)"};
    return true;
}

// The prefilter's bytes: --prefilter-size; else one per k-mer of --expected, or a quarter of the
// input files' bytes (a gzip'd FASTQ file of reads at 0.5% errors has about one distinct k-mer per
// 3 to 10 bytes: 8 to 27 bits each), 128 MiB for other inputs; at most 128 MiB and at most an
// eighth of the filter tables' share of a planned limit; at least 1 MiB.
std::uint64_t prefilter_bytes(dedup_args const & args)
{
    constexpr std::uint64_t mib = std::uint64_t{1} << 20;
    if (args.prefilter_bytes != 0)
        return std::max(args.prefilter_bytes, mib);
    std::uint64_t bytes = args.filter.expected;
    if (bytes == 0)
        for (auto const & in : args.input.inputs)
        {
            std::error_code ec;
            std::uint64_t const size = in == "-" || !std::filesystem::is_regular_file(in, ec)
                                           ? 512 * mib
                                           : std::filesystem::file_size(in, ec);
            bytes += ec ? 512 * mib : size / 4;
        }
    bytes = std::min(bytes, 128 * mib);
    if (memory_limit_is_planned())
        bytes = std::min(bytes, memory_limit() / 8);
    return std::max(bytes, mib);
}

// The dedup filter. A growing quotient filter under a small memory budget has fewer shards (unless
// --shards is given), so that its empty tables take at most a quarter of the budget: each shard
// forgets within its own share, which must hold a batch. \throws error where even one shard does
// not fit (make_filter_within_memory)
std::unique_ptr<any_filter> make_dedup_filter(dedup_args const & args, filter_config & cfg)
{
    std::unique_ptr<any_filter> filter =
        detail::make_filter_within_memory(cfg, args.filter.expected != 0);
    std::uint64_t const budget = detail::dedup_budget_bytes(*filter, filter->growable() != nullptr);
    while (budget != 0 && args.filter.shards == 0 && cfg.shard_bits > 0 &&
           filter->stats().bytes > budget / 4)
    {
        filter.reset();
        --cfg.shard_bits;
        filter = detail::make_filter_within_memory(cfg, args.filter.expected != 0);
    }
    return filter;
}

// A growing quotient filter counts in per-shard hash tables (table_counting_filter: the same
// counts, about twice the speed and twice the memory) while each shard's table takes at most an
// eighth of the shard's share of the memory budget (a quarter of the budget in all); a shard whose
// table would outgrow that moves into the quotient filter. Other filters (no budget) as they are.
std::unique_ptr<any_filter> counting_tables(std::unique_ptr<any_filter> filter)
{
    std::uint64_t const budget = detail::dedup_budget_bytes(*filter, filter->growable() != nullptr);
    if (budget == 0)
        return filter;
    std::uint64_t const cap = budget / (4 * filter->num_shards());
    return std::make_unique<table_counting_filter>(std::move(filter), cap);
}

// After the run: warnings about the filter, and with --save-filter the filter written under a
// temporary name (committed with the other outputs; null without --save-filter).
std::unique_ptr<io::output_file> finish_dedup_filter(dedup_args const & args, any_filter & filter,
                                                     unsigned const threads)
{
    detail::warn_if_overgrown(filter, args.filter.fpr,
                              args.save_filter.empty() ? std::string{"the dedup filter"}
                                                       : "filter '" + args.save_filter + "'",
                              "k-mers", args.out.strict);
    if (args.save_filter.empty())
        return nullptr;
    // Each quotient-filter shard is saved at the fewest home slots that hold it: a size that
    // depends only on its contents, so speculative additions that were rolled back (and made a
    // shard grow where a read-by-read run would not have) leave no trace.
    fit_filter(filter, 0.0, threads);
    auto saved = std::make_unique<io::output_file>(args.save_filter);
    filter.save(saved->write_path());
    return saved;
}

} // namespace

run_summary run_dedup(dedup_args const & args)
{
    if (args.exact)
        return detail::run_dedup_exact(args);
    detail::read_run run{"dedup", args.common};
    detail::check_dedup_options(args);
    detail::check_dedup_outputs(args);
    unsigned const threads = resolve_threads(args.common.threads);
    bool const prefilter = use_prefilter(args); // before the first pass
    filter_config cfg = dedup_config(args, threads);
    std::unique_ptr<any_filter> filter = make_dedup_filter(args, cfg);
    if (prefilter)
        filter = std::make_unique<prefiltered_filter>(std::move(filter), prefilter_bytes(args));
    else
        filter = counting_tables(std::move(filter));

    io::reader_options reading = detail::reader_opts(threads);
    // dedup holds a record at once, about 40 bytes per base beside the filter: a record that would
    // take more than half of the filter's part of the limit is refused, naming it, before its
    // k-mers are counted
    if (memory_limit_is_planned())
        reading.max_record_bytes = static_cast<std::size_t>(memory_limit() / 2 / 48);
    run.open(args.input, reading, args.out, threads);
    // Counts at or above min_count all mean "hit": unless the filter is saved, such keys are not
    // inserted again (same classes, hits and outputs; a smaller, faster filter). The filter's name
    // in messages: its --save-filter path, or "dedup".
    bool const saving = !args.save_filter.empty();
    kmer_deduplicator dedup{*filter,
                            cfg.kmer,
                            threads,
                            {detail::dedup_rule(args.out), detail::exact_hits_asked(args.out),
                             saving ? 0 : args.out.min_count,
                             saving ? args.save_filter : std::string{"dedup"},
                             detail::dedup_budget_bytes(*filter, filter->growable() != nullptr)}};
    run.summary().hits_exact = dedup.exact_hits();
    run.stream(
        [&](work_item & item)
        {
            bool const forgetting = dedup.forgetting_from_unit() != 0;
            dedup.decide(item);
            if (!forgetting && dedup.forgetting_from_unit() != 0) // said once
                detail::warn_dedup_budget(dedup.budget_bytes(), dedup.forgetting_from_unit());
        });
    detail::note_budget(run.summary(), dedup.budget_bytes(), dedup.budget(),
                        dedup.forgetting_from_unit());
    auto const saved = finish_dedup_filter(args, *filter, threads);
    return run.finish(args.out, args.input.inputs,
                      args.save_filter.empty() ? std::vector<std::string>{}
                                               : std::vector{args.save_filter},
                      saved.get());
}

namespace detail
{

void check_dedup_outputs(dedup_args const & args)
{
    check_filter_output_name("--save-filter", args.save_filter);
    check_read_outputs(args.out, args.input.paired || args.input.interleaved,
                       {{"--save-filter", args.save_filter}});
    std::vector<std::string> outputs = read_output_paths(args.out);
    outputs.insert(outputs.begin(), args.save_filter);
    check_outputs_are_not_inputs(outputs, args.input.inputs);
}

// The bytes that a growing quotient filter's tables may take in dedup (0: no limit): the memory
// limit less what is charged besides those tables (the prefilter). The plan keeps the same bytes
// for dedup's batches whatever -t (and an unplanned default limit's reserve is taken for every core
// of the machine), so that what is forgotten, and so the outputs, are the same for any thread
// count.
std::uint64_t dedup_budget_bytes(any_filter const & filter, bool const growing)
{
    if (!growing)
        return 0;
    std::uint64_t limit = memory_limit();
    if (!memory_limit_is_planned())
    {
        std::uint64_t const machine = physical_memory();
        std::uint64_t const reserve =
            (std::uint64_t{32} << 20) + (std::uint64_t{16} << 20) * resolve_threads(0);
        limit = machine == 0 ? 0 : machine > reserve ? machine - reserve : machine / 4;
    }
    std::uint64_t const tables = filter.stats().bytes;
    std::uint64_t const charged = charged_memory();
    std::uint64_t const besides = charged > tables ? charged - tables : 0;
    return limit > besides ? limit - besides : 1;
}

void note_budget(run_summary & summary, std::uint64_t const budget_bytes,
                 dedup_budget const & budget, std::uint64_t const forgetting_from_unit)
{
    summary.memory_budget = budget_bytes;
    summary.forgotten_kmers = budget.forgotten();
    summary.forgetting_from_unit = forgetting_from_unit;
    summary.kmer_sample_level = budget.level();
}

void warn_dedup_budget(std::uint64_t const budget, std::uint64_t const unit)
{
    std::fprintf(stderr,
                 "ksieve: warning: the dedup filter reached its memory budget of %s at read %llu: "
                 "from here on it looks at a sample of the k-mers and forgets the others (more "
                 "reads are kept, never fewer; --max-memory sets the budget)\n",
                 format_bytes(budget).c_str(), static_cast<unsigned long long>(unit));
}

} // namespace detail

} // namespace ksieve
