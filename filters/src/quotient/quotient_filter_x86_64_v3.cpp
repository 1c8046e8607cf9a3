// The quotient filter's kernel compiled for x86-64-v3 (CMake gives this file -march=x86-64-v3):
// detail::x86_64_v3's body (pdep select, bzhi masks) and its entries.
#if KSIEVE_HAVE_X86_64_V3_KERNELS
#include "quotient_filter_impl.hpp"
#include "quotient_filter_kernel_view.hpp"
#include "quotient_filter_kernels.hpp"

namespace ksieve::detail::x86_64_v3
{

// (internal linkage: no code compiled for a higher level can be picked by the linker for another)
namespace
{
#include "quotient_filter_kernels.inc"

#include "quotient_filter_kernels_slots.inc"

#include "quotient_filter_kernels_ops.inc"

#include "quotient_filter_kernels_sharded.inc"
} // namespace

#include "quotient_filter_kernel_entries.inc"

} // namespace ksieve::detail::x86_64_v3
#endif
