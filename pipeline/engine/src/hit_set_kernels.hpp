// hit_set's kernel family (private header of hit_set.cpp, its wrapper sources and the engine's
// cpu_dispatch.cpp): the lookup each CPU level's copy exports and its dispatch table. The body is
// hit_set_kernels.inc.
#pragma once
#include <ksieve/engine/hit_set.hpp>

#include <ksieve/filters/support/cpu_dispatch.hpp>

#include <cstddef>
#include <cstdint>

namespace ksieve::detail
{

/*! \brief hit_set::lookup over the non-empty table `slots` of `set` (hit_set::home's shift
 * `shift`): out[i] = hit_value if keys[i] is in the set, else 0. Thread-safe (reads only). */
using hit_set_lookup_fn = void(hit_set const & set, std::uint64_t const * slots, unsigned shift,
                               std::uint64_t const * keys, std::size_t n, std::uint64_t * out,
                               std::uint64_t hit_value) noexcept;

/*! \brief hit_set's dispatch table: one CPU level's entries. */
struct hit_set_kernel_table
{
    hit_set_lookup_fn * lookup; //!< hit_set::lookup
};

namespace generic
{
// The build's target (hit_set_generic.cpp): the bucket's compares as one generic vector compare.
hit_set_lookup_fn hit_set_lookup;
} // namespace generic

namespace x86_64_v3
{
// x86-64-v3 (hit_set_x86_64_v3.cpp, where the build's target lacks it): AVX2 compares.
hit_set_lookup_fn hit_set_lookup;
} // namespace x86_64_v3

namespace aarch64_neon
{
// aarch64 (hit_set_aarch64_neon.cpp): NEON compares of the bucket's four pairs of keys.
hit_set_lookup_fn hit_set_lookup;
} // namespace aarch64_neon

/*! \brief hit_set's table per simd_level (filled by the engine's cpu_dispatch.cpp). */
extern hit_set_kernel_table const hit_set_kernel_tables[simd_level_count];

/*! \brief hit_set's active entries. */
[[nodiscard, gnu::always_inline]] inline hit_set_kernel_table const & hit_set_kernels() noexcept
{
    return hit_set_kernel_tables[active_simd_index()];
}

} // namespace ksieve::detail
