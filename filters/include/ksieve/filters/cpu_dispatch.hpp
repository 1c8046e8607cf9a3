#pragma once
/*! \file
 * \brief The one run-time choice of SIMD kernels, for the filter library and the code built on it
 * (the engine's hit_set). An implementation detail (namespace ksieve::detail), not a stable API.
 *
 * Kernels that gain from instructions beyond the build's target have one body compiled once per CPU
 * level by small wrapper sources, each with that level's -march (CMake per-source options,
 * filters/CMakeLists.txt) and its copy in its own namespace: the quotient filter
 * (quotient_filter_kernels_*.cpp; use_pdep_kernels: x86-64-v3 with a fast pdep), the blocked Bloom
 * filter's batch kernels (bloom_blocked_kernels_*.cpp; use_v3_kernels), the engine's hit_set lookup
 * (hit_set_x86_64_v3.cpp; use_v3_kernels), and the minimizer scan of short reads
 * (minimizers_x86_64_v4.cpp; use_v4_kernels). A build whose target already has a level
 * (KSIEVE_NATIVE, KSIEVE_ARCH=x86-64-v3) compiles no extra copy for it; non-x86 builds have the
 * generic copies only.
 *
 * The CPU is asked once (cpuid, and xgetbv for the operating system's AVX state) at the first call.
 * The v3 kernels run when the CPU has all of x86-64-v3 (AVX2, BMI1, BMI2, LZCNT, POPCNT, FMA, F16C,
 * MOVBE); the v4 kernels besides need AVX-512 F, BW, CD, DQ and VL; the pdep kernels besides need a
 * fast pdep, which AMD Zen 1/Zen 2 and Hygon lack (microcoded, hundreds of cycles), so these CPUs
 * keep the generic select. The environment variable KSIEVE_SIMD=generic, read at that first call,
 * forces the generic kernels everywhere; KSIEVE_SIMD=x86-64-v3 keeps the AVX-512 kernels off. All
 * copies compute the same results (byte-identical tables).
 *
 * Thread safety: every function may be called concurrently; the choice is one relaxed atomic int.
 * force_simd_level / reset_simd_level (test hooks) change it for all threads at once.
 */
#include <atomic>

namespace ksieve::detail
{

/*! \brief The instruction-set levels the kernels are compiled for. */
enum class simd_level : int
{
    generic = 0,   //!< the build's target (-march), no run-time detection needed
    x86_64_v3 = 1, //!< AVX2, BMI1, BMI2, LZCNT, POPCNT, FMA, F16C, MOVBE; the OS saves AVX state
    x86_64_v4 = 2  //!< x86-64-v3 and AVX-512 F, BW, CD, DQ, VL (and the OS saves the ZMM registers)
};

/*! \brief Bits of the active choice. */
inline constexpr int simd_v3_kernels = 1;   //!< the x86-64-v3 kernels run
inline constexpr int simd_pdep_kernels = 2; //!< the kernels built on pdep run (v3 and a fast pdep)
inline constexpr int simd_v4_kernels = 4;   //!< the x86-64-v4 kernels run (the minimizer scan)
inline constexpr int simd_unset = -1;       //!< not chosen yet

/*! \brief The active choice (simd_* bits), simd_unset before the first call. */
extern std::atomic<int> simd_choice;

/*! \brief Detects the CPU, reads the environment, stores and returns the choice (first call only).
 */
[[nodiscard]] int simd_choose() noexcept;

/*! \brief The active choice: one relaxed load once chosen. */
[[nodiscard, gnu::always_inline]] inline int simd_kernels() noexcept
{
    int const c = simd_choice.load(std::memory_order_relaxed);
    if (c != simd_unset) [[likely]]
        return c;
    return simd_choose();
}

/*! \brief Whether the x86-64-v3 copies (AVX2) are to be used now. */
[[nodiscard, gnu::always_inline]] inline bool use_v3_kernels() noexcept
{
    return (simd_kernels() & simd_v3_kernels) != 0;
}

/*! \brief Whether the x86-64-v4 copies (AVX-512) are to be used now. */
[[nodiscard, gnu::always_inline]] inline bool use_v4_kernels() noexcept
{
    return (simd_kernels() & simd_v4_kernels) != 0;
}

/*! \brief Whether the copies built on pdep (BMI2) are to be used now. */
[[nodiscard, gnu::always_inline]] inline bool use_pdep_kernels() noexcept
{
    return (simd_kernels() & simd_pdep_kernels) != 0;
}

/*! \brief The highest level the CPU runs (generic off x86-64 or without cpuid). Cached. */
[[nodiscard]] simd_level cpu_simd_level() noexcept;

/*! \brief Whether the CPU runs code of `level` (generic: always). */
[[nodiscard]] bool simd_level_supported(simd_level level) noexcept;

/*! \brief The level of the active kernels (chosen at the first call if not forced). */
[[nodiscard]] simd_level active_simd_level() noexcept;

/*! \brief Test only: every later dispatched call uses `level` (generic if the CPU lacks it), the
 * pdep kernels included whatever the speed of the CPU's pdep. Not to be called while other threads
 * run filter operations whose path matters to them. */
void force_simd_level(simd_level level) noexcept;

/*! \brief Test only: back to the automatic choice (CPU and environment, read again). */
void reset_simd_level() noexcept;

} // namespace ksieve::detail
