#pragma once
// Test fixture shared by the quotient filter tests: runs a test with the filter's hot paths forced to one
// instruction-set copy (generic or BMI2; test-only hook of filters/src/quotient_filter_isa.hpp), skipping
// the BMI2 run where the build or the CPU has no separate copy.
#include "../../filters/src/quotient_filter_isa.hpp"

#include <gtest/gtest.h>

namespace ksieve::test
{

class quotient_isa_fixture : public ::testing::TestWithParam<ksieve::detail::qf_isa>
{
protected:
    void SetUp() override
    {
        if (!ksieve::detail::qf_isa_supported(GetParam()))
            GTEST_SKIP() << "no separate BMI2 copy in this build or on this CPU";
        ksieve::detail::qf_force_isa(GetParam());
        ASSERT_EQ(ksieve::detail::qf_active_isa(), GetParam());
    }
    void TearDown() override { ksieve::detail::qf_reset_isa(); }
};

} // namespace ksieve::test
