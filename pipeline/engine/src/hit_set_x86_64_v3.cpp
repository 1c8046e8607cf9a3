// hit_set::lookup compiled for x86-64-v3 (CMake gives this file -march=x86-64-v3): AVX2 bucket
// compares.
#if KSIEVE_HAVE_X86_64_V3_KERNELS
#include "hit_set_lookup.hpp"

namespace ksieve::detail::x86_64_v3
{

#include "hit_set_lookup.inc"

} // namespace ksieve::detail::x86_64_v3
#endif
