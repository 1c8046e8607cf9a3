#pragma once
/*! \file
 * \brief HyperLogLog distinct-count sketch (Flajolet et al. 2007, with the small-range
 * linear-counting correction), used to size Bloom and cuckoo filters from a first pass over the
 * input. Precision 14: 16384 one-byte registers, standard error about 1.04 / sqrt(16384) = 0.8%.
 * Thread safety: add() needs exclusive access; merge sketches of several threads with merge().
 */
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

#include <ksieve/filters/kmers/kmer.hpp>

namespace ksieve
{

class hyperloglog
{
public:
    static constexpr unsigned precision = 14;
    static constexpr std::size_t registers = std::size_t{1} << precision;

    /*! \brief Add a key (any 64-bit value; it is re-mixed). */
    void add(std::uint64_t const key) noexcept
    {
        std::uint64_t const h = mix64(key ^ 0x9E3779B97F4A7C15ULL);
        std::size_t const idx = static_cast<std::size_t>(h >> (64 - precision));
        std::uint64_t const rest = (h << precision) | (std::uint64_t{1} << (precision - 1));
        auto const rank = static_cast<std::uint8_t>(std::countl_zero(rest) + 1);
        if (rank > regs_[idx])
            regs_[idx] = rank;
    }

    /*! \brief Union with another sketch. */
    void merge(hyperloglog const & other) noexcept
    {
        for (std::size_t i = 0; i < registers; ++i)
            if (other.regs_[i] > regs_[i])
                regs_[i] = other.regs_[i];
    }

    /*! \brief Estimated number of distinct keys added. */
    [[nodiscard]] double estimate() const noexcept
    {
        double sum = 0;
        std::size_t zeros = 0;
        for (auto const r : regs_)
        {
            sum += std::ldexp(1.0, -static_cast<int>(r));
            zeros += r == 0;
        }
        double const m = static_cast<double>(registers);
        double const alpha = 0.7213 / (1.0 + 1.079 / m);
        double const e = alpha * m * m / sum;
        if (e <= 2.5 * m && zeros > 0)
            return m * std::log(m / static_cast<double>(zeros)); // linear counting
        return e;
    }

private:
    std::array<std::uint8_t, registers> regs_{};
};

} // namespace ksieve
