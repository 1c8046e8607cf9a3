#pragma once
/*! \file
 * \brief The result of one unit of work (a read or a pair): its k-mers, hits, class and label.
 */
#include <cstdint>

namespace ksieve
{

/*! \brief Per-unit result: k-mers looked up, hits among them, and the class (known or novel).
 * Thread safety: a plain value. */
struct unit_result
{
    /*! \brief label: none (unlabeled filters, novel units). */
    static constexpr std::uint32_t no_label = ~std::uint32_t{0};
    /*! \brief label: the top labels tie. */
    static constexpr std::uint32_t ambiguous = no_label - 1;

    std::uint32_t kmers{0};
    std::uint32_t hits{0};
    bool known{false};
    /*! \brief Known by a second look at every k-mer (anchor_rescue), its minimizers having left it
     * one hit short. */
    bool rescued{false};
    /*! \brief Against a labeled filter: the index of the known unit's label, or ambiguous. */
    std::uint32_t label{no_label};
};

} // namespace ksieve
