#pragma once
// Test fixture shared by the filter tests: runs a test with the library's SIMD kernels forced to
// one level (generic or x86-64-v3; test-only hook of ksieve/filters/cpu_dispatch.hpp), skipping the
// x86-64-v3 run where the CPU lacks it. Builds that already target the level run the same copy
// twice.
#include <ksieve/filters/cpu_dispatch.hpp>

#include <gtest/gtest.h>

#include <ostream>
#include <string>

namespace ksieve::test
{

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
    *os << (level == simd_level::generic     ? "generic"
            : level == simd_level::x86_64_v3 ? "x86-64-v3"
                                             : "x86-64-v4");
}

} // namespace ksieve::detail
