// hit_set::lookup for aarch64 with NEON: detail::aarch64_neon, the bucket's keys compared two at a
// time (the body is hit_set_kernels.inc).
#if KSIEVE_HAVE_AARCH64_NEON_KERNELS
#include "hit_set_kernels.hpp"

#include <arm_neon.h>

#define KSIEVE_HIT_SET_NEON 1

namespace ksieve::detail::aarch64_neon
{

#include "hit_set_kernels.inc"

} // namespace ksieve::detail::aarch64_neon
#endif
