#pragma once
// The pieces of the command line that the subcommands share (internal to the app layer): the
// validators of option values, the option groups several commands take (threads, memory, inputs,
// the filter's parameters, the read outputs), the end-of-run summary line, and `subcommand`, what
// each command's file (cli_build.cpp, cli_classify.cpp, cli_dedup.cpp, cli_combine.cpp) gives
// cli.cpp: its options declared next to the raw texts they fill and the parsing of those texts
// into the command's arguments.
#include <ksieve/app/commands.hpp>

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

namespace ksieve::detail
{

// A validator with a message that says what a value must be (CLI11's own print the type's whole
// range): a whole number.
extern CLI::Validator const whole_number;

// -t/--threads and -q/--quiet.
void add_common(CLI::App & app, common_args & c);
// --max-memory, as text (parsed once a command is chosen: plan_memory_for).
void add_max_memory(CLI::App & app, std::string & text);
// The positional inputs and --paired, --interleaved, --allow-missing-eof.
void add_inputs(CLI::App & app, input_args & in, bool required = true);
// -k, --no-canonical, --type, --fpr, --expected, --shards, --seed, --max-load (type and expected as
// text; default_fpr_text: --fpr's default in the help).
void add_filter_options(CLI::App & app, filter_args & f, std::string & type, std::string & expected,
                        char const * default_fpr_text);
// The rule and the read outputs of classify and dedup.
void add_classify_outputs(CLI::App & app, classify_output_args & o, double default_fraction);

// The end-of-run line on stderr ("ksieve classify: N reads: ...").
void print_summary(std::string const & command, run_summary const & s);

// One subcommand of ksieve: its options (declared by the add_*_command that made it), and its run.
// Thread safety: one thread.
class subcommand
{
public:
    virtual ~subcommand() = default;
    // The subcommand's CLI11 app (parsed() tells whether it was given).
    [[nodiscard]] CLI::App & app() const noexcept { return *app_; }
    // -t and -q, for the memory plan; null for a command without a plan (info).
    [[nodiscard]] virtual common_args const * common() const noexcept = 0;
    // What plan_run_memory calls the command ("classify", "dedup", "other").
    [[nodiscard]] virtual char const * memory_plan_name() const noexcept { return "other"; }
    // The command line as given, for --stats (commands that write it).
    virtual void set_command_line(std::string const & /*line*/) {}
    // Parse the option texts into the command's arguments and run it. \throws error
    virtual void run() = 0;

protected:
    explicit subcommand(CLI::App * const app) noexcept : app_{app} {}

private:
    CLI::App * app_;
};

// Each subcommand added to `app` (max_memory: the --max-memory text that they share), in the order
// of `ksieve --help`.
[[nodiscard]] std::unique_ptr<subcommand> add_build_command(CLI::App & app,
                                                            std::string & max_memory);
[[nodiscard]] std::unique_ptr<subcommand> add_classify_command(CLI::App & app,
                                                               std::string & max_memory);
[[nodiscard]] std::unique_ptr<subcommand> add_dedup_command(CLI::App & app,
                                                            std::string & max_memory);
// merge, intersect or subtract.
[[nodiscard]] std::unique_ptr<subcommand>
add_combine_command(CLI::App & app, std::string & max_memory, set_operation op);
[[nodiscard]] std::unique_ptr<subcommand> add_info_command(CLI::App & app);

} // namespace ksieve::detail
