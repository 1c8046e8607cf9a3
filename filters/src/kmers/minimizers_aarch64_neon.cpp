// The minimizers' kernels for aarch64 with NEON: detail::aarch64_neon, the NEON scan of short
// records (the selection stays the generic one); the body is minimizers_kernels.inc.
#if KSIEVE_HAVE_AARCH64_NEON_KERNELS
#include "minimizers_kernels.hpp"

#include <arm_neon.h>
#include <cstdint>
#include <cstring>

#define KSIEVE_MINIMIZERS_NEON 1

namespace ksieve::detail::aarch64_neon
{

#include "minimizers_kernels.inc"

} // namespace ksieve::detail::aarch64_neon
#endif
