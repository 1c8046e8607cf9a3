// The engine's kernel families' dispatch tables (hit_set's lookup), one entry per CPU level, filled
// with the copies this build compiled; the level comes from the filter library's one choice
// (ksieve/filters/support/cpu_dispatch.hpp).
#include "hit_set_kernels.hpp"

namespace ksieve::detail
{

// hit_set: generic, x86-64-v3 (AVX2; the x86-64-v4 level runs it too) and aarch64 NEON.
#if KSIEVE_HAVE_X86_64_V3_KERNELS
constexpr hit_set_kernel_table hit_set_v3{&x86_64_v3::hit_set_lookup};
#else
constexpr hit_set_kernel_table hit_set_v3{&generic::hit_set_lookup};
#endif
#if KSIEVE_HAVE_AARCH64_NEON_KERNELS
constexpr hit_set_kernel_table hit_set_neon{&aarch64_neon::hit_set_lookup};
#else
constexpr hit_set_kernel_table hit_set_neon{&generic::hit_set_lookup};
#endif
hit_set_kernel_table const hit_set_kernel_tables[simd_level_count] = {
    hit_set_kernel_table{&generic::hit_set_lookup}, hit_set_v3, hit_set_v3, hit_set_neon};

} // namespace ksieve::detail
