#pragma once
// Internal: what the FASTA/FASTQ parser, the SAM/BAM/CRAM reader, the GenBank/EMBL reader and the
// opening of inputs share: messages naming a record, the base of the file readers and their
// factories (not installed, not public API).
#include "detail.hpp"
#include "hts_handle.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace ksieve::io::detail
{

/*! \brief Bytes a reader asks its source for at a time. */
inline constexpr std::size_t read_chunk = std::size_t{1} << 20;

/*! \brief "'PATH': record N: WHAT" (stdin as <stdin>). */
[[nodiscard]] std::string record_message(std::string const & path, std::uint64_t record,
                                         std::string const & what);

/*! \brief A byte for messages: 'c' if printable, else "byte 0xHH". */
[[nodiscard]] std::string describe_byte(char c);

/*! \brief Why an input that starts with `head` cannot be read (a compression ksieve does not read
 * inside it, or no known format: naming its first byte). */
[[nodiscard]] std::string unsupported_message(std::string_view head);

/*! \brief What the file readers share: path, options, format and record count; next() as fill()
 * with the options' limits; the start of a batch. Thread safety: one thread at a time. */
class file_reader : public reader
{
public:
    bool next(record_batch & batch) final
    {
        return fill(batch, options_.batch_records, options_.batch_bases, 1);
    }
    [[nodiscard]] seq_format format() const noexcept final { return format_; }
    [[nodiscard]] std::string const & name() const noexcept final { return path_; }

protected:
    file_reader(std::string path, reader_options const & options, seq_format const format)
        : path_{std::move(path)}, options_{options}, format_{format}
    {
    }

    // Clear `batch` for the records that follow this reader's last one.
    void begin_batch(record_batch & batch) const noexcept
    {
        batch.clear();
        batch.format_ = format_;
        batch.first_ = records_ + 1;
    }

    std::string path_;
    reader_options options_;
    seq_format format_;
    std::uint64_t records_{0};
};

/*! \brief A FASTA or FASTQ reader of the decompressed bytes of `source` (format from its first
 * record). \throws input_error naming the file if the input is neither. */
[[nodiscard]] std::unique_ptr<reader> make_fastx_reader(std::string path,
                                                        std::unique_ptr<byte_source> source,
                                                        reader_options const & options);

/*! \brief A SAM/BAM/CRAM reader of `hf` (owned; at most one gzip/BGZF layer, which htslib reads).
 * \throws input_error naming the file if htslib cannot read it. */
[[nodiscard]] std::unique_ptr<reader> make_hts_reader(std::string path, hts_ptr<hFILE> hf,
                                                      reader_options const & options);

/*! \brief A SAM/BAM/CRAM reader of the decompressed bytes of `source` (inputs in extra gzip
 * layers), which a thread feeds to htslib through a socket. \throws io_error / input_error naming
 * the file. */
[[nodiscard]] std::unique_ptr<reader> make_fed_hts_reader(std::string path,
                                                          std::unique_ptr<byte_source> source,
                                                          reader_options const & options);

enum class annotated_format
{
    genbank,
    embl
};

// Whether this build reads GenBank and EMBL (it was built with seqan3).
[[nodiscard]] bool have_annotated_input() noexcept;

// A reader of the GenBank or EMBL records in `source` (decompressed bytes), read through seqan3.
// Each record becomes a FASTA record: name and header from its LOCUS / ID line, the bases of its
// ORIGIN / SQ section (upper case, IUPAC codes other than A, C, G, T as N); format() is fasta, so
// outputs of such records are FASTA. \throws input_error naming the file and record for malformed
// input, or when have_annotated_input() is false.
[[nodiscard]] std::unique_ptr<reader> make_annotated_reader(std::string path,
                                                            std::unique_ptr<byte_source> source,
                                                            annotated_format format,
                                                            reader_options const & options);

} // namespace ksieve::io::detail
