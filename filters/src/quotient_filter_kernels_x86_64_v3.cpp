// The quotient filter's hot paths compiled for x86-64-v3 (CMake gives this file -march=x86-64-v3):
// quotient_filter::kernel<1> (pdep select, bzhi masks) and its exported entry points.
#if KSIEVE_HAVE_X86_64_V3_KERNELS
#include "quotient_filter_impl.hpp"

namespace ksieve
{

#define KSIEVE_QF_LEVEL 1
#define KSIEVE_QF_LEVEL_NS x86_64_v3
#include "quotient_filter_kernels.inc"
// the entry points of kernel<1> (after its definition)
#include "quotient_filter_kernel_entries.inc"
#undef KSIEVE_QF_LEVEL_NS
#undef KSIEVE_QF_LEVEL

} // namespace ksieve
#endif
