// The quotient filter's kernel for the build's own target, quotient_filter::kernel<0> (private
// header of the quotient filter's sources; the x86-64-v3 copy is
// quotient_filter_kernels_x86_64_v3.cpp).
#pragma once

#include "quotient_filter_impl.hpp"

namespace ksieve
{

#define KSIEVE_QF_LEVEL 0
#define KSIEVE_QF_LEVEL_NS generic
#include "quotient_filter_kernels.inc"
#undef KSIEVE_QF_LEVEL_NS
#undef KSIEVE_QF_LEVEL

} // namespace ksieve
