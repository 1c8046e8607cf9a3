// hit_set::lookup's body, compiled once per CPU level into that level's namespace: hit_set.cpp for
// the build's target (detail::generic), hit_set_x86_64_v3.cpp for x86-64-v3 (detail::x86_64_v3).
#pragma once
#include <ksieve/engine/hit_set.hpp>

#include <cstddef>
#include <cstdint>

namespace ksieve::detail
{

namespace generic
{
/*! \brief hit_set::lookup over the non-empty table `slots` of `set` (hit_set::home's shift
 * `shift`): out[i] = hit_value if keys[i] is in the set, else 0. Thread-safe (reads only). */
void hit_set_lookup(hit_set const & set, std::uint64_t const * slots, unsigned shift,
                    std::uint64_t const * keys, std::size_t n, std::uint64_t * out,
                    std::uint64_t hit_value) noexcept;
} // namespace generic

namespace x86_64_v3
{
/*! \brief The same, compiled for x86-64-v3. \pre detail::use_v3_kernels(). */
void hit_set_lookup(hit_set const & set, std::uint64_t const * slots, unsigned shift,
                    std::uint64_t const * keys, std::size_t n, std::uint64_t * out,
                    std::uint64_t hit_value) noexcept;
} // namespace x86_64_v3

} // namespace ksieve::detail
