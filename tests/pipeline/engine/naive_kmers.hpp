#pragma once
// Oracles and inputs shared by the engine's tests: random DNA, reads taken from a genome with
// substitutions, record batches over strings, and the hashed canonical k-mers of a sequence
// computed by their definition (one substring at a time, no rolling state).
#include <ksieve/filters/kmers/kmer.hpp>
#include <ksieve/io/io.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace ksieve_test
{

inline std::string random_dna(std::mt19937_64 & rng, std::size_t const n)
{
    std::string s(n, 'A');
    for (auto & c : s)
        c = "ACGT"[rng() % 4];
    return s;
}

// `errors` substitutions of `s` at random positions, each by a different base.
inline void substitute(std::mt19937_64 & rng, std::string & s, std::size_t const errors)
{
    for (std::size_t e = 0; e < errors && !s.empty(); ++e)
    {
        std::size_t const p = rng() % s.size();
        char const was = s[p];
        while (s[p] == was)
            s[p] = "ACGT"[rng() % 4];
    }
}

// A batch of views of `seqs` (FASTA records; the strings outlive the batch).
inline void fill(ksieve::io::record_batch & b, std::vector<std::string> const & seqs)
{
    for (std::string const & s : seqs)
        b.records_.push_back(ksieve::io::record_view{"r", "r", s, {}, s});
}

// The 2-bit code of a base (A/a 0, C/c 1, G/g 2, T/t 3), or 4 for any other byte.
inline unsigned naive_base(char const c)
{
    switch (c)
    {
    case 'A':
    case 'a':
        return 0;
    case 'C':
    case 'c':
        return 1;
    case 'G':
    case 'g':
        return 2;
    case 'T':
    case 't':
        return 3;
    default:
        return 4;
    }
}

// The hashed canonical keys of every k-mer of `seq` made of A/C/G/T only (either case), in sequence
// order: min(forward code, reverse-complement code) of each substring, then the k-mer hash.
inline std::vector<std::uint64_t> naive_keys(std::string_view const seq, unsigned const k,
                                             std::uint64_t const seed = ksieve::default_hash_seed)
{
    ksieve::kmer_hasher const hash{k, seed};
    std::vector<std::uint64_t> out;
    for (std::size_t i = 0; i + k <= seq.size(); ++i)
    {
        std::uint64_t fwd = 0, rev = 0;
        bool valid = true;
        for (std::size_t j = 0; j < k && valid; ++j)
        {
            unsigned const b = naive_base(seq[i + j]);
            unsigned const c = naive_base(seq[i + k - 1 - j]);
            valid = b < 4 && c < 4;
            fwd = fwd << 2 | b;
            rev = rev << 2 | (3 - c);
        }
        if (valid)
            out.push_back(hash(fwd < rev ? fwd : rev));
    }
    return out;
}

} // namespace ksieve_test
