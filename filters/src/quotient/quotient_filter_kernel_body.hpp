// The quotient filter's kernel body compiled for the build's own target, in detail::generic
// (private header of the quotient filter's sources: the cursor, the appender and the single-key
// edits use its slot-level primitives; quotient_filter_generic.cpp exports its entries).
// Code compiled for another level never includes it.
#pragma once

#include "quotient_filter_impl.hpp"
#include "quotient_filter_kernel_view.hpp"
#include "quotient_filter_kernels.hpp"

namespace ksieve::detail::generic
{

// (internal linkage: no code compiled for a higher level can be picked by the linker for another)
namespace
{
#include "quotient_filter_kernels.inc"

#include "quotient_filter_kernels_slots.inc"

#include "quotient_filter_kernels_ops.inc"

#include "quotient_filter_kernels_sharded.inc"
} // namespace

} // namespace ksieve::detail::generic
