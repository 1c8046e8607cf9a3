#pragma once
/*! \file
 * \brief What the Bloom filters (bloom.hpp, counting_bloom.hpp) build on: their word storage, the
 * blocked filter's salts, the hashing and sizing helpers, the prefetching pipeline and the set
 * operations. An implementation detail (namespace ksieve::detail), not a stable API. Thread safety:
 * as each item says, else as the filter that uses it.
 */
#include <cstddef>
#include <cstdint>
#include <span>

#include <ksieve/filters/common/filter.hpp>
#include <ksieve/filters/kmers/kmer.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

namespace ksieve
{

namespace detail
{

/*! \brief High 64 bits of a * b: maps a uniform 64-bit a onto [0, b) without division. */
[[nodiscard]] inline std::uint64_t mul_high(std::uint64_t const a, std::uint64_t const b) noexcept
{
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::uint64_t>((static_cast<u128>(a) * b) >> 64);
}

/*! \brief Word array of a filter: owned (zeroed, 64-byte aligned; large arrays 2 MiB aligned and
 * advised for transparent huge pages on Linux) or a read-only view of words owned elsewhere (an
 * mmap'd file). Move-only. Thread safety: as the filter that holds it. */
class word_storage
{
public:
    word_storage() noexcept = default;
    /*! \brief Owned, zero-filled array of `words` words. \throws ksieve::error if the allocation
     * fails. */
    explicit word_storage(std::size_t words);
    /*! \brief Non-owning read-only view. */
    [[nodiscard]] static word_storage view(std::span<std::uint64_t const> words) noexcept;

    word_storage(word_storage && other) noexcept;
    word_storage & operator=(word_storage && other) noexcept;
    word_storage(word_storage const &) = delete;
    word_storage & operator=(word_storage const &) = delete;
    ~word_storage();

    /*! \brief An owned copy. \throws ksieve::error if the allocation fails. */
    [[nodiscard]] word_storage clone() const;

    /*! \brief Mutable words. \pre owning() (writing through a view is undefined). */
    [[nodiscard]] std::uint64_t * data() noexcept { return data_; }
    [[nodiscard]] std::uint64_t const * data() const noexcept { return data_; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool owning() const noexcept { return align_ != 0; }
    [[nodiscard]] std::span<std::uint64_t const> span() const noexcept { return {data_, size_}; }

private:
    void release() noexcept;

    std::uint64_t * data_{nullptr};
    std::size_t size_{0};
    std::size_t align_{0}; // alignment of the owned allocation, 0 for a view
    memory_charge charge_; // the owned bytes against the memory budget
};

/*! \brief Odd multipliers of the blocked filter: bit i of a key is the top 9 bits of uint32(h) *
 * salt[i]. Part of the file format (hash scheme 1): never change. */
inline constexpr std::uint32_t blocked_bloom_salts[32] = {
    0xA8817217U, 0x62E2083FU, 0xEC57D223U, 0xBDA78EE9U, 0xB505AA11U, 0xF12E72DBU, 0x1B3C7A35U,
    0x7211BE53U, 0x35C5F219U, 0xE0F94147U, 0xB632E74FU, 0x1B45E15BU, 0x75167BE5U, 0x1A278609U,
    0x5C1B21A1U, 0x332B0F3DU, 0xEEF8853BU, 0xAD701B65U, 0xDB9636C9U, 0xC5E87C39U, 0xDC39EB67U,
    0x54096519U, 0x24BD248DU, 0x95BC0AE3U, 0x96EDD2F9U, 0x8402D8EBU, 0x7193C5C9U, 0x5CAD3747U,
    0x8BC8E363U, 0xE0F9F781U, 0xC5F28AB1U, 0xA11139C9U};

/*! \brief Keys a filter of key_bits-bit keys can hold at most: min(expected, 2^key_bits). */
[[nodiscard]] constexpr std::uint64_t cap_expected(std::uint64_t const expected,
                                                   unsigned const key_bits) noexcept
{
    return key_bits >= 63
               ? expected
               : (expected < (std::uint64_t{1} << key_bits) ? expected
                                                            : std::uint64_t{1} << key_bits);
}

/*! \brief Prefetch distance (keys) of the batch operations. */
inline constexpr std::size_t prefetch_distance = 32;

/*! \brief Software pipeline over keys: stage(key) hashes one key and issues its prefetches
 * `prefetch_distance` keys ahead of op(i, staged value), which then finds the memory in cache. */
template <typename staged_t, std::size_t distance = prefetch_distance, typename stage_t,
          typename op_t>
inline void pipelined(std::span<std::uint64_t const> const keys, stage_t && stage,
                      op_t && op) noexcept
{
    staged_t ring[distance];
    std::size_t const n = keys.size();
    std::size_t const head = n < distance ? n : distance;
    for (std::size_t i = 0; i < head; ++i)
        ring[i] = stage(keys[i]);
    for (std::size_t i = 0; i < n; ++i)
    {
        staged_t const s = ring[i % distance];
        if (i + distance < n)
            ring[i % distance] = stage(keys[i + distance]);
        op(i, s);
    }
}

/*! \brief The standard cardinality estimate -(m/k) ln(1 - N/m) with its special cases (N < k: 0,
 * N == k: 1, N >= m: m/k). */
[[nodiscard]] std::uint64_t bloom_cardinality(std::uint64_t set_bits, std::uint64_t m,
                                              unsigned k) noexcept;

/*! \brief Seed sizing for a classic layout: m = -n ln(eps) / (ln 2)^2 rounded up to a multiple of
 * `granule` (>= granule), k = the integer next to (m/n) ln 2 that minimises (1 - e^{-kn/m})^k.
 * \pre n > 0, 0 < eps < 1. */
void classic_bloom_shape(std::uint64_t n, double eps, std::uint64_t granule, std::uint64_t & m,
                         unsigned & k);

/*! \brief Throws usage_error unless 0 < fpr < 0.5 and expected > 0 (shared by all Bloom types). */
void check_bloom_config(filter_config const & cfg, std::uint64_t expected, char const * type_name);

/*! \brief Step of the classic and counting filters' double hashing: a second, odd 64-bit hash of h
 * = mix64(key). Part of the file format (hash scheme 1): never change. */
[[nodiscard]] inline std::uint64_t classic_second_hash(std::uint64_t const h) noexcept
{
    return mix64(h ^ 0x9E3779B97F4A7C15ULL) | 1;
}

/*! \brief The members the Bloom filters share (set operations, clone), defined in the filter
 * library; a friend of each Bloom filter. */
struct bloom_ops;

/*! \brief The set operations of the Bloom filter type F (a base of F), word by word: bits OR and
 * AND, counters (counting_bloom.hpp) a saturating sum and a minimum. Defined in the filter library
 * for the three types. */
template <typename F> class bloom_set_ops
{
public:
    /*! \brief In-place union: afterwards holds the keys of both. Exclusive access.
     * \throws incompatible_error if the sizes or k differ. */
    void unite_with(F const & other);
    /*! \brief In-place intersection: holds every key of both, and possibly (false positives) more;
     * its FPR can be higher than that of a filter built from the intersection of the key sets.
     * \throws incompatible_error if the sizes or k differ. */
    void intersect_with(F const & other);
    /*! \brief The union of all filters (ksieve merge): each checked against the first, all united
     * into a copy of the first. \throws incompatible_error if they differ in shape or the span is
     * empty. */
    [[nodiscard]] static F merge(std::span<F const * const> filters);
    /*! \brief An owned copy. \throws ksieve::error if out of memory. */
    [[nodiscard]] F clone() const;

    /*! \brief The union of a and b as a new filter. \throws incompatible_error if the shapes
     * differ. */
    [[nodiscard]] friend F unite(F const & a, F const & b)
    {
        F r = a.clone();
        r.unite_with(b);
        return r;
    }
    /*! \brief The intersection of a and b as a new filter. \throws incompatible_error if the
     * shapes differ. */
    [[nodiscard]] friend F intersect(F const & a, F const & b)
    {
        F r = a.clone();
        r.intersect_with(b);
        return r;
    }
};

} // namespace detail

} // namespace ksieve
