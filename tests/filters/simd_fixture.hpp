#pragma once
// Test fixtures shared by the kernel tests: runs a test with the library's kernel families forced
// to one CPU level (test-only hook of ksieve/filters/support/cpu_dispatch.hpp), skipping the levels
// the CPU lacks; simd_copy_fixture besides skips a level whose entries in the family's dispatch
// table are those of a lower level the CPU runs (a level the family has no copy for, or one the
// build's target already has), so that each copy runs once.
#include <ksieve/filters/support/cpu_dispatch.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <string>
#include <vector>

namespace ksieve::test
{

/*! Every level a dispatch table has an entry for (instantiate with ::testing::ValuesIn). */
inline constexpr ksieve::detail::simd_level all_simd_levels[] = {
    ksieve::detail::simd_level::generic, ksieve::detail::simd_level::x86_64_v3,
    ksieve::detail::simd_level::x86_64_v4, ksieve::detail::simd_level::aarch64_neon};

class simd_level_fixture : public ::testing::TestWithParam<ksieve::detail::simd_level>
{
protected:
    void SetUp() override
    {
        if (!ksieve::detail::simd_level_supported(GetParam()))
            GTEST_SKIP() << "the CPU lacks this level";
        ksieve::detail::force_simd_level(GetParam());
        ASSERT_EQ(ksieve::detail::active_simd_level(), GetParam());
    }
    void TearDown() override { ksieve::detail::reset_simd_level(); }
};

/*! Whether `level`'s entries in a family's dispatch table (one entry per level) are a copy that no
 * lower level the CPU runs has. */
template <typename Table>
bool own_copy(Table const (&tables)[ksieve::detail::simd_level_count],
              ksieve::detail::simd_level const level)
{
    auto const at = static_cast<int>(level);
    for (int lower = 0; lower < at; ++lower)
        if (ksieve::detail::simd_level_supported(static_cast<ksieve::detail::simd_level>(lower)) &&
            std::memcmp(&tables[lower], &tables[at], sizeof(Table)) == 0)
            return false;
    return true;
}

/*! The levels the CPU runs that have a copy of their own in a family's dispatch table: each of the
 * family's copies once, the generic one first. */
template <typename Table>
std::vector<ksieve::detail::simd_level>
distinct_copies(Table const (&tables)[ksieve::detail::simd_level_count])
{
    std::vector<ksieve::detail::simd_level> levels;
    for (auto const level : all_simd_levels)
        if (ksieve::detail::simd_level_supported(level) && own_copy(tables, level))
            levels.push_back(level);
    return levels;
}

/*! simd_level_fixture for one kernel family (Tables: its dispatch table per level): a level whose
 * copy a lower level has is skipped. */
template <auto const & Tables> class simd_copy_fixture : public simd_level_fixture
{
protected:
    void SetUp() override
    {
        if (ksieve::detail::simd_level_supported(GetParam()) && !own_copy(Tables, GetParam()))
            GTEST_SKIP() << "the same copy as a lower level's";
        simd_level_fixture::SetUp();
    }
};

/*! The name of a level in test output. */
inline char const * simd_level_label(ksieve::detail::simd_level const level)
{
    switch (level)
    {
    case ksieve::detail::simd_level::x86_64_v3:
        return "x86-64-v3";
    case ksieve::detail::simd_level::x86_64_v4:
        return "x86-64-v4";
    case ksieve::detail::simd_level::aarch64_neon:
        return "aarch64-neon";
    default:
        return "generic";
    }
}

/*! The test name suffix of a level. */
inline std::string
simd_level_name(::testing::TestParamInfo<ksieve::detail::simd_level> const & info)
{
    switch (info.param)
    {
    case ksieve::detail::simd_level::x86_64_v3:
        return "v3";
    case ksieve::detail::simd_level::x86_64_v4:
        return "v4";
    case ksieve::detail::simd_level::aarch64_neon:
        return "neon";
    default:
        return "generic";
    }
}

} // namespace ksieve::test

namespace ksieve::detail
{

/*! The level's name in test output. */
inline void PrintTo(simd_level const level, std::ostream * const os)
{
    *os << ksieve::test::simd_level_label(level);
}

} // namespace ksieve::detail
