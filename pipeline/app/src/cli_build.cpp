// ksieve build: its options, declared next to the texts they fill, and their parsing into the
// command's arguments (the command itself is cmd_build.cpp).
#include "app_detail.hpp"
#include "cli_options.hpp"

#include <ksieve/filters/common/any_filter.hpp>
#include <ksieve/filters/support/error.hpp>

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

class build_command final : public subcommand
{
public:
    build_command(CLI::App & app, std::string & max_memory)
        : subcommand{app.add_subcommand(
              "build", "Insert the k-mers of all INPUT sequences into a new filter file")}
    {
        // --fpr given or not: its default depends on the filter type
        args_.filter.fpr = std::numeric_limits<double>::quiet_NaN();
        declare(max_memory);
    }
    [[nodiscard]] common_args const * common() const noexcept override { return &args_.common; }
    void set_command_line(std::string const & line) override { args_.common.command_line = line; }
    void run() override;

private:
    void declare(std::string & max_memory);

    build_args args_;
    std::string type_, expected_, sampling_, mask_, spaced_, part_, shard_;
    std::vector<std::string> labels_;
};

void build_command::declare(std::string & max_memory)
{
    CLI::App * const c = &this->app();
    add_max_memory(*c, max_memory);
    add_common(*c, args_.common);
    c->add_option("-o,--output", args_.output, "Filter file to write")->required();
    add_filter_options(*c, args_.filter, type_, expected_,
                       "0.00001 for qf with minimizer sampling, 0.0001 for qf of every k-mer, "
                       "0.001 for the others");
    c->add_option(
         "--sampling", sampling_,
         "Which k-mers to store: 'all', or 'minimizer:W' (the smallest-hash k-mer of every W "
         "consecutive ones; classify then looks up the same minimizers of each read)")
        ->default_val(build_default_sampling);
    c->add_option("--mask", mask_,
                  "Skip low-complexity minimizers at build and classify time: 'none', 'dust' "
                  "(dust:1.5) or 'dust:T' (a minimizer whose trinucleotide DUST score exceeds T; "
                  "needs --sampling minimizer:W; recorded in the filter)")
        ->default_val(build_default_mask);
    c->add_option("--spaced", spaced_,
                  "Spaced k-mers: 'auto' (for k 31 with minimizer sampling the pattern " +
                      std::string{build_spaced_pattern} +
                      ", none otherwise), 'none', or k characters of 1 (compared) and 0 (ignored "
                      "at build and classify time, so that a sequencing error there does not "
                      "break the k-mer); recorded in the filter")
        ->default_val(build_default_spaced);
    c->add_flag("--no-counts", args_.no_counts,
                "Quotient filter: store every k-mer with count 1 (presence only), so that a filter "
                "of several assemblies of one host grows only by their distinct k-mers; classify "
                "--min-count above 1 then finds nothing");
    c->add_option("--part", part_,
                  "Build only the k-mers of part I of S of the key space (I/S, I from 0; "
                  "S <= 65536; default: the whole key space): scatter over S jobs, then merge "
                  "(--shard I/S: its older name)");
    c->add_option("--shard", shard_, "The older name of --part")->group(""); // not listed
    c->add_option("--label", labels_,
                  "NAME=FILE[,FILE...]: a labeled filter, whose every k-mer carries the set of "
                  "labels whose files hold it (repeatable; no other input needed)")
        ->allow_extra_args(false);
    c->add_option("--label-by", args_.label_by,
                  "Label the inputs: 'file' (each input file is a label, named by its file name "
                  "without directory and extensions) or 'record' (each record's name, or its label "
                  "in --label-map)");
    c->add_option("--label-map", args_.label_map,
                  "With --label-by record: a TSV of record name, tab, label");
    add_inputs(*c, args_.input, false);
    c->footer("Example:\n  ksieve build -o host.ksf host.fa.gz\n"
              "  ksieve build --part 0/4 -o part0.ksf host.fa.gz   (then merge the parts)\n"
              "  ksieve build -o screen.ksf --label human=GRCh38.fa.gz --label phix=phix.fa");
}

void build_command::run()
{
    auto & b = args_;
    b.filter.type = parse_filter_type(type_);
    parse_expected(expected_, b.filter);
    parse_sampling(sampling_, b.filter);
    if (std::isnan(b.filter.fpr))
        b.filter.fpr = build_default_fpr_for(b.filter.type, b.filter.window);
    parse_mask(mask_, b.filter);
    parse_spaced(spaced_, b.filter);
    if (b.no_counts && b.filter.type != filter_type::quotient)
        throw usage_error{"--no-counts needs --type qf (the other types keep no counts)"};
    if (!part_.empty() && !shard_.empty())
        throw usage_error{"--part and --shard (its older name) are one option: give it once"};
    if (!part_.empty() || !shard_.empty())
        b.part = parse_part(part_.empty() ? shard_ : part_);
    for (std::string const & l : labels_)
        parse_label(l, b);
    auto const s = run_build(b);
    if (!b.common.quiet)
        print_summary("build", s);
}

} // namespace

std::unique_ptr<subcommand> add_build_command(CLI::App & app, std::string & max_memory)
{
    return std::make_unique<build_command>(app, max_memory);
}

} // namespace ksieve::detail
