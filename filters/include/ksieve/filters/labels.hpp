#pragma once
/*! \file
 * \brief Labels of a labeled filter: the label names, the label sets ("classes") that its k-mers
 * carry, and their encoding in the filter file.
 *
 * A labeled quotient filter stores, as each fingerprint's count, its class id + 1; the class table
 * gives the set of labels of each class (Mantis's color classes). Class ids are numbered by
 * decreasing number of fingerprints (ties: the label sets in lexicographic order), so that the most
 * common class has id 0 and takes the one-slot counter. The table also records each class's
 * fingerprints, which gives the distinct k-mers of every label and of every pair of labels without
 * a walk of the filter.
 *
 * Thread safety: a value type; const members from any thread.
 */
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ksieve
{

/*! \brief Label names and the classes (label sets) of a labeled filter. */
struct label_table
{
    /*! \brief Label index -> name (non-empty, distinct). */
    std::vector<std::string> names;
    /*! \brief Class id -> its labels (indices into names, strictly increasing, at least one). */
    std::vector<std::vector<std::uint32_t>> classes;
    /*! \brief Class id -> fingerprints of that class in the filter. */
    std::vector<std::uint64_t> class_kmers;

    /*! \brief Whether the table has any label. */
    [[nodiscard]] bool empty() const noexcept { return names.empty(); }

    /*! \brief Distinct k-mers (fingerprints) of each label: the sum over its classes. */
    [[nodiscard]] std::vector<std::uint64_t> label_kmers() const;

    /*! \brief shared[a * L + b]: the fingerprints whose label set holds both a and b (L labels;
     * the diagonal is label_kmers()). Cost: the sum over classes of their size squared. */
    [[nodiscard]] std::vector<std::uint64_t> shared_kmers() const;

    /*! \brief The bytes of the table in a filter file (docs/file_format.md, labels section). */
    [[nodiscard]] std::vector<unsigned char> encode() const;

    /*! \brief The table encoded in `bytes`. \throws format_error naming `file` where the bytes are
     * not a valid table. */
    [[nodiscard]] static label_table decode(std::span<unsigned char const> bytes,
                                            std::string const & file);

    friend bool operator==(label_table const &, label_table const &) = default;
};

/*! \brief Refuse a label name that the outputs could not show: empty, with a tab or a line break,
 * or one of the words the report reserves (`ambiguous`, `-`). \throws usage_error naming it. */
void check_label_name(std::string const & name);

/*! \brief The label name of a file: its name without directory and without every extension
 * (`dir/s1.ksf` -> `s1`, `a/mouse.fa.gz` -> `mouse`); the whole file name where that leaves
 * nothing. */
[[nodiscard]] std::string label_of_path(std::string const & path);

} // namespace ksieve
