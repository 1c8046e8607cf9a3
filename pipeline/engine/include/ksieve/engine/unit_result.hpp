#pragma once
/*! \file
 * \brief The result of one unit of work (a read or a pair): its k-mers, hits and class.
 */
#include <cstdint>

namespace ksieve
{

/*! \brief Per-unit result: k-mers looked up, hits among them, and the class (known or novel).
 * Thread safety: a plain value. */
struct unit_result
{
    std::uint32_t kmers{0};
    std::uint32_t hits{0};
    bool known{false};
};

} // namespace ksieve
