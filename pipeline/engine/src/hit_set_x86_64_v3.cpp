// hit_set::lookup compiled for x86-64-v3 (CMake gives this file -march=x86-64-v3):
// detail::x86_64_v3, AVX2 bucket compares (the body is hit_set_kernels.inc).
#if KSIEVE_HAVE_X86_64_V3_KERNELS
#include "hit_set_kernels.hpp"

namespace ksieve::detail::x86_64_v3
{

#include "hit_set_kernels.inc"

} // namespace ksieve::detail::x86_64_v3
#endif
