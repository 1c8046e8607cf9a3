#pragma once
/*! \file
 * \brief Internal (not installed) hooks of the quotient filter's instruction-set dispatch, for the tests.
 *
 * On x86-64 builds without BMI2 (the portable default, -march=x86-64-v2) the quotient filter compiles its
 * hot paths (insert, count, insert_batch, count_batch) twice: generic, with a branch-free broadword select,
 * and for BMI1/BMI2/LZCNT/POPCNT (pdep select, bzhi masks). The BMI2 copy is used when the CPU has these
 * instructions and runs pdep fast (not AMD Zen 1/Zen 2 or Hygon, whose pdep is microcoded), unless the
 * environment variable KSIEVE_QF_GENERIC=1 is set (read once, at the first filter operation). Builds that
 * already target BMI2 (KSIEVE_NATIVE, -march=x86-64-v3) have one copy only, which uses it.
 * Both copies produce byte-identical tables.
 */
#include <cstdint>

namespace ksieve::detail
{

/*! \brief The copies of the quotient filter's hot paths. */
enum class qf_isa : int
{
    generic = 0, //!< compiled for the build's target
    bmi2 = 1     //!< BMI1/BMI2/LZCNT/POPCNT copy (only in x86-64 builds that do not target BMI2)
};

/*! \brief Whether `isa` exists in this build and the CPU can run it (generic: always). Thread-safe. */
[[nodiscard]] bool qf_isa_supported(qf_isa isa) noexcept;

/*! \brief The copy the filter operations use now (chosen at the first operation if not forced). Thread-safe.
 */
[[nodiscard]] qf_isa qf_active_isa() noexcept;

/*! \brief Test only: make every later filter operation use `isa` (generic if `isa` is not supported).
 * Not to be called while other threads run filter operations whose path matters to them. */
void qf_force_isa(qf_isa isa) noexcept;

/*! \brief Test only: back to the automatic choice (CPU and KSIEVE_QF_GENERIC). */
void qf_reset_isa() noexcept;

/*! \brief The portable branch-free select: position of the k-th (0-based) set bit of w, 64 if w has at most
 * k set bits. \pre k < 128. */
[[nodiscard]] unsigned qf_select64_portable(std::uint64_t w, unsigned k) noexcept;

/*! \brief The select64 the given copy of the hot paths uses (the generic one if `isa` is not supported).
 * \pre k < 64. */
[[nodiscard]] unsigned qf_select64(qf_isa isa, std::uint64_t w, unsigned k) noexcept;

} // namespace ksieve::detail
