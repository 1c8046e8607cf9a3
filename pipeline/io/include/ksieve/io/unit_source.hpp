#pragma once
/*! \file
 * \brief Input units across several files: single reads, pairs of files (`--paired R1 R2`) or
 * interleaved pairs, read one input after another with the format checks that outputs need. Thread
 * safety: one thread at a time.
 */
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <ksieve/io/io.hpp>

namespace ksieve
{

/*! \brief Input description shared by build, classify and dedup. */
struct input_args
{
    std::vector<std::string> inputs; //!< paths or "-"
    bool paired{false};              //!< inputs are R1 R2 [R1 R2 ...] pairs
    bool interleaved{false};         //!< each input holds mates consecutively
    bool allow_missing_eof{false};   //!< accept BGZF / BAM inputs without the end-of-file marker
};

/*! \brief Reads the inputs one after another: single reads, pairs of files or interleaved pairs. */
class unit_source
{
public:
    unit_source(input_args const & args, io::reader_options const & options);
    /*! \brief Next batch (r2 filled for pairs). \returns false at the end of all inputs. */
    bool next(io::record_batch & r1, io::record_batch & r2);
    [[nodiscard]] io::seq_format format() const noexcept { return format_; }
    [[nodiscard]] std::string const & sam_header() const noexcept { return sam_header_; }
    [[nodiscard]] bool paired() const noexcept { return paired_; }
    /*! \brief Refuse (input_error, when it is opened) a later SAM/BAM/CRAM input whose reference
     * dictionary
     * (@SQ lines) differs from the first input's. Needed only when records are written to
     * SAM/BAM/CRAM under the first input's header (their reference ids would point elsewhere);
     * FASTA/FASTQ outputs, reports and `build` take such inputs together. Mate 2's file of a pair
     * is compared too (for the first pair at once: \throws input_error). \pre called before the
     * first next(). */
    void require_same_dictionary();
    /*! \brief Refuse (input_error, when it is opened) a later input of another format family
     * (FASTA, FASTQ, SAM/BAM/CRAM) than the first, naming `output`: an output without a format
     * extension takes the first input's format, so records of the other family would be converted
     * (FASTQ qualities dropped) without being asked for. \pre called before the first next(). */
    void require_same_format(std::string output) { same_format_output_ = std::move(output); }
    /*! \brief The fraction of the inputs' bytes read so far, in [0, 1]; -1 if an input is not a
     * regular file (stdin, a pipe), whose size is unknown. Thread safety: may be called from any
     * thread while next() runs on another. */
    [[nodiscard]] double input_fraction() const noexcept;

private:
    void open_next();
    // The checks that require_same_*() ask for, on the input(s) just opened (from inputs[at]).
    void check_opened(bool first, std::size_t at) const;

    input_args args_;
    io::reader_options options_;
    bool paired_;
    std::size_t next_input_{0};
    std::unique_ptr<io::reader> single_;
    std::unique_ptr<io::paired_reader> pair_;
    io::seq_format format_{io::seq_format::fastq};
    std::string sam_header_;
    bool same_dictionary_{false};
    std::string same_format_output_;    //!< empty: mixed formats allowed
    std::uint64_t total_bytes_{0};      //!< sizes of all inputs; 0: unknown
    std::uint64_t done_bytes_{0};       //!< sizes of the inputs finished
    std::uint64_t current_bytes_{0};    //!< sizes of the inputs open now
    mutable std::mutex position_mutex_; //!< the readers' lifetime against input_fraction()
};

} // namespace ksieve
