// The minimizers' kernels compiled for x86-64-v4 (CMake gives this file -march=x86-64-v4 unless the
// build's target has it): detail::x86_64_v4, the AVX-512 scan of short records and the selection of
// their windows' minima; the body is minimizers_kernels.inc.
#if KSIEVE_HAVE_X86_64_V4_KERNELS
#include "minimizers_kernels.hpp"

#include <cstdint>
#include <immintrin.h>

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 headers initialize their undefined vectors from themselves
// (-Wmaybe-uninitialized).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define KSIEVE_MINIMIZERS_AVX512 1

namespace ksieve::detail::x86_64_v4
{

#include "minimizers_kernels.inc"

} // namespace ksieve::detail::x86_64_v4
#endif
