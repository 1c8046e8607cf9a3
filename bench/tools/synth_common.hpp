#pragma once
// Pieces of the deterministic synthetic-data generators of the benchmarks (synth_host,
// synth_metagenome).
#include <algorithm>
#include <cstdint>
#include <string>

namespace synth
{

/*! \brief splitmix64: a small, fast, seedable generator (the same seed always gives the same
 * stream). */
struct splitmix64
{
    std::uint64_t state;
    std::uint64_t operator()() noexcept
    {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
};

/*! \brief A uniform random sequence of `length` bases. */
inline std::string random_genome(std::uint64_t const length, std::uint64_t const seed)
{
    splitmix64 rng{seed};
    std::string g(length, 'A');
    for (std::uint64_t i = 0; i < length; i += 32)
    {
        std::uint64_t r = rng();
        for (std::uint64_t j = 0; j < 32 && i + j < length; ++j, r >>= 2)
            g[i + j] = "ACGT"[r & 3];
    }
    return g;
}

inline char complement(char const b) noexcept
{
    return b == 'A' ? 'T' : b == 'C' ? 'G' : b == 'G' ? 'C' : 'A';
}

/*! \brief Cut a read of read.size() bases from g at a random position and strand, with
 * substitutions at `threshold` per million bases. \pre g.size() > read.size(). */
inline void cut_read(std::string const & g, std::string & read, std::uint64_t const threshold,
                     splitmix64 & rng)
{
    std::size_t const len = read.size();
    std::uint64_t const at = rng() % (g.size() - len);
    read.assign(g, at, len);
    if (rng() & 1)
    {
        std::reverse(read.begin(), read.end());
        std::transform(read.begin(), read.end(), read.begin(), complement);
    }
    for (auto & b : read)
        if (rng() % 1000000 < threshold)
        {
            char nb = b;
            while (nb == b)
                nb = "ACGT"[rng() & 3];
            b = nb;
        }
}

} // namespace synth
