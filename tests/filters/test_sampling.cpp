// Minimizer selection against its definition, computed naively: every window of w consecutive
// entries, its leftmost smallest order value, each selected entry once; a list shorter than w keeps
// its smallest.
#include <ksieve/filters/kmers/sampling.hpp>

#include "../../filters/src/kmers/minimizers_kernels.hpp"
#include "simd_fixture.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace
{

std::vector<std::size_t> naive_minimizers(std::vector<std::uint64_t> const & order,
                                          std::size_t const w)
{
    std::set<std::size_t> selected;
    std::size_t const n = order.size();
    if (n == 0)
        return {};
    std::size_t const windows = n < w ? 1 : n - w + 1;
    std::size_t const width = n < w ? n : w;
    for (std::size_t i = 0; i < windows; ++i)
    {
        std::size_t best = i;
        for (std::size_t j = i; j < i + width; ++j)
            if (order[j] < order[best])
                best = j;
        selected.insert(best);
    }
    return {selected.begin(), selected.end()};
}

std::vector<std::size_t> library_minimizers(std::vector<std::uint64_t> const & order,
                                            std::size_t const w)
{
    std::vector<std::size_t> out;
    ksieve::for_each_minimizer(order.data(), order.size(), w, 0, order.size(),
                               [&](std::size_t const i) { out.push_back(i); });
    return out;
}

} // namespace

TEST(sampling, minimizers_equal_the_definition_with_ties)
{
    std::mt19937_64 rng{7};
    for (std::size_t const w : {1u, 2u, 3u, 5u, 15u, 31u})
        for (std::size_t n = 0; n < 120; ++n)
            for (std::uint64_t const range : {3ull, 1000ull, ~0ull}) // small ranges force ties
            {
                std::vector<std::uint64_t> order(n);
                for (auto & v : order)
                    v = rng() % range;
                ASSERT_EQ(library_minimizers(order, w), naive_minimizers(order, w))
                    << "w " << w << " n " << n;
            }
}

TEST(sampling, slices_with_context_report_exactly_the_whole_selection)
{
    std::mt19937_64 rng{11};
    for (std::size_t const w : {2u, 4u, 15u})
        for (int trial = 0; trial < 200; ++trial)
        {
            std::size_t const n = w + rng() % 300;
            std::vector<std::uint64_t> order(n);
            for (auto & v : order)
                v = rng() % 50;
            // cut the window starts [0, n - w + 1) into random consecutive slices; each slice sees
            // one entry before its own windows and w - 1 after them
            std::vector<std::size_t> got;
            std::size_t const starts = n - w + 1;
            for (std::size_t b = 0; b < starts;)
            {
                std::size_t const e = std::min(starts, b + 1 + rng() % 40);
                std::size_t const lo = b > 0 ? b - 1 : 0;
                std::size_t const hi = std::min(n, e + w - 1);
                std::vector<std::uint64_t> slice(order.begin() + static_cast<std::ptrdiff_t>(lo),
                                                 order.begin() + static_cast<std::ptrdiff_t>(hi));
                ksieve::for_each_minimizer(slice.data(), slice.size(), w, b - lo, e - lo,
                                           [&](std::size_t const i) { got.push_back(lo + i); });
                b = e;
            }
            ASSERT_EQ(got, naive_minimizers(order, w)) << "w " << w << " trial " << trial;
        }
}

TEST(sampling, window_one_selects_every_entry)
{
    std::vector<std::uint64_t> const order{5, 5, 1, 9, 0};
    EXPECT_EQ(library_minimizers(order, 1), (std::vector<std::size_t>{0, 1, 2, 3, 4}));
}

// The one-pass minimizers of a whole record equal the selection over its valid k-mer list: random
// records with N runs, short records (fewer than w valid k-mers), records longer than the scratch's
// buffer (taken in several blocks), repetitive records (equal k-mers in one window: ties), every
// window size up to 24 and the largest. Under every instruction-set level: short records of A/C/G/T
// only take the vector scan where the level has one (x86-64-v4, aarch64 NEON); lower case, other
// bytes and lengths around the scratch's capacity besides.
class SamplingIsa : public ksieve::test::simd_copy_fixture<ksieve::detail::minimizer_kernel_tables>
{
};

TEST_P(SamplingIsa, one_pass_record_minimizers_equal_the_selection_over_the_list)
{
    std::mt19937_64 rng{11};
    auto scratch = std::make_unique<ksieve::minimizer_scratch>();
    for (unsigned const k : {5u, 8u, 9u, 21u, 31u, 32u})
        for (int const variant : {0, 1, 2})
        {
            bool const canonical = variant != 1;
            // variant 2: spaced k-mers (positions 2 and k - 3 ignored), codes masked on both
            // strands
            std::uint32_t const all = k >= 32 ? ~0u : (1u << k) - 1;
            std::uint32_t const pattern = variant == 2 ? all & ~(1u << 2) & ~(1u << (k - 3)) : 0;
            ksieve::kmer_scanner const scanner{k, canonical, ksieve::spaced_code_mask(k, pattern)};
            for (int t = 0; t < 1500; ++t)
            {
                std::size_t const around = ksieve::minimizer_scratch::capacity + k - 3 + rng() % 5;
                std::size_t const length =
                    t % 50 == 1   ? ksieve::minimizer_scratch::capacity + rng() % 9000
                    : t % 50 == 3 ? around // the longest records of the vector scans
                                  : rng() % 400;
                std::string seq(length, 'A');
                for (auto & c : seq)
                    c = t % 7 == 2 ? "AC"[rng() % 2] : "ACGTN"[rng() % (t % 3 == 0 ? 5 : 4)];
                if (t % 5 == 4) // lower case, and now and then a byte that is no base
                    for (auto & c : seq)
                        c = rng() % 3 == 0 ? static_cast<char>(c | 0x20) : c;
                if (t % 11 == 6 && !seq.empty())
                    seq[rng() % seq.size()] = "n-\x01\xc1 U"[rng() % 6];
                // (the windows with code of their own, 8, 11 and 15, in a third of the cases)
                std::size_t const w = t % 100 == 0 ? ksieve::minimizer_scratch::ring_size
                                      : t % 3 == 1 ? std::size_t{8} + t % 9 / 3 * 3 + t % 9 / 6
                                                   : 1 + rng() % 24;
                std::uint64_t const seed = rng();
                std::vector<std::uint64_t> codes, order;
                scanner.for_each(seq,
                                 [&](std::size_t, std::uint64_t const c)
                                 {
                                     codes.push_back(c);
                                     order.push_back(ksieve::minimizer_order(c, seed));
                                 });
                std::vector<std::uint64_t> want, got;
                for (std::size_t const i : naive_minimizers(order, w))
                    want.push_back(codes[i]);
                ksieve::for_each_record_minimizer(scanner, seq, w, seed, *scratch,
                                                  [&](std::uint64_t const c) { got.push_back(c); });
                ASSERT_EQ(got, want) << "k " << k << " variant " << variant << " w " << w
                                     << " length " << seq.size();
            }
        }
}

INSTANTIATE_TEST_SUITE_P(Isa, SamplingIsa, ::testing::ValuesIn(ksieve::test::all_simd_levels),
                         ksieve::test::simd_level_name);
