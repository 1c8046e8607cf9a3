#pragma once
/*! \file
 * \brief K-mer core: 2-bit encoding, canonical k-mers, the rolling scanner and the invertible hash.
 *
 * Encoding: A/a = 0, C/c = 1, G/g = 2, T/t = 3; any other byte (N, IUPAC codes, '-', ...) is
 * invalid and the k-mers over it are skipped. A k-mer (1 <= k <= 32) is packed into the low 2k
 * bits, first base most significant (numeric order = lexicographic order); its reverse complement
 * maps b -> 3 - b and reverses the order; the canonical k-mer is the smaller of the two.
 *
 * Hash: kmer_hasher maps 2k-bit codes bijectively onto [0, 2^(2k)), which lets a quotient filter
 * keeping all 2k bits be exact (exact counts) and iteration recover the k-mer. All filters take
 * these hashed keys; the top bits select a shard, the next ones a quotient/bucket/block.
 *
 * Thread safety: stateless or const after construction; safe from any number of threads.
 */
#include <array>
#include <cstdint>
#include <string_view>

namespace ksieve
{

/*! \brief Maximal supported k-mer length (2k bits must fit in 64). */
inline constexpr unsigned max_k = 32;

/*! \brief Byte -> 2-bit code, 4 for anything that is not A/C/G/T in either case. */
inline constexpr std::array<std::uint8_t, 256> dna_code_table = []
{
    std::array<std::uint8_t, 256> t{};
    for (auto & v : t)
        v = 4;
    t['A'] = t['a'] = 0;
    t['C'] = t['c'] = 1;
    t['G'] = t['g'] = 2;
    t['T'] = t['t'] = 3;
    return t;
}();

/*! \brief Mask of the low 2k bits. \pre 1 <= k <= 32. */
[[nodiscard]] constexpr std::uint64_t kmer_mask(unsigned const k) noexcept
{
    return k >= 32 ? ~std::uint64_t{0} : (std::uint64_t{1} << (2 * k)) - 1;
}

/*! \brief The code mask of a spaced k-mer: the 2k-bit mask that keeps the bases of the positions
 * whose bit is set in `pattern` (bit j: position j, the first base at j = 0) and clears the others;
 * pattern 0 keeps every position (kmer_mask(k)). A spaced k-mer's code is its k-mer's code with the
 * ignored positions read as A (0), so that a k-mer that differs from another only at ignored
 * positions has the same code. \pre 1 <= k <= 32; pattern < 2^k. */
[[nodiscard]] constexpr std::uint64_t spaced_code_mask(unsigned const k,
                                                       std::uint32_t const pattern) noexcept
{
    if (pattern == 0)
        return kmer_mask(k);
    std::uint64_t m = 0;
    for (unsigned j = 0; j < k; ++j)
        if ((pattern >> j) & 1u)
            m |= std::uint64_t{3} << (2 * (k - 1 - j));
    return m;
}

/*! \brief Reverse complement of a 2k-bit code. \pre 1 <= k <= 32, code < 2^(2k). Branch-free. */
[[nodiscard]] constexpr std::uint64_t reverse_complement(std::uint64_t code,
                                                         unsigned const k) noexcept
{
    // complement: b -> 3 - b is xor with all ones; then reverse the 32 2-bit groups and shift down.
    code = ~code;
    code = ((code >> 2) & 0x3333333333333333ULL) | ((code & 0x3333333333333333ULL) << 2);
    code = ((code >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((code & 0x0F0F0F0F0F0F0F0FULL) << 4);
    code = ((code >> 8) & 0x00FF00FF00FF00FFULL) | ((code & 0x00FF00FF00FF00FFULL) << 8);
    code = ((code >> 16) & 0x0000FFFF0000FFFFULL) | ((code & 0x0000FFFF0000FFFFULL) << 16);
    code = (code >> 32) | (code << 32);
    return code >> (64 - 2 * k);
}

/*! \brief Canonical form: min(code, reverse_complement(code)). \pre as reverse_complement. */
[[nodiscard]] constexpr std::uint64_t canonical_kmer(std::uint64_t const code,
                                                     unsigned const k) noexcept
{
    std::uint64_t const rc = reverse_complement(code, k);
    return rc < code ? rc : code;
}

/*! \brief Encode a string of exactly k valid bases. \returns false if a base is invalid. */
[[nodiscard]] constexpr bool encode_kmer(std::string_view const s, std::uint64_t & code) noexcept
{
    code = 0;
    for (char const c : s)
    {
        std::uint8_t const b = dna_code_table[static_cast<unsigned char>(c)];
        if (b > 3)
            return false;
        code = (code << 2) | b;
    }
    return true;
}

/*! \brief Identifier of the hash function, stored in filter files. */
enum class hash_id : std::uint32_t
{
    mix2k_v1 = 1 //!< kmer_hasher: 3 xor-shift rounds, 2 odd multiplies modulo 2^(2k), xor seed
};

/*! \brief Default hash seed (any value works; filters combined by merge/classify must share it). */
inline constexpr std::uint64_t default_hash_seed = 0x6b73696576652121ULL; // "ksieve!!"

/*! \brief Inverse of an odd a modulo 2^64 (Newton steps double the correct low bits: 3 -> 96). */
[[nodiscard]] constexpr std::uint64_t mul_inverse64(std::uint64_t const a) noexcept
{
    std::uint64_t x = a;
    for (int i = 0; i < 5; ++i)
        x *= 2 - a * x;
    return x;
}

/*! \brief Bijective hash of 2k-bit k-mer codes onto [0, 2^(2k)).
 *
 * h(x) = f(x xor seed) with f = xorshift(s) . mul(C2) . xorshift(s) . mul(C1) . xorshift(s), all
 * modulo 2^(2k), s = ceil(2k / 2). Each step is a bijection on 2k-bit words (odd multipliers are
 * units modulo 2^(2k); x ^ (x >> s) with 2s >= 2k inverts as y ^ (y >> s)), so h is a bijection and
 * inverse() undoes it. Thread safety: immutable. */
class kmer_hasher
{
public:
    /*! \brief \pre 1 <= k <= 32. */
    constexpr explicit kmer_hasher(unsigned const k = 31,
                                   std::uint64_t const seed = default_hash_seed) noexcept
        : shift_{k}, mask_{kmer_mask(k)}, seed_{seed & kmer_mask(k)}
    {
    }

    /*! \brief Hash of a 2k-bit code. \pre code < 2^(2k). \returns a value < 2^(2k). */
    [[nodiscard]] constexpr std::uint64_t operator()(std::uint64_t x) const noexcept
    {
        x ^= seed_;
        x ^= x >> shift_;
        x = (x * c1) & mask_;
        x ^= x >> shift_;
        x = (x * c2) & mask_;
        x ^= x >> shift_;
        return x;
    }

    /*! \brief Inverse of operator(). \pre h < 2^(2k). */
    [[nodiscard]] constexpr std::uint64_t inverse(std::uint64_t x) const noexcept
    {
        x ^= x >> shift_;
        x = (x * c2_inv) & mask_;
        x ^= x >> shift_;
        x = (x * c1_inv) & mask_;
        x ^= x >> shift_;
        return x ^ seed_;
    }

private:
    static constexpr std::uint64_t c1 = 0xff51afd7ed558ccdULL;
    static constexpr std::uint64_t c2 = 0xc4ceb9fe1a85ec53ULL;
    static constexpr std::uint64_t c1_inv = mul_inverse64(c1);
    static constexpr std::uint64_t c2_inv = mul_inverse64(c2);
    static_assert(c1 * c1_inv == 1 && c2 * c2_inv == 1);

    unsigned shift_; // = k = ceil(2k/2)
    std::uint64_t mask_;
    std::uint64_t seed_;
};

/*! \brief 64-bit finaliser (murmur3 fmix64) for filters that need full-width hash bits from a key
 * of fewer bits (Bloom, cuckoo). Bijective on 64 bits. */
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t x) noexcept
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/*! \brief Rolling k-mer scanner: O(1) per base, skips k-mers that overlap an invalid base.
 *
 * for_each(seq, f) calls f(pos, code) for every valid k-mer start position pos in increasing order,
 * with code the canonical (or forward, if !canonical) 2k-bit code of the k-mer under the code mask
 * (spaced_code_mask(): the ignored positions read as A on each strand, then the smaller of the two
 * strands). No allocation, no exceptions. Thread safety: immutable. */
class kmer_scanner
{
public:
    /*! \brief \pre 1 <= k <= 32; code_mask is kmer_mask(k) or a spaced_code_mask(k, ...). */
    constexpr explicit kmer_scanner(unsigned const k = 31, bool const canonical = true,
                                    std::uint64_t const code_mask = 0) noexcept
        : k_{k}, canonical_{canonical}, mask_{code_mask != 0 ? code_mask : kmer_mask(k)},
          rc_shift_{2 * (k - 1)}
    {
    }

    [[nodiscard]] constexpr unsigned k() const noexcept { return k_; }
    [[nodiscard]] constexpr bool canonical() const noexcept { return canonical_; }
    /*! \brief The mask applied to both strands' codes (kmer_mask(k) for plain k-mers). */
    [[nodiscard]] constexpr std::uint64_t code_mask() const noexcept { return mask_; }

    template <typename callback_t>
    constexpr void for_each(std::string_view const seq, callback_t && f) const
        noexcept(noexcept(f(0, 0)))
    {
        // fw keeps more than the last k bases (masked when used): its update is one shift-or on the
        // loop's dependency chain; rc holds exactly the last k bases' reverse complement.
        std::uint64_t fw = 0;
        std::uint64_t rc = 0;
        std::size_t valid = 0; // number of consecutive valid bases ending at i
        for (std::size_t i = 0; i < seq.size(); ++i)
        {
            std::uint64_t const b = dna_code_table[static_cast<unsigned char>(seq[i])];
            if (b > 3) [[unlikely]]
            {
                valid = 0;
                continue;
            }
            fw = (fw << 2) | b;
            rc = (rc >> 2) | ((3 - b) << rc_shift_);
            if (++valid >= k_)
            {
                std::uint64_t const code = fw & mask_;
                std::uint64_t const rcm = rc & mask_;
                f(i + 1 - k_, canonical_ ? (rcm < code ? rcm : code) : code);
            }
        }
    }

    /*! \brief Number of valid k-mer positions in seq (what for_each would visit). */
    [[nodiscard]] constexpr std::size_t count(std::string_view const seq) const noexcept
    {
        std::size_t n = 0, valid = 0;
        for (char const c : seq)
        {
            if (dna_code_table[static_cast<unsigned char>(c)] > 3)
                valid = 0;
            else if (++valid >= k_)
                ++n;
        }
        return n;
    }

private:
    unsigned k_;
    bool canonical_;
    std::uint64_t mask_;
    unsigned rc_shift_;
};

} // namespace ksieve
