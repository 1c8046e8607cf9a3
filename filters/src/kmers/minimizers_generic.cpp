// The minimizers' kernel entries for the build's own target, detail::generic: no vector scan and no
// vector selection (the generic code, detail::scan_record and detail::select_window_minima, is
// inline in sampling.hpp); the body is minimizers_kernels.inc.
#include "minimizers_kernels.hpp"

namespace ksieve::detail::generic
{

#include "minimizers_kernels.inc"

} // namespace ksieve::detail::generic
