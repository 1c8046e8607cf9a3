// The app layer's call that differs between operating systems (platform_app.hpp): the number of
// glibc's malloc arenas, guarded by __linux__ and glibc's own macros, with the portable fallback
// beside it.
#include "platform_app.hpp"

#include <cstdlib>

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

} // namespace ksieve::app_platform
