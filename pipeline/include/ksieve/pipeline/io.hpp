#pragma once
/*! \file
 * \brief Sequence input and output: batched readers for FASTA/FASTQ (plain, gzip, BGZF, stdin) and
 * SAM/BAM/CRAM (htslib), paired and interleaved input, record writers, and atomic output files.
 *
 * Records keep their bytes verbatim: a writer of the same format as the reader reproduces each record
 * byte for byte (FASTA line breaks, FASTQ '+' line contents, SAM fields); a writer of another format
 * converts from the parsed fields (header line, sequence, qualities).
 *
 * Errors: readers throw input_error naming the file and the 1-based record number ("'x.fq': record 17:
 * ..."). Thread safety: a reader or writer is used by one thread at a time; batches are plain values
 * that may be read concurrently once filled.
 */
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ksieve::io
{

/*! \brief Record formats. */
enum class seq_format : std::uint8_t
{
    fasta,
    fastq,
    sam,
    bam,
    cram
};

/*! \brief One record as views into its batch's storage (valid while the batch is unchanged). */
struct record_view
{
    std::string_view name;   //!< header up to the first whitespace (no '>'/'@'); SAM/BAM: QNAME
    std::string_view header; //!< full header line without '>'/'@' and newline (name + comment)
    std::string_view seq;    //!< bases, line breaks removed (multi-line FASTA joined); SAM/BAM: SEQ as stored
    std::string_view qual;   //!< FASTQ qualities (empty for FASTA); SAM/BAM: QUAL as Phred+33 text
    std::string_view raw;    //!< verbatim bytes of the record in the input (text formats incl. final
                             //!< newline; BAM: the record as htslib serialises it for a BAM writer)
};

/*! \brief A batch of consecutive records of one input. */
class record_batch
{
public:
    [[nodiscard]] std::size_t size() const noexcept { return records_.size(); }
    [[nodiscard]] bool empty() const noexcept { return records_.empty(); }
    [[nodiscard]] record_view const & operator[](std::size_t const i) const noexcept { return records_[i]; }
    /*! \brief 1-based number of the first record of this batch in its input. */
    [[nodiscard]] std::uint64_t first_record_number() const noexcept { return first_; }
    /*! \brief Format of the records (the reader's). */
    [[nodiscard]] seq_format format() const noexcept { return format_; }
    /*! \brief Total bytes of sequence in the batch. */
    [[nodiscard]] std::size_t bases() const noexcept { return bases_; }
    void clear() noexcept;

    // Storage, filled by readers (public for readers and tests; not for other users).
    std::vector<record_view> records_;
    std::string storage_;                 //!< text bytes the views point into (reserved before filling)
    std::vector<std::string> extra_;      //!< extra owned buffers when storage_ cannot hold everything
    std::uint64_t first_{1};
    seq_format format_{seq_format::fastq};
    std::size_t bases_{0};
};

/*! \brief Reader options. */
struct reader_options
{
    unsigned threads{1};                 //!< decompression threads (BGZF / BAM via htslib)
    std::size_t batch_records{8192};     //!< at most this many records per batch
    std::size_t batch_bases{8u << 20};   //!< or stop a batch once it holds this many bases
};

/*! \brief Streaming reader of one input (a path or "-" for stdin). Format and compression are detected
 * from the content (magic bytes: gzip/BGZF, BAM, CRAM, '@' FASTQ, '>' FASTA, '@HD'/SAM text), never
 * from the name. */
class reader
{
public:
    virtual ~reader() = default;
    /*! \brief Open `path`. \throws io_error (cannot open) / input_error (unknown format). */
    [[nodiscard]] static std::unique_ptr<reader> open(std::string const & path, reader_options const & options = {});
    /*! \brief Fill `batch` (cleared first) with the next records. \returns false at end of input (batch
     * empty). \throws input_error naming the file and record number for malformed input. */
    virtual bool next(record_batch & batch) = 0;
    [[nodiscard]] virtual seq_format format() const noexcept = 0;
    [[nodiscard]] virtual std::string const & name() const noexcept = 0;
    /*! \brief For SAM/BAM/CRAM: the header text (to copy to SAM/BAM outputs); empty otherwise. */
    [[nodiscard]] virtual std::string const & sam_header() const noexcept = 0;
};

/*! \brief Reads mates from two files in lock step (`--paired R1 R2`) or from one interleaved file
 * (`--interleaved`, mates consecutive). Batches r1[i] and r2[i] are mates. Mate names must agree after
 * removing a trailing "/1", "/2" (a clear input_error naming both files and the record number if not, or
 * if one file ends first / an interleaved file has an odd number of records). */
class paired_reader
{
public:
    [[nodiscard]] static std::unique_ptr<paired_reader> open_pair(std::string const & r1, std::string const & r2,
                                                                  reader_options const & options = {});
    [[nodiscard]] static std::unique_ptr<paired_reader> open_interleaved(std::string const & path,
                                                                         reader_options const & options = {});
    virtual ~paired_reader() = default;
    /*! \brief \returns false at the end of input (both batches empty). */
    virtual bool next(record_batch & r1, record_batch & r2) = 0;
    [[nodiscard]] virtual seq_format format() const noexcept = 0;
    [[nodiscard]] virtual std::string const & sam_header() const noexcept = 0;
};

/*! \brief An output destination that appears complete or not at all (CONTRACT promise 6).
 * Regular files (and new paths) are written to `<path>.ksieve-tmp.<pid>` in the same directory and
 * renamed over `path` on commit(); "-" is stdout; devices and FIFOs are written in place. Destroying an
 * uncommitted output removes the temporary file. */
class output_file
{
public:
    explicit output_file(std::string path);
    ~output_file();
    output_file(output_file const &) = delete;
    output_file & operator=(output_file const &) = delete;
    /*! \brief Path to open for writing (the temporary name, the device, or "-"). */
    [[nodiscard]] std::string const & write_path() const noexcept { return write_path_; }
    [[nodiscard]] std::string const & path() const noexcept { return path_; }
    /*! \brief Rename into place. \throws io_error */
    void commit();

private:
    std::string path_;
    std::string write_path_;
    bool in_place_{false};
    bool committed_{false};
};

/*! \brief Format of an output path from its extension (.fq/.fastq/.fa/.fasta/.fna/.sam/.bam/.cram,
 * optionally followed by .gz); `fallback` if none matches (and for "-"). */
[[nodiscard]] seq_format format_from_extension(std::string const & path, seq_format fallback) noexcept;

/*! \brief Writer options. */
struct writer_options
{
    unsigned threads{1};          //!< compression threads (BGZF/BAM)
    int compression_level{6};
    std::string sam_header;       //!< header for SAM/BAM/CRAM outputs (from the reader); synthesised if empty
};

/*! \brief Record writer to an output_file. Format from the extension (fallback: the input's);
 * `.gz` writes BGZF (gzip-compatible, no time stamp or file name: deterministic bytes). Same format as the
 * input: raw bytes verbatim; otherwise converted (FASTQ -> FASTA drops qualities; FASTA -> FASTQ writes
 * qualities 'I'; to SAM/BAM: unaligned records, flag 4). Call close() to flush and commit; a writer
 * destroyed without close() leaves nothing behind. */
class writer
{
public:
    [[nodiscard]] static std::unique_ptr<writer> open(std::string const & path, seq_format input_format,
                                                      writer_options const & options = {});
    virtual ~writer() = default;
    /*! \brief Append one record. \pre the record comes from a batch of format `input_format`. */
    virtual void write(record_view const & record) = 0;
    /*! \brief Flush, close and commit (rename into place). \throws io_error */
    virtual void close() = 0;
};

/*! \brief Mate-name equality used by paired readers: strip a trailing "/1" or "/2". */
[[nodiscard]] bool mate_names_match(std::string_view a, std::string_view b) noexcept;

} // namespace ksieve::io
