// hit_set::lookup for the build's own target, detail::generic (the body is hit_set_kernels.inc).
#include "hit_set_kernels.hpp"

namespace ksieve::detail::generic
{

#include "hit_set_kernels.inc"

} // namespace ksieve::detail::generic
