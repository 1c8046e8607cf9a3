// The quotient filter's hot paths for the build's own target: the exported entry points of
// quotient_filter::kernel<0> (the body is quotient_filter_kernels.inc).
#include "quotient_filter_kernels.hpp"

namespace ksieve
{

#define KSIEVE_QF_LEVEL 0
#include "quotient_filter_kernel_entries.inc"
#undef KSIEVE_QF_LEVEL

} // namespace ksieve
