// The app layer's calls that differ between operating systems (platform_app.hpp): the number of
// glibc's malloc arenas, guarded by __linux__ and glibc's own macros, with the portable fallback
// beside it; the peak resident set from getrusage, whose unit differs (bytes on macOS).
#include "platform_app.hpp"

#include <cstdlib>

#include <sys/resource.h>

#if defined(__linux__) && !defined(KSIEVE_NO_LINUX_CALLS) && defined(__GLIBC__)
#include <malloc.h>
#define KSIEVE_GLIBC_MALLOC 1
#else
#define KSIEVE_GLIBC_MALLOC 0
#endif

namespace ksieve::app_platform
{

void limit_allocator_arenas() noexcept
{
#if KSIEVE_GLIBC_MALLOC && defined(M_ARENA_MAX)
    mallopt(M_ARENA_MAX, 1);
#endif
}

std::uint64_t peak_resident_bytes() noexcept
{
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) != 0 || usage.ru_maxrss <= 0)
        return 0;
    auto const value = static_cast<std::uint64_t>(usage.ru_maxrss);
#if defined(__APPLE__)
    return value; // bytes
#else
    return value * 1024; // KiB
#endif
}

} // namespace ksieve::app_platform
