#pragma once
// Internal: the app layer's only call that differs between operating systems (the allocator's
// arenas, glibc's mallopt), with a portable fallback. The glibc call is compiled on Linux unless
// KSIEVE_NO_LINUX_CALLS is defined (CMake option KSIEVE_PORTABLE_FALLBACKS).

namespace ksieve::app_platform
{

/*! \brief Keep the allocator to one arena (glibc: mallopt(M_ARENA_MAX, 1); elsewhere nothing: other
 * allocators reserve no address space per thread). Call before any thread starts. */
void limit_allocator_arenas() noexcept;

} // namespace ksieve::app_platform
