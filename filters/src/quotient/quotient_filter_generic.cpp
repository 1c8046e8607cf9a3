// The quotient filter's kernel entries for the build's own target, detail::generic (the body,
// quotient_filter_kernels.inc, comes with quotient_filter_kernel_body.hpp).
#include "quotient_filter_kernel_body.hpp"

namespace ksieve::detail::generic
{

#include "quotient_filter_kernel_entries.inc"

} // namespace ksieve::detail::generic
