#pragma once
// Internal: the app layer's calls that differ between operating systems (the allocator's arenas,
// glibc's mallopt; the unit of the peak resident set), with portable fallbacks. The glibc call is
// compiled on Linux unless KSIEVE_NO_LINUX_CALLS is defined (CMake option
// KSIEVE_PORTABLE_FALLBACKS).

#include <cstdint>

namespace ksieve::app_platform
{

/*! \brief Keep the allocator to one arena (glibc: mallopt(M_ARENA_MAX, 1); elsewhere nothing: other
 * allocators reserve no address space per thread). Call before any thread starts. */
void limit_allocator_arenas() noexcept;

/*! \brief The peak resident set of this process so far, in bytes (getrusage's ru_maxrss: KiB on
 * Linux and the BSDs, bytes on macOS); 0 where the system does not say. It counts the pages of a
 * mapped filter file that were read as well as private memory. Thread safety: any thread. */
[[nodiscard]] std::uint64_t peak_resident_bytes() noexcept;

} // namespace ksieve::app_platform
