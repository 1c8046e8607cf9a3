// ksieve merge, intersect and subtract, and ksieve info: their options, declared next to what they
// fill (the commands themselves are cmd_combine.cpp and cmd_info.cpp).
#include "app_detail.hpp"
#include "cli_options.hpp"

#include <ksieve/filters/common/any_filter.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

namespace ksieve::detail
{

namespace
{

// The help texts of a set operation.
struct combine_text
{
    char const * what;
    char const * output_help;
    char const * inputs_help;
    char const * example;
};

combine_text text_of(set_operation const op)
{
    switch (op)
    {
    case set_operation::intersect:
        return {"K-mers present in every input filter (quotient: the smallest count; Bloom: AND)",
                "Filter file of the intersection", "Filter files",
                "ksieve intersect -o shared.ksf sample1.ksf sample2.ksf sample3.ksf"};
    case set_operation::subtract:
    case set_operation::subtract_counts:
        return {"K-mers of the first filter absent from every other one (quotient filters)",
                "Filter file of the difference",
                "The filter to subtract from, then the filters to subtract",
                "ksieve subtract -o host_only.ksf host.ksf microbes.ksf   (host filter that spares "
                "the microbes' k-mers)"};
    case set_operation::unite:
        break;
    }
    return {"Union of compatible filter files (quotient: counts add; Bloom: OR)",
            "Merged filter file", "Filter files",
            "ksieve merge -o all.ksf sample1.ksf sample2.ksf sample3.ksf"};
}

// merge, intersect or subtract.
class combine_command final : public subcommand
{
public:
    combine_command(CLI::App & app, std::string & max_memory, set_operation const op)
        : subcommand{app.add_subcommand(operation_name(op), text_of(op).what)}
    {
        args_.op = op;
        declare(max_memory, text_of(op));
    }
    [[nodiscard]] common_args const * common() const noexcept override { return &args_.common; }
    void run() override
    {
        if (subtract_counts_)
            args_.op = set_operation::subtract_counts;
        auto const s = run_merge(args_);
        if (!args_.common.quiet)
            std::fprintf(stderr,
                         "ksieve %s: %zu filters into '%s': %llu distinct k-mers in %.2f s\n",
                         operation_name(args_.op), args_.inputs.size(), args_.output.c_str(),
                         static_cast<unsigned long long>(s.distinct), s.seconds);
    }

private:
    void declare(std::string & max_memory, combine_text const & text);

    merge_args args_;
    bool subtract_counts_{false};
};

void combine_command::declare(std::string & max_memory, combine_text const & text)
{
    set_operation const op = args_.op;
    merge_args & m = args_;
    CLI::App * const c = &this->app();
    add_max_memory(*c, max_memory);
    add_common(*c, m.common);
    c->add_option("-o,--output", m.output, text.output_help)->required();
    c->add_option("--min-count", m.min_count, "A k-mer counts in an input only with a count >= C")
        ->default_val(1)
        ->check(whole_number);
    if (op == set_operation::subtract)
        c->add_flag("--counts", subtract_counts_,
                    "Subtract the counts of the other filters instead: keep a k-mer whose count is "
                    "larger than their "
                    "sum, with the difference");
    if (op == set_operation::unite)
        c->add_flag("--label-inputs", m.label_inputs,
                    "A labeled result: each unlabeled input is a label named by its file name "
                    "(without directory and extensions); labeled inputs keep their labels");
    c->add_option("inputs", m.inputs, text.inputs_help)->required();
    c->footer(std::string{"Example:\n  "} + text.example);
}

class info_command final : public subcommand
{
public:
    explicit info_command(CLI::App & app)
        : subcommand{app.add_subcommand(
              "info", "Parameters, shards, load, distinct k-mers and estimated FPR of a filter")}
    {
        CLI::App * const c = &this->app();
        add_common(*c, args_.common);
        c->add_flag("--json", args_.json, "JSON output");
        c->add_option("filter", args_.filter, "Filter file")->required();
        c->footer("Example:\n  ksieve info --json host.ksf");
    }
    [[nodiscard]] common_args const * common() const noexcept override { return nullptr; }
    void run() override { run_info(args_, std::cout); }

private:
    info_args args_;
};

} // namespace

std::unique_ptr<subcommand> add_combine_command(CLI::App & app, std::string & max_memory,
                                                set_operation const op)
{
    return std::make_unique<combine_command>(app, max_memory, op);
}

std::unique_ptr<subcommand> add_info_command(CLI::App & app)
{
    return std::make_unique<info_command>(app);
}

} // namespace ksieve::detail
