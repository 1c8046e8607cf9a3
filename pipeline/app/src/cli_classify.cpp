// ksieve classify: its options, declared next to the texts they fill, and their parsing into the
// command's arguments (the command itself is cmd_classify.cpp).
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

class classify_command final : public subcommand
{
public:
    classify_command(CLI::App & app, std::string & max_memory)
        : subcommand{app.add_subcommand(
              "classify", "Classify each read (or pair) as known or novel against filters")}
    {
        declare(max_memory);
    }
    [[nodiscard]] common_args const * common() const noexcept override { return &args_.common; }
    [[nodiscard]] char const * memory_plan_name() const noexcept override { return "classify"; }
    void set_command_line(std::string const & line) override { args_.common.command_line = line; }
    void run() override
    {
        auto const s = run_classify(args_);
        if (!args_.common.quiet)
            print_summary("classify", s);
    }

private:
    void declare(std::string & max_memory);

    classify_args args_;
};

void classify_command::declare(std::string & max_memory)
{
    CLI::App * const c = &this->app();
    add_max_memory(*c, max_memory);
    add_common(*c, args_.common);
    c->add_option("-f,--filter", args_.filters,
                  "Filter file (repeat for several; a hit in any counts)")
        ->required()
        ->allow_extra_args(false);
    add_classify_outputs(*c, args_.out, classify_default_fraction);
    c->add_option("--split-by-label", args_.out.split_by_label,
                  "Labeled filter: write the known reads of each label to PATTERN with {label} "
                  "replaced by the label (and by 'ambiguous' for ties), such as out/{label}.fq.gz");
    c->add_option("--split-by-label2", args_.out.split_by_label2,
                  "Mate 2 of --split-by-label (otherwise pairs are interleaved)");
    c->add_option("--min-hits", args_.out.min_hits,
                  "Known also needs at least A hits (a pair: of both mates together)")
        ->default_val(classify_default_min_hits)
        ->check(whole_number);
    add_inputs(*c, args_.input);
    c->footer(
        "Example:\n  ksieve classify -f host.ksf --paired R1.fq.gz R2.fq.gz --novel clean_R1.fq.gz "
        "--novel2 clean_R2.fq.gz --stats sample.json --multiqc sample_mqc.json");
}

} // namespace

std::unique_ptr<subcommand> add_classify_command(CLI::App & app, std::string & max_memory)
{
    return std::make_unique<classify_command>(app, max_memory);
}

} // namespace ksieve::detail
