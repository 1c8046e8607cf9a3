#pragma once
/*! \file
 * \brief Internal (not installed) hooks of the quotient filter's two kernels, for the tests.
 *
 * On x86-64 builds whose target lacks x86-64-v3 (the portable default, -march=x86-64-v2) the
 * quotient filter's hot paths (insert, count, insert_batch, count_batch) are compiled twice from
 * one body (quotient_filter_kernels.inc): for the build's target, with a branch-free broadword
 * select, and with -march=x86-64-v3 (pdep select, bzhi masks). cpu_dispatch.hpp chooses between
 * them (use_pdep_kernels); its force_simd_level / reset_simd_level are the tests' switch. Builds
 * that already target x86-64-v3 (KSIEVE_NATIVE, KSIEVE_ARCH=x86-64-v3) have one copy only, which
 * uses it. Both copies produce byte-identical tables.
 */
#include <ksieve/filters/cpu_dispatch.hpp>

#include <cstdint>

namespace ksieve::detail
{

/*! \brief The portable branch-free select: position of the k-th (0-based) set bit of w, 64 if w has
 * at most k set bits. \pre k < 128. Thread-safe. */
[[nodiscard]] unsigned qf_select64_portable(std::uint64_t w, unsigned k) noexcept;

/*! \brief The select64 of the copy compiled for `level` (the generic one if the CPU lacks `level`,
 * or the build has one copy only). \pre k < 64. Thread-safe. */
[[nodiscard]] unsigned qf_select64(simd_level level, std::uint64_t w, unsigned k) noexcept;

} // namespace ksieve::detail
