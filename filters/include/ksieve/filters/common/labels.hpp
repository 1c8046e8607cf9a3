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
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ksieve
{

/*! \brief Label names and the classes (label sets) of a labeled filter. */
struct label_table
{
    std::vector<std::string> names; //!< label index -> name (non-empty, distinct)
    //! class id -> its labels (indices into names, strictly increasing, at least one)
    std::vector<std::vector<std::uint32_t>> classes;
    std::vector<std::uint64_t> class_kmers; //!< class id -> fingerprints of that class

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

/*! \brief The longest label name, in bytes. */
inline constexpr std::size_t max_label_name_bytes = 255;

/*! \brief Whether `name` follows the one rule for label names, at every route (build, merge, a
 * filter file read from elsewhere): 1 to max_label_name_bytes bytes of ASCII letters, digits and
 * `_ - . +`, not starting with `.` or `-`, and not the word the report reserves (`ambiguous`).
 * Such a name is never a path: it holds no `/`, is neither `.` nor `..`, and no control byte. */
[[nodiscard]] bool is_label_name(std::string_view name) noexcept;

/*! \brief The rule of is_label_name() in words, for error messages. */
[[nodiscard]] std::string const & label_name_rule();

/*! \brief `name` with bytes outside printable ASCII (and `\\`) written as `\\xHH`, cut after 80
 * bytes: a name from an untrusted file shown in a message. */
[[nodiscard]] std::string printable_label(std::string_view name);

/*! \brief Refuse a label name outside the rule of is_label_name(). \throws usage_error naming it
 * (printable_label()) and saying the rule. */
void check_label_name(std::string const & name);

/*! \brief The label name of a file: its name without directory and every extension (`dir/s1.ksf`
 * -> `s1`, `a/mouse.fa.gz` -> `mouse`); the whole file name where that leaves nothing. */
[[nodiscard]] std::string label_of_path(std::string const & path);

} // namespace ksieve
