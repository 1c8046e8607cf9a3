// The minimizers' kernel family (private header of minimizers.cpp, the wrapper sources and
// cpu_dispatch.cpp): the vector scan of short records and the selection of their windows' minima,
// as each CPU level's copy exports them, and their dispatch table. The body is
// minimizers_kernels.inc.
#pragma once

#include <ksieve/filters/kmers/sampling.hpp>
#include <ksieve/filters/support/cpu_dispatch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ksieve::detail
{

/*! \brief detail::scan_short_record (sampling.hpp) of one level: false where the level has no
 * vector scan. */
using minimizers_scan_acgt_fn = bool(std::string_view seq, unsigned k, bool canonical,
                                     std::uint64_t code_mask, std::uint64_t salt,
                                     minimizer_scratch & s) noexcept;
/*! \brief detail::select_short_record_minima (sampling.hpp) of one level: no_short_record_minima
 * where the level has no vector selection. */
using minimizers_select_minima_fn = std::size_t(minimizer_scratch & s, std::size_t n, std::size_t w,
                                                std::size_t & prev) noexcept;

/*! \brief The minimizers' dispatch table: one CPU level's entries. */
struct minimizer_kernel_table
{
    minimizers_scan_acgt_fn * scan_acgt;         //!< codes and orders of a short A/C/G/T record
    minimizers_select_minima_fn * select_minima; //!< its windows' minima
};

namespace generic
{
// The build's target (minimizers_generic.cpp): neither (detail::scan_record and
// detail::select_window_minima, inline in sampling.hpp, are the generic code).
minimizers_scan_acgt_fn minimizers_scan_acgt;
minimizers_select_minima_fn minimizers_select_minima;
} // namespace generic

namespace x86_64_v4
{
// x86-64-v4 (minimizers_x86_64_v4.cpp): AVX-512, eight positions at a time.
minimizers_scan_acgt_fn minimizers_scan_acgt;
minimizers_select_minima_fn minimizers_select_minima;
} // namespace x86_64_v4

namespace aarch64_neon
{
// aarch64 (minimizers_aarch64_neon.cpp): NEON letters to codes 16 bytes at a time, then the two
// halves of the record in the two 64-bit lanes; the selection is the generic one.
minimizers_scan_acgt_fn minimizers_scan_acgt;
minimizers_select_minima_fn minimizers_select_minima;
} // namespace aarch64_neon

/*! \brief The minimizers' table per simd_level (filled by cpu_dispatch.cpp). */
extern minimizer_kernel_table const minimizer_kernel_tables[simd_level_count];

/*! \brief The active level's entry of minimizer_kernel_tables, null until the level is chosen (set
 * by cpu_dispatch.cpp with the choice). */
extern std::atomic<minimizer_kernel_table const *> minimizer_kernels_active;

/*! \brief minimizer_kernels() before the first choice: makes it, returns the entries. */
[[nodiscard, gnu::noinline]] minimizer_kernel_table const & minimizer_kernels_chosen() noexcept;

/*! \brief The minimizers' active entries. */
[[nodiscard, gnu::always_inline]] inline minimizer_kernel_table const & minimizer_kernels() noexcept
{
    minimizer_kernel_table const * const t =
        minimizer_kernels_active.load(std::memory_order_relaxed);
    if (t == nullptr) [[unlikely]]
        return minimizer_kernels_chosen();
    return *t;
}

} // namespace ksieve::detail
