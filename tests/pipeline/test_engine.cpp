// Unit tests of the batch engine's decision rule.
#include <ksieve/pipeline/engine.hpp>

#include <gtest/gtest.h>

namespace
{

// hits_needed(n, F) must be the smallest h with is_known(n, h, F) (n + 1 if none): brute force is the oracle.
TEST(engine, hits_needed_is_the_smallest_known_hit_count)
{
    for (double const f : {1e-9, 0.01, 0.1, 0.25, 1.0 / 3.0, 0.3, 0.5, 0.6, 0.7, 0.77, 0.8, 0.9, 0.999, 1.0})
        for (std::uint64_t n = 0; n <= 600; ++n)
        {
            std::uint64_t expect = n + 1;
            for (std::uint64_t h = 0; h <= n; ++h)
                if (ksieve::is_known(n, h, f))
                {
                    expect = h;
                    break;
                }
            if (n == 0)
                expect = 1; // a unit without k-mers is never known
            ASSERT_EQ(ksieve::hits_needed(n, f), expect) << "n " << n << " F " << f;
        }
}

} // namespace
