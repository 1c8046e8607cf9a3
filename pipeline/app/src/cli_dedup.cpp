// ksieve dedup: its options, declared next to the texts they fill, and their parsing into the
// command's arguments (the command itself is cmd_dedup.cpp, with cmd_dedup_exact.cpp for --exact).
#include "app_detail.hpp"
#include "cli_options.hpp"

#include <ksieve/filters/common/any_filter.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace ksieve::detail
{

namespace
{

// dedup --exact: the k-mer options of dedup, given at all, are usage errors (run_dedup refuses
// values other than their defaults). \throws usage_error
void refuse_kmer_options_of_exact(CLI::App const & dedup)
{
    for (std::string const option : {"--kmer", "--sampling", "--min-count", "--min-hit-fraction",
                                     "--prefilter", "--prefilter-size", "--save-filter"})
        if (dedup.count(option) > 0)
            detail::refuse_for_exact(option == "--kmer" ? std::string{"-k/--kmer"} : option);
}

class dedup_command final : public subcommand
{
public:
    dedup_command(CLI::App & app, std::string & max_memory)
        : subcommand{app.add_subcommand(
              "dedup", "Streaming deduplication / digital normalization: a read is known if "
                       "enough of its k-mers were\n"
                       "seen in earlier novel reads; novel reads' k-mers are inserted")}
    {
        // --fpr given or not: its default depends on --exact
        args_.filter.fpr = std::numeric_limits<double>::quiet_NaN();
        declare(max_memory);
    }
    [[nodiscard]] common_args const * common() const noexcept override { return &args_.common; }
    [[nodiscard]] char const * memory_plan_name() const noexcept override { return "dedup"; }
    void set_command_line(std::string const & line) override { args_.common.command_line = line; }
    void run() override;

private:
    void declare(std::string & max_memory);

    dedup_args args_;
    std::string type_, expected_, sampling_, prefilter_size_;
};

void dedup_command::declare(std::string & max_memory)
{
    CLI::App * const c = &this->app();
    add_max_memory(*c, max_memory);
    add_common(*c, args_.common);
    add_filter_options(*c, args_.filter, type_, expected_, "0.001; 0 with --exact");
    add_classify_outputs(*c, args_.out, 0.5);
    c->add_flag("--exact", args_.exact,
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
    c->add_option("--save-filter", args_.save_filter, "Write the accumulated filter here");
    c->add_flag("--prefilter", args_.prefilter,
                "Normalization (--min-count >= 3, a quotient filter): a small Bloom filter "
                "remembers the k-mers seen "
                "once, and the quotient filter admits a k-mer on its second sighting");
    c->add_option("--sampling", sampling_,
                  "Which k-mers of each read the rule counts and the filter stores: 'all', or "
                  "'minimizer:W' (the "
                  "smallest-hash k-mer of every W consecutive ones: about 2 / (W + 1) of them)")
        ->default_val("all");
    c->add_option("--prefilter-size", prefilter_size_,
                  "Bytes of the prefilter (such as 256M; at least 1M); default: 1 byte per k-mer "
                  "of --expected if given, else a quarter of the input files' bytes (128M for "
                  "stdin), at most 128M and at most an eighth of the filter tables' part of "
                  "the memory limit");
    add_inputs(*c, args_.input);
    c->footer("Example:\n  ksieve dedup --novel unique.fq.gz reads.fq.gz\n"
              "  ksieve dedup --min-count 20 --novel normalized.fq.gz reads.fq.gz   (normalize to "
              "depth 20)\n"
              "  ksieve dedup --min-count 20 --sampling minimizer:9 --novel normalized.fq.gz "
              "reads.fq.gz   (faster)\n"
              "  ksieve dedup --exact --paired --novel u_R1.fq.gz --novel2 u_R2.fq.gz R1.fq.gz "
              "R2.fq.gz   (exact duplicates)");
}

void dedup_command::run()
{
    auto & d = args_;
    d.filter.type = parse_filter_type(type_);
    if (std::isnan(d.filter.fpr))
        d.filter.fpr = d.exact ? 0.0 : 0.001; // --exact: exact 64-bit keys by default
    if (d.exact)
        refuse_kmer_options_of_exact(app());
    parse_expected(expected_, d.filter);
    parse_sampling(sampling_, d.filter);
    if (!prefilter_size_.empty())
        d.prefilter_bytes = parse_size(prefilter_size_, "--prefilter-size");
    auto const s = run_dedup(d);
    if (!d.common.quiet)
        print_summary("dedup", s);
}

} // namespace

std::unique_ptr<subcommand> add_dedup_command(CLI::App & app, std::string & max_memory)
{
    return std::make_unique<dedup_command>(app, max_memory);
}

} // namespace ksieve::detail
