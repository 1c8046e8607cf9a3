#pragma once
/*! \file
 * \brief The one run-time choice of CPU level for every kernel family of the filter library and the
 * code built on it (the engine's hit_set). An implementation detail (namespace ksieve::detail), not
 * a stable API.
 *
 * Kernel families (docs/design.md, "Code layout"): one body compiled once per CPU level by a
 * wrapper source `<family>_<level>.cpp`, its entries in `detail::<level>`, and one dispatch table
 * per family filled by the library's cpu_dispatch.cpp (a level without a copy runs the nearest
 * lower one). The CPU is asked once (cpuid, and xgetbv for the operating system's AVX state) at the
 * first call; the quotient filter's pdep select also needs a fast pdep, which AMD Zen 1/Zen 2 and
 * Hygon lack (microcoded): these CPUs keep its portable select. KSIEVE_SIMD=generic, read at that
 * first call, forces the generic copies; KSIEVE_SIMD=x86-64-v3 keeps the AVX-512 copies off. All
 * copies compute the same results (byte-identical tables).
 *
 * Thread safety: every function may be called concurrently; the choice is one relaxed atomic int.
 * force_simd_level / reset_simd_level (test hooks) change it for all threads at once.
 */
#include <atomic>

namespace ksieve::detail
{

/*! \brief The CPU levels kernel families are compiled for (the index of a level's entry in a
 * family's dispatch table). */
enum class simd_level : int
{
    generic = 0,   //!< the build's target (-march), no run-time detection needed
    x86_64_v3 = 1, //!< AVX2, BMI1, BMI2, LZCNT, POPCNT, FMA, F16C, MOVBE; the OS saves AVX state
    x86_64_v4 = 2, //!< x86-64-v3 and AVX-512 F, BW, CD, DQ, VL (and the OS saves the ZMM registers)
    aarch64_neon = 3 //!< aarch64 with NEON (Advanced SIMD, mandatory on aarch64)
};

/*! \brief Entries of a family's dispatch table: one per simd_level. */
inline constexpr int simd_level_count = 4;

/*! \brief Bits of the active choice: the active simd_level (bits 0-1) and the quotient filter's
 * table index (bits 2-3: the level's, or the generic one where the CPU's pdep is slow). */
inline constexpr int simd_level_bits = 3; //!< mask of a level, or of a table index
inline constexpr int simd_qf_shift = 2;   //!< the quotient filter's table index
inline constexpr int simd_unset = -1;     //!< not chosen yet

/*! \brief The active choice (simd_* bits), simd_unset before the first call. */
extern std::atomic<int> simd_choice;

/*! \brief Detects the CPU, reads the environment, stores and returns the choice (first call). */
[[nodiscard]] int simd_choose() noexcept;

/*! \brief The active choice: one relaxed load once chosen. */
[[nodiscard, gnu::always_inline]] inline int simd_kernels() noexcept
{
    int const c = simd_choice.load(std::memory_order_relaxed);
    if (c != simd_unset) [[likely]]
        return c;
    return simd_choose();
}

/*! \brief The level of the active kernels (chosen at the first call if not forced). */
[[nodiscard, gnu::always_inline]] inline simd_level active_simd_level() noexcept
{
    return static_cast<simd_level>(simd_kernels() & simd_level_bits);
}

/*! \brief The dispatch table index of the active level (0 .. simd_level_count - 1). */
[[nodiscard, gnu::always_inline]] inline int active_simd_index() noexcept
{
    return simd_kernels() & simd_level_bits;
}

/*! \brief The highest level the CPU runs (generic off x86-64 and aarch64, or without cpuid).
 * Cached. */
[[nodiscard]] simd_level cpu_simd_level() noexcept;

/*! \brief Whether the CPU runs code of `level` (generic: always; x86 levels on x86-64 CPUs that
 * have them; aarch64_neon on aarch64). */
[[nodiscard]] bool simd_level_supported(simd_level level) noexcept;

/*! \brief Test only: every later dispatched call uses `level` (generic if the CPU lacks it), the
 * quotient filter's pdep select included whatever the speed of the CPU's pdep. Not to be called
 * while other threads run filter operations whose path matters to them. */
void force_simd_level(simd_level level) noexcept;

/*! \brief Test only: back to the automatic choice (CPU and environment, read again). */
void reset_simd_level() noexcept;

} // namespace ksieve::detail
