#pragma once
/*! \file
 * \brief Sequence input and output: batched readers for FASTA/FASTQ (plain or compressed, stdin)
 * and SAM/BAM/CRAM (htslib), paired and interleaved input, record writers, and atomic output files.
 *
 * Errors: readers throw input_error naming the file and the 1-based record number
 * ("'x.fq': record 17: ..."). Thread safety: a reader or writer is used by one thread at a time;
 * batches are plain values that may be read concurrently once filled.
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

/*! \brief One record as views into its batch's storage (valid while the batch is unchanged).
 * Text input: `raw` is the record's bytes as read, from its '>'/'@' to the newline that ends it
 * (a multi-line FASTA record: all its lines and the blank lines before the next record; a newline
 * missing at the end of the input is supplied); with Windows line endings `raw` keeps the '\r', the
 * other views drop it. SAM/BAM/CRAM input: `raw` is the bytes of bam1_core_t followed by
 * bam1_t::data, which the SAM/BAM/CRAM writer turns back into the same record. */
struct record_view
{
    std::string_view name;   //!< header up to the first space or tab (no '>'/'@'); SAM: QNAME
    std::string_view header; //!< header line without '>'/'@' and newline; SAM: QNAME
    std::string_view seq; //!< bases, line breaks removed (multi-line FASTA joined); SAM/BAM: SEQ as
                          //!< stored (reverse-strand reads stay reverse-complemented); '*' -> empty
    std::string_view qual; //!< FASTQ qualities (empty for FASTA); SAM/BAM: QUAL as Phred+33 text,
                           //!< empty for '*'
    std::string_view raw;  //!< verbatim bytes of the record (see above)
};

/*! \brief A batch of consecutive records of one input; its views point into `storage_`. */
class record_batch
{
public:
    record_batch() = default;
    /*! \brief Deep copy; the copy's views point into its own storage. */
    record_batch(record_batch const & other);
    /*! \brief Move; `other` is left empty. */
    record_batch(record_batch && other) noexcept;
    record_batch & operator=(record_batch const & other);
    record_batch & operator=(record_batch && other) noexcept;

    [[nodiscard]] std::size_t size() const noexcept { return records_.size(); }
    [[nodiscard]] bool empty() const noexcept { return records_.empty(); }
    [[nodiscard]] record_view const & operator[](std::size_t const i) const noexcept
    {
        return records_[i];
    }
    /*! \brief 1-based number of the first record of this batch in its input. */
    [[nodiscard]] std::uint64_t first_record_number() const noexcept { return first_; }
    /*! \brief Format of the records (the reader's). */
    [[nodiscard]] seq_format format() const noexcept { return format_; }
    /*! \brief Total bytes of sequence in the batch. */
    [[nodiscard]] std::size_t bases() const noexcept { return bases_; }
    void clear() noexcept;

    // Storage, filled by readers (public for readers and tests; not for other users).
    std::vector<record_view> records_;
    std::string storage_; //!< text bytes the views point into (reserved before filling)
    std::uint64_t first_{1};
    seq_format format_{seq_format::fastq};
    std::size_t bases_{0};
};

/*! \brief Reader options. */
struct reader_options
{
    unsigned threads{1};               //!< decompression threads (BGZF / BAM via htslib)
    std::size_t batch_records{8192};   //!< at most this many records per batch
    std::size_t batch_bases{8u << 20}; //!< or stop a batch once it holds this many bases
    bool allow_missing_eof{false};     //!< accept BGZF / BAM inputs without the end-of-file marker
    /*! false: the sequence of a multi-line FASTA record is joined in place, over the record's text,
     * whose `raw` view is then empty (for readers of sequences only: a chromosome then costs its
     * bytes once, not twice). */
    bool keep_raw{true};
    /*! A FASTA/FASTQ record whose text grows past this many bytes is an input_error naming it
     * (a command that holds a whole record at once, under a memory limit); 0: no bound. */
    std::size_t max_record_bytes{0};
};

/*! \brief Streaming reader of one input (a path or "-" for stdin). Format and compression are
 * detected from the content (magic bytes: gzip/BGZF, zstd, xz, bzip2, BAM, CRAM; then '@' FASTQ,
 * '>' FASTA, '@HD'/SAM text, "LOCUS " GenBank, "ID   " EMBL), never from the name.
 *
 * - FASTA: multi-line records; an empty sequence is valid. FASTQ: '@' header, sequence, '+' line,
 * qualities of the same length. Empty input is valid (zero records, format fastq).
 * - gzip (every member, CRC32 and ISIZE checked) is inflated on a separate thread by ISA-L's igzip
 * where the build has it, else by zlib (KSIEVE_ZLIB=1 in the environment forces zlib); BGZF by
 * htslib; further gzip layers (e.g. a gzipped BAM file) are unwrapped too. zstd, xz and bzip2 may
 * hold FASTA/FASTQ (not SAM/BAM/CRAM). GenBank and EMBL through seqan3 where the build has it.
 * - Every BGZF, SAM, BAM and CRAM file of the process (inputs and outputs) shares one pool of
 * htslib threads, created by the first such file with its `threads` (threaded decoding and
 * encoding only when threads > 1).
 * - htslib's errors become part of the input_error/io_error that ksieve throws (one line). */
class reader
{
public:
    virtual ~reader() = default;
    /*! \brief Open `path`. \throws io_error (cannot open) / input_error (unknown format). */
    [[nodiscard]] static std::unique_ptr<reader> open(std::string const & path,
                                                      reader_options const & options = {});
    /*! \brief Fill `batch` (cleared first) with the next records. \returns false at end of input
     * (batch empty). \throws input_error naming the file and record number for malformed input. */
    virtual bool next(record_batch & batch) = 0;
    [[nodiscard]] virtual seq_format format() const noexcept = 0;
    [[nodiscard]] virtual std::string const & name() const noexcept = 0;
    /*! \brief For SAM/BAM/CRAM: the header text (to copy to SAM/BAM outputs); empty otherwise. */
    [[nodiscard]] virtual std::string const & sam_header() const noexcept = 0;
    /*! \brief next() with explicit limits: at most `max_records` records; the batch also ends at
     * the first record boundary where it holds >= `max_bases` bases and its size is a multiple of
     * `multiple` (paired_reader uses 2 for interleaved input). \returns false at end of input. */
    virtual bool fill(record_batch & batch, std::size_t max_records, std::size_t max_bases,
                      std::size_t multiple) = 0;
    /*! \brief Bytes of the input file read so far (its offset; decompression reads ahead a little),
     * 0 for stdin and other streams. Thread safety: may be called from another thread while the
     * reader reads. */
    [[nodiscard]] std::uint64_t input_position() const noexcept;

private:
    int position_fd_{-1}; // the input's descriptor (htslib's hFILE owns it), -1: not a regular file
};

/*! \brief Reads mates from two files in lock step (`--paired R1 R2`) or from one interleaved file
 * (`--interleaved`, mates consecutive). Batches r1[i] and r2[i] are mates. Mate names must agree as
 * mate_names_match() says (a clear input_error naming both files and the record number if not, or
 * if one file ends first / an interleaved file has an odd number of records). */
class paired_reader
{
public:
    [[nodiscard]] static std::unique_ptr<paired_reader>
    open_pair(std::string const & r1, std::string const & r2, reader_options const & options = {});
    [[nodiscard]] static std::unique_ptr<paired_reader>
    open_interleaved(std::string const & path, reader_options const & options = {});
    virtual ~paired_reader() = default;
    /*! \brief \returns false at the end of input (both batches empty). */
    virtual bool next(record_batch & r1, record_batch & r2) = 0;
    [[nodiscard]] virtual seq_format format() const noexcept = 0;
    [[nodiscard]] virtual std::string const & sam_header() const noexcept = 0;
    /*! \brief The SAM header of mate 2's file (sam_header() for interleaved input). */
    [[nodiscard]] virtual std::string const & mate2_sam_header() const noexcept
    {
        return sam_header();
    }
    /*! \brief Bytes read of the input file(s) so far (reader::input_position). Thread-safe. */
    [[nodiscard]] virtual std::uint64_t input_position() const noexcept = 0;
};

/*! \brief The path a symbolic link finally names (relative targets resolved against the link's
 * directory), also when that file does not exist yet; `path` itself if it is not a link. \throws
 * io_error on a loop of links. Thread-safe. */
[[nodiscard]] std::string final_target(std::string path);

/*! \brief Whether `path` names a file of the kernel's (under /dev/ or /proc/), which output_file
 * writes in place. Thread-safe. */
[[nodiscard]] bool is_kernel_path(std::string const & path) noexcept;

/*! \brief An output destination that appears complete or not at all (docs/design.md, "Output
 * commit"): regular files and new paths are written to `<path>.ksieve-tmp.<pid>-<token>[.<n>]`
 * beside them and renamed over `path` on commit() (filter files written there name `path` in their
 * errors); a symbolic link is followed to the file it finally names (the link stays a link); "-"
 * (stdout), devices, FIFOs, sockets and paths under /dev/ and /proc/ are written in place.
 * Destroying an uncommitted output removes the temporary. \throws io_error if `path` is a
 * directory. Thread safety: distinct objects may be used from distinct threads. */
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
    /*! \brief Whether write_path() is the destination itself (stdout, a device, a FIFO...) rather
     * than a temporary regular file. */
    [[nodiscard]] bool in_place() const noexcept { return in_place_; }
    /*! \brief Whether commit() replaces a regular file that existed when this was made. */
    [[nodiscard]] bool replaces() const noexcept { return replaces_; }
    /*! \brief Rename into place (with a replaced file's permission bits). \throws io_error */
    void commit();

private:
    std::string path_;
    std::string write_path_;
    std::string target_; //!< what commit() renames onto (path_, or the file a symbolic link names)
    bool in_place_{false};
    bool replaces_{false};
    unsigned replaced_mode_{0}; //!< the permission bits (rwx) of the file replaced
    bool committed_{false};
    int slot_{-1}; //!< the temporary's entry for remove_temporary_outputs()
};

/*! \brief Remove the temporary files of every output_file not yet committed or destroyed. For a
 * signal handler that ends the process at once: async-signal-safe (no allocation, no locks). */
void remove_temporary_outputs() noexcept;

/*! \brief Whether `f` is SAM, BAM or CRAM (one family: records carry reference ids, a header). */
[[nodiscard]] bool hts_format(seq_format f) noexcept;

/*! \brief "FASTA", "FASTQ", "SAM", "BAM" or "CRAM", for messages. */
[[nodiscard]] std::string format_name(seq_format f);

/*! \brief Format of an output path from its extension (.fq/.fastq/.fa/.fasta/.fna/.sam/.bam/.cram,
 * optionally followed by .gz); `fallback` if none matches (and for "-"). */
[[nodiscard]] seq_format format_from_extension(std::string const & path,
                                               seq_format fallback) noexcept;

/*! \brief Writer options. */
struct writer_options
{
    unsigned threads{1};       //!< compression threads (BGZF/BAM)
    int compression_level{-1}; //!< -1 = the format's default (gzip 1, zstd 3, xz 3, bzip2 9)
    std::string sam_header;    //!< header of SAM/BAM/CRAM outputs (the reader's); made if empty
    //! bytes a FASTA/FASTQ or text output gathers before it writes (or compresses, as one piece)
    //! them; 0: 1 MiB plain, 8 MiB compressed. Outputs opened by the thousand take less.
    std::size_t buffer_bytes{0};
    //! one output of many (a file per label): what compression keeps between two writes (the
    //! compressed bytes, the codec's tables) is given back after each, so that only the buffer of
    //! buffer_bytes stays; the same bytes out
    bool lean{false};
};

/*! \brief Whether a path's name ends with a compression suffix (.gz, .bgz, .zst, .xz, .bz2, or one
 * that cannot be written, such as .lz4), in any case. Thread-safe. */
[[nodiscard]] bool names_compression(std::string_view path) noexcept;
/*! \brief Refuse an output path whose compression suffix ksieve cannot write (".lz4", ".zip", ...;
 * any case; "-" is stdout). \throws io_error naming the path and the suffix. Thread-safe. */
void check_writable_compression(std::string const & path);

/*! \brief Refuse, before any work, an output path that cannot be created by its name: a compression
 * suffix that cannot be written (check_writable_compression) or a file name (its last component)
 * longer than NAME_MAX bytes. \throws io_error naming the path. Thread-safe. */
void check_output_name(std::string const & path);

/*! \brief A text output (reads, reports, tables) that appears complete or not at all (output_file),
 * compressed by its name like the read outputs: `.gz` (BGZF), `.zst`, `.xz`, `.bz2`, in independent
 * members on writer_options::threads threads, the same bytes for any thread count; an output given
 * no bytes is an empty stream of its format. \throws io_error naming the path if it cannot be
 * created or names a compression that cannot be written. Thread safety: one thread at a time. */
class text_output
{
public:
    text_output(std::string const & path, writer_options const & options);
    ~text_output();
    text_output(text_output const &) = delete;
    text_output & operator=(text_output const &) = delete;
    /*! \brief Append bytes. \throws io_error */
    void write(std::string_view const bytes)
    {
        buf_.append(bytes);
        appended();
    }
    /*! \brief The bytes not yet handed on, for a caller that appends in place (then calls
     * appended()). */
    [[nodiscard]] std::string & buffer() noexcept { return buf_; }
    /*! \brief Hand the bytes on once they fill a piece: compressed pieces end where this is called
     * (at record ends: pieces of whole records). \throws io_error */
    void appended()
    {
        if (buf_.size() >= limit_)
            flush();
    }
    /*! \brief Flush and close without committing (the data stays under the temporary name).
     * \throws io_error */
    void finish();
    /*! \brief Rename into place. \pre finish() returned. \throws io_error */
    void commit();

private:
    void flush();
    struct state;
    std::unique_ptr<state> s_;
    std::string buf_;
    std::size_t limit_{0};
};

/*! \brief Record writer to an output_file. Format from the extension (fallback: the input's);
 * `.gz` writes BGZF (gzip-compatible, no time stamp or file name: deterministic bytes, the same for
 * any thread count; `.sam.gz` is BGZF-compressed SAM). Same format as the input: raw bytes verbatim
 * (SAM, BAM and CRAM inputs count as one family: their records are re-emitted field for field,
 * under writer_options::sam_header); otherwise converted: FASTQ -> FASTA writes ">header\nseq\n"
 * (qualities dropped); FASTA -> FASTQ writes qualities 'I'; SAM/BAM -> FASTA/FASTQ writes QNAME,
 * SEQ and QUAL as stored ('I' for a missing QUAL; also for FLAG 0x10: the record's sequence as
 * read, unlike samtools fastq); FASTA/FASTQ -> SAM/BAM/CRAM writes unaligned records (flag 4, QNAME
 * = name, the comment is dropped) under the given header or "@HD VN:1.6 SO:unknown". CRAM output is
 * written without reference (CRAM_OPT_NO_REF). Call close() to flush and commit; a writer destroyed
 * without close() leaves nothing behind (an in-place output keeps what was already written). */
class writer
{
public:
    [[nodiscard]] static std::unique_ptr<writer>
    open(std::string const & path, seq_format input_format, writer_options const & options = {});
    virtual ~writer() = default;
    /*! \brief Append one record. \pre the record comes from a batch of format `input_format`. */
    virtual void write(record_view const & record) = 0;
    /*! \brief Records written from now on come from batches of format `format` (several inputs of
     * different formats in one run). */
    virtual void set_input_format(seq_format format) noexcept = 0;
    /*! \brief Flush and close without committing (the data stays under the temporary name), so that
     * a command can finish every output before it commits any. \throws io_error */
    virtual void finish() = 0;
    /*! \brief Rename into place. \pre finish() returned. \throws io_error */
    virtual void commit() = 0;
    /*! \brief finish() then commit(). \throws io_error */
    void close()
    {
        finish();
        commit();
    }
};

/*! \brief Mate-name equality used by paired readers: compare up to the first whitespace, after
 * stripping a trailing "/1" or "/2" from each name; names that then differ only in a last
 * ".1"/".2", "_1"/"_2" or ":1"/":2" (`a` ending in 1, `b` in 2: fastq-dump --readids) match too. */
[[nodiscard]] bool mate_names_match(std::string_view a, std::string_view b) noexcept;

} // namespace ksieve::io
