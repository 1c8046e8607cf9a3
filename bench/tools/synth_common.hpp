#pragma once
// Pieces of the deterministic synthetic-data generators of the benchmarks (synth_host,
// synth_metagenome, synth_human).
#include <algorithm>
#include <cmath>
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

/*! \brief A uniform double in (0, 1]. */
inline double unit(splitmix64 & rng) noexcept
{
    return static_cast<double>((rng() >> 11) + 1) * 0x1.0p-53;
}

/*! \brief A uniform double in [lo, hi). */
inline double between(splitmix64 & rng, double const lo, double const hi) noexcept
{
    return lo + (hi - lo) * (unit(rng) - 0x1.0p-53);
}

/*! \brief A standard normal deviate (Box-Muller). */
inline double normal(splitmix64 & rng) noexcept
{
    double const u = unit(rng);
    double const v = unit(rng);
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
}

/*! \brief Bases to the next event of probability p per base (geometric, >= 0). */
inline std::uint64_t gap(splitmix64 & rng, double const p) noexcept
{
    if (p <= 0)
        return UINT64_MAX / 2;
    double const g = std::floor(std::log(unit(rng)) / std::log1p(-p));
    return g > 1e15 ? UINT64_MAX / 2 : static_cast<std::uint64_t>(g);
}

inline char random_base(splitmix64 & rng) noexcept
{
    return "ACGT"[rng() & 3];
}

inline char other_base(char const b, splitmix64 & rng) noexcept
{
    char c = b;
    while (c == b)
        c = random_base(rng);
    return c;
}

inline void reverse_complement(std::string & s)
{
    std::reverse(s.begin(), s.end());
    std::transform(s.begin(), s.end(), s.begin(), complement);
}

/*! \brief A random sequence of `length` bases with G+C fraction `gc`. */
inline std::string random_sequence(std::size_t const length, double const gc, splitmix64 & rng)
{
    std::string s(length, 'A');
    for (auto & b : s)
    {
        std::uint64_t const r = rng();
        b = unit(rng) < gc ? ((r & 1) ? 'C' : 'G') : ((r & 1) ? 'A' : 'T');
    }
    return s;
}

/*! \brief A copy of src with events at `rate` per base: substitutions, or with probability
 * `indel_share` an insertion or deletion of 1-3 bases. */
inline std::string mutate(std::string const & src, double const rate, double const indel_share,
                          splitmix64 & rng)
{
    std::string out;
    out.reserve(src.size() + src.size() / 16 + 8);
    std::size_t i = 0;
    while (i < src.size())
    {
        std::uint64_t const g = std::min<std::uint64_t>(gap(rng, rate), src.size() - i);
        out.append(src, i, g);
        i += g;
        if (i >= src.size())
            break;
        double const u = unit(rng);
        std::size_t const len = 1 + rng() % 3;
        if (u >= indel_share)
            out.push_back(other_base(src[i++], rng));
        else if (u < indel_share / 2)
        {
            for (std::size_t j = 0; j < len; ++j)
                out.push_back(random_base(rng));
        }
        else
            i += len;
    }
    return out;
}

} // namespace synth
