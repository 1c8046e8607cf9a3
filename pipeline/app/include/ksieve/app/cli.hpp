#pragma once
/*! \file
 * \brief Command line front end: parses argv into the subcommands' argument structs, runs the
 * matching core function, and maps ksieve::error to `ksieve: error: ...` and an exit status. The
 * only place that catches exceptions for good.
 */
namespace ksieve
{

/*! \brief Run ksieve with a command line. \returns the process exit status (0 success, 1 error, 2
 * usage error, 128 + signal when interrupted). */
int run_cli(int argc, char ** argv);

} // namespace ksieve
