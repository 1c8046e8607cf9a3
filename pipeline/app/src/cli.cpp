// The command line of ksieve (CLI11): the options of each subcommand, their help texts and checks,
// and the run of the subcommand given, with errors turned into messages and exit codes.
#include "app_detail.hpp"
#include "cli_options.hpp"

#include <ksieve/app/cli.hpp>
#include <ksieve/app/commands.hpp>
#include <ksieve/app/runtime.hpp>
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <string_view>
#include <vector>

namespace ksieve
{

namespace
{

// Levenshtein distance, for "did you mean".
std::size_t edit_distance(std::string_view const a, std::string_view const b)
{
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
    {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j)
        {
            std::size_t const up = row[j];
            row[j] =
                std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0u : 1u)});
            diag = up;
        }
    }
    return row[b.size()];
}

// The candidate closest to `word` (at most a third of its letters off, or a prefix of it), or "".
std::string closest(std::string const & word, std::vector<std::string> const & candidates)
{
    std::string best;
    std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
    for (auto const & c : candidates)
    {
        std::size_t const d = c.starts_with(word) && word.size() >= 3 ? 1 : edit_distance(word, c);
        if (d < best_d)
        {
            best_d = d;
            best = c;
        }
    }
    return best;
}

// Every long and short option name of a subcommand, with its dashes.
std::vector<std::string> option_names(CLI::App const & app)
{
    std::vector<std::string> names;
    for (CLI::Option const * o : app.get_options())
    {
        for (auto const & n : o->get_lnames())
            names.push_back("--" + n);
        for (auto const & n : o->get_snames())
            names.push_back("-" + n);
    }
    return names;
}

// The unknown arguments of a CLI11 "not expected" error, with a suggestion for the first option
// among them.
std::string explain_extras(CLI::App const & app, std::vector<std::string> const & extras)
{
    std::string text = "unexpected argument";
    text += extras.size() > 1 ? "s" : "";
    for (auto const & e : extras)
        text += " '" + e + "'";
    for (auto const & e : extras)
    {
        if (!e.starts_with("-"))
            continue;
        std::string const word = e.substr(0, e.find('='));
        std::string const guess = closest(word, option_names(app));
        text += guess.empty() ? std::string{": unknown option"}
                              : ": unknown option, did you mean '" + guess + "'?";
        break;
    }
    return text;
}

std::string join_command_line(int const argc, char ** const argv)
{
    std::string line;
    for (int i = 0; i < argc; ++i)
    {
        std::string const a = argv[i];
        line += i == 0 ? "" : " ";
        line += a.find_first_of(" \t'\"$") == std::string::npos && !a.empty() ? a : "'" + a + "'";
    }
    return line;
}

// The subcommands, in the order of `ksieve --help`, and the --max-memory text they share.
struct cli_state
{
    std::string max_memory;
    std::vector<std::unique_ptr<detail::subcommand>> commands;
};

void add_subcommands(CLI::App & app, cli_state & st)
{
    st.commands.push_back(detail::add_build_command(app, st.max_memory));
    st.commands.push_back(detail::add_classify_command(app, st.max_memory));
    st.commands.push_back(detail::add_dedup_command(app, st.max_memory));
    for (set_operation const op :
         {set_operation::unite, set_operation::intersect, set_operation::subtract})
        st.commands.push_back(detail::add_combine_command(app, st.max_memory, op));
    st.commands.push_back(detail::add_info_command(app));
    app.footer(
        "Run 'ksieve help COMMAND' (or 'ksieve COMMAND --help') for the options of a command.");
}

// `ksieve help [COMMAND]` becomes `ksieve COMMAND --help`; a first word that is no command is
// refused with the closest one (exit status 2, else -1).
int rewrite_arguments(std::vector<char *> & args)
{
    static std::vector<std::string> const commands{"build",     "classify", "dedup", "merge",
                                                   "intersect", "subtract", "info"};
    static char help_flag[] = "--help";
    if (args.size() >= 2 && std::string_view{args[1]} == "help")
    {
        args.erase(args.begin() + 1);
        if (args.size() > 2)
            args.resize(2);
        args.push_back(help_flag);
    }
    std::string_view const first =
        args.size() >= 2 ? std::string_view{args[1]} : std::string_view{};
    if (first.starts_with('-') && first != "--help" && first != "-h" && first != "--version")
    {
        auto const cmd = std::find_if(
            args.begin() + 1, args.end(),
            [&](char const * a)
            { return std::find(commands.begin(), commands.end(), a) != commands.end(); });
        if (cmd != args.end())
        {
            std::cerr << "ksieve: error: options go after the command: 'ksieve " << *cmd << " "
                      << first << " ...' (see ksieve " << *cmd << " --help)\n";
            return 2;
        }
    }
    if (args.size() >= 2 && args[1][0] != '-' &&
        std::find(commands.begin(), commands.end(), std::string{args[1]}) == commands.end())
    {
        std::string const guess = closest(args[1], commands);
        std::cerr << "ksieve: error: '" << args[1] << "' is not a ksieve command"
                  << (guess.empty() ? std::string{} : ": did you mean '" + guess + "'?")
                  << " (commands: build, classify, dedup, merge, intersect, subtract, info; see "
                     "ksieve --help)\n";
        return 2;
    }
    return -1;
}

// The message of a command line CLI11 refused (exit status 2).
int parse_failure(CLI::App & app, CLI::ParseError const & e)
{
    if (e.get_exit_code() == 0)
        return app.exit(e);
    CLI::App const * sub = &app;
    for (CLI::App const * c : app.get_subcommands())
        sub = c;
    std::string const see =
        " (see ksieve " + (sub == &app ? std::string{} : sub->get_name() + " ") + "--help)\n";
    // An unknown option is named before a missing required one: `build --expeted 5` is a typo, not
    // a forgotten -o.
    std::vector<std::string> const unknown = sub->remaining();
    bool const typo = dynamic_cast<CLI::RequiredError const *>(&e) != nullptr &&
                      std::any_of(unknown.begin(), unknown.end(),
                                  [](std::string const & a) { return a.starts_with("-"); });
    if (dynamic_cast<CLI::ExtrasError const *>(&e) != nullptr || typo)
    {
        std::cerr << "ksieve: error: " << (sub == &app ? "" : sub->get_name() + ": ")
                  << explain_extras(*sub,
                                    unknown.empty() ? std::vector<std::string>{e.what()} : unknown)
                  << see;
        return 2;
    }
    std::string msg = e.what();
    while (!msg.empty() && msg.back() == '\n')
        msg.pop_back();
    std::cerr << "ksieve: error: " << msg << see;
    return 2;
}

// An option or argument given an empty or blank value (what a job script passes as "$UNSET") is a
// usage error, never taken as "not given": every option of the command that takes a value, and its
// positional arguments. \throws usage_error
void refuse_empty_values(CLI::App const & command)
{
    for (CLI::Option const * o : command.get_options())
    {
        if (o->get_type_size() == 0) // a flag
            continue;
        for (std::string const & v : o->results())
            if (v.find_first_not_of(" \t\n\r\v\f") == std::string::npos)
            {
                std::string const name =
                    o->get_lnames().empty()
                        ? (o->get_snames().empty() ? o->get_name() : "-" + o->get_snames()[0])
                        : "--" + o->get_lnames()[0];
                throw usage_error{(o->get_lnames().empty() && o->get_snames().empty()
                                       ? "an argument of " + name
                                       : name) +
                                  " is " + (v.empty() ? "empty" : "blank") +
                                  ": give a value, or leave the option out"};
            }
    }
}

// One memory plan for every limit, whatever set it (plan_run_memory). \throws usage_error for a
// malformed --max-memory, error for a limit too small
void plan_memory_for(detail::subcommand const & command, std::string const & max_memory)
{
    common_args const * const common = command.common();
    if (common == nullptr)
    {
        if (!max_memory.empty()) // (a command without a plan takes the limit as given)
            set_memory_limit(parse_size(max_memory, "--max-memory"));
        return; // info
    }
    std::uint64_t const option = max_memory.empty() ? 0 : parse_size(max_memory, "--max-memory");
    plan_run_memory(option, command.memory_plan_name(), resolve_threads(common->threads));
}

// Run the subcommand given. \throws error
void dispatch(cli_state & st)
{
    for (auto const & c : st.commands)
        if (c->app().parsed())
        {
            refuse_empty_values(c->app());
            plan_memory_for(*c, st.max_memory);
            c->run();
            break;
        }
    std::cout.flush();
    if (!std::cout)
        throw io_error{"cannot write to standard output"};
}

// After a stop signal, an error on the way out is a consequence of it (an open of a FIFO or a write
// cut short): the run reports the interruption, with its exit status 128 + signal, instead.
int report_interruption()
{
    try
    {
        throw_if_stop_requested();
    }
    catch (interrupted_error const & e)
    {
        std::cerr << "ksieve: error: " << e.what() << '\n';
        return e.exit_status();
    }
    return 1;
}

} // namespace

int run_cli(int argc, char ** argv)
{
    CLI::App app{
        "ksieve: stream reads through k-mer filters and sort them into novel and known.\n"
        "Build a filter from references, classify reads against it, deduplicate or normalize\n"
        "reads on the fly, combine per-sample filters, and inspect filter files."};
    app.name("ksieve");
    app.set_version_flag("--version", std::string{"ksieve "} + KSIEVE_VERSION);
    app.require_subcommand(1);
    app.failure_message(CLI::FailureMessage::simple);
    cli_state st;
    add_subcommands(app, st);

    std::vector<char *> args(argv, argv + argc);
    if (int const status = rewrite_arguments(args); status >= 0)
        return status;
    try
    {
        app.parse(static_cast<int>(args.size()), args.data());
    }
    catch (CLI::ParseError const & e)
    {
        return parse_failure(app, e);
    }

    install_interrupt_handler();
    fit_allocator_to_address_limit();
    std::string const command_line = join_command_line(static_cast<int>(args.size()), args.data());
    for (auto const & c : st.commands)
        c->set_command_line(command_line);
    try
    {
        dispatch(st);
    }
    catch (error const & e)
    {
        if (stop_requested() && dynamic_cast<interrupted_error const *>(&e) == nullptr)
            return report_interruption(); // an open or write that the signal cut short, a reader
                                          // gone
        std::cerr << "ksieve: error: " << e.what() << '\n';
        return e.exit_status();
    }
    catch (std::bad_alloc const &)
    {
        std::cerr << "ksieve: error: out of memory\n";
        return 1;
    }
    catch (std::exception const & e)
    {
        std::cerr << "ksieve: error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}

} // namespace ksieve
