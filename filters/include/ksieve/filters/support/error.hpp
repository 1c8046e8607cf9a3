#pragma once
/*! \file
 * \brief The one exception hierarchy of ksieve.
 *
 * Every error that leaves a ksieve library function derives from ksieve::error and carries a
 * complete, user-facing message (file name and, for sequence input, the record number). `main`
 * catches ksieve::error once, prints `ksieve: error: <what()>` and maps the subclass to the exit
 * status: usage_error -> 2, interrupted_error -> 130, everything else -> 1. Hot paths never throw:
 * they return status values (see insert_status).
 */
#include <stdexcept>
#include <string>

namespace ksieve
{

/*! \brief Base of all ksieve exceptions. Exit status 1. */
class error : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
    /*! \brief Process exit status that `main` uses for this error. */
    [[nodiscard]] virtual int exit_status() const noexcept { return 1; }
};

/*! \brief A command line that cannot be honoured (bad or incompatible options). Exit status 2. */
class usage_error : public error
{
public:
    using error::error;
    [[nodiscard]] int exit_status() const noexcept override { return 2; }
};

/*! \brief A filter file that is not a ksieve filter, corrupted, truncated or of a newer version. */
class format_error : public error
{
public:
    using error::error;
};

/*! \brief An operating-system level failure (open, read, write, rename, mmap). */
class io_error : public error
{
public:
    using error::error;
};

/*! \brief Malformed sequence input (FASTA/FASTQ/SAM record), named by file and record number. */
class input_error : public error
{
public:
    using error::error;
};

/*! \brief Filters that cannot be combined (different k, hash, canonical mode, type, parameters). */
class incompatible_error : public error
{
public:
    using error::error;
};

/*! \brief A filter ran out of space with growth disabled (or a cuckoo filter could not place). */
class full_error : public error
{
public:
    using error::error;
};

/*! \brief The run was interrupted by a signal (SIGINT, SIGTERM, SIGHUP). Exit status 128 + the
 * signal's number (130 for SIGINT, 143 for SIGTERM), as a shell reports a process killed by it. */
class interrupted_error : public error
{
public:
    explicit interrupted_error(std::string const & what, int const status = 130)
        : error{what}, status_{status}
    {
    }
    [[nodiscard]] int exit_status() const noexcept override { return status_; }

private:
    int status_;
};

} // namespace ksieve
