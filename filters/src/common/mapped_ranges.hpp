#pragma once
// Internal: the registry of the address ranges where filter files are mapped, with their names,
// read by mapped_filter_name() (for a SIGBUS handler) and kept by mapped_filter_file; the magic
// that opens every filter file (refused early in a stream).
#include <cstdint>
#include <string>

namespace ksieve::detail
{

/*! \brief The first 8 bytes of every filter file. */
inline constexpr char file_magic[8] = {'K', 'S', 'I', 'E', 'V', 'E', 'f', 'l'};

/*! \brief Record [begin, begin + bytes) as the mapping of the filter file `name`. \returns its slot
 * for forget_mapping(), -1 if the registry is full or the name too long (a fault there is then not
 * named). Thread-safe, lock-free. */
[[nodiscard]] int remember_mapping(void const * begin, std::uint64_t bytes,
                                   std::string const & name) noexcept;

/*! \brief Drop the slot of remember_mapping() (before the range is unmapped); -1 is ignored.
 * Thread-safe. */
void forget_mapping(int slot) noexcept;

} // namespace ksieve::detail
