#pragma once
// GenBank and EMBL input (annotated reference records), read through seqan3 (not installed, not
// public API).
#include "detail.hpp"

#include <memory>
#include <string>

namespace ksieve::io::detail
{

enum class annotated_format
{
    genbank,
    embl
};

// Whether this build reads GenBank and EMBL (it was built with seqan3).
[[nodiscard]] bool have_annotated_input() noexcept;

// A reader of the GenBank or EMBL records in `source` (decompressed bytes). Each record becomes a
// FASTA record: name and header from its LOCUS / ID line, the bases of its ORIGIN / SQ section
// (upper case, IUPAC codes other than A, C, G, T as N); format() is fasta, so outputs of such
// records are FASTA. \throws input_error naming the file and record for malformed input, or when
// have_annotated_input() is false.
[[nodiscard]] std::unique_ptr<reader> make_annotated_reader(std::string path,
                                                            std::unique_ptr<byte_source> source,
                                                            annotated_format format,
                                                            reader_options const & options);

} // namespace ksieve::io::detail
