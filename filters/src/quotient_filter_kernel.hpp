// The quotient filter's slot-level primitives and hot paths for the build's own target, as
// quotient_filter::kernel<0> (private header of the quotient filter's sources).
#pragma once

#include "quotient_filter_impl.hpp"

namespace ksieve
{

// ---------------------------------------------------------------------------------------------------------
// Slot-level primitives and hot paths: quotient_filter::kernel<0> (the build's target) and, on x86-64 builds
// without BMI2, kernel<1> (BMI1/BMI2/LZCNT/POPCNT: pdep select, bzhi masks). detail::use_pdep_kernels()
// (cpu_dispatch.hpp) picks one at run time.

#define KSIEVE_QF_PASTE2(a, b) a##b
#define KSIEVE_QF_PASTE(a, b) KSIEVE_QF_PASTE2(a, b)

#define KSIEVE_QF_ISA 0
#include "quotient_filter_hot.inc"
#undef KSIEVE_QF_ISA

} // namespace ksieve
