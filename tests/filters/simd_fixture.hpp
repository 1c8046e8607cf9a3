#pragma once
// Test fixture shared by the kernel tests: runs a test with the library's kernel families forced to
// one CPU level (test-only hook of ksieve/filters/cpu_dispatch.hpp), skipping the levels the CPU
// lacks. A level a family has no copy for runs the nearest lower copy (the same as another level's
// run); builds that already target a level run the same copy twice.
#include <ksieve/filters/cpu_dispatch.hpp>

#include <gtest/gtest.h>

#include <ostream>
#include <string>

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
