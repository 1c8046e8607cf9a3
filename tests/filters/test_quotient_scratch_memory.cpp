// quotient_filter::batch_scratch when memory runs out: an ordered batch whose scratch cannot grow
// keeps the input order and gives the same answers, and a later call does not take a half-grown
// scratch for a whole one. Its own executable: it replaces the global operator new to fail one
// allocation size on demand. Oracle: the plain count_batch.
#include <ksieve/filters/quotient/quotient_filter.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

namespace
{
std::size_t fail_size = 0; // an allocation of exactly this many bytes throws (0: none)
}

void * operator new(std::size_t const n)
{
    if (fail_size != 0 && n == fail_size)
        throw std::bad_alloc{};
    if (void * const p = std::malloc(n != 0 ? n : 1))
        return p;
    throw std::bad_alloc{};
}
// operator new above allocates with malloc, so free is the matching release (GCC cannot see that)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void * const p) noexcept
{
    std::free(p);
}
void operator delete(void * const p, std::size_t) noexcept
{
    std::free(p);
}
#pragma GCC diagnostic pop

TEST(QuotientFilterScratch, FailedGrowthKeepsInputOrderAndIsRetried)
{
    using ksieve::quotient_filter;
    auto f = quotient_filter::with_geometry(32, 16, 16);
    std::vector<std::uint64_t> keys(100000), out(keys.size()), expect(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i)
        keys[i] = (i * 2654435761u) & 0xffffffffu;
    ASSERT_EQ(f.insert_batch(std::vector<std::uint64_t>(keys.begin(), keys.begin() + 50000)),
              ksieve::insert_status::ok);
    f.count_batch(keys, expect.data());
    quotient_filter::batch_scratch scratch;
    scratch.min_table_bytes = 0;
    ASSERT_TRUE(f.ordered_batch(keys.size(), scratch));
    // the index array (4 bytes per key) cannot be allocated; the fingerprint array (8 bytes) can
    fail_size = keys.size() * sizeof(std::uint32_t);
    f.count_batch(keys, out.data(), scratch);
    fail_size = 0;
    EXPECT_EQ(out, expect);
    std::fill(out.begin(), out.end(), 7);
    f.count_batch(keys, out.data(), scratch); // grows the index array now
    EXPECT_EQ(out, expect);
    EXPECT_FALSE(scratch.reserve(std::size_t{1} << 62)); // far too large: refused, nothing thrown
    f.count_batch(keys, out.data(), scratch);
    EXPECT_EQ(out, expect);
}
