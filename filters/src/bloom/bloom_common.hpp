#pragma once
/*! \file
 * \brief Internal (not installed): what the three Bloom filters (blocked, classic, counting) share
 * -- the double-hashing stage of the classic and counting layouts, the checks of their constructors
 * and view(), the seed sizing of the classic layouts, the word-wise set operations with their shape
 * checks, merge, clone and the common part of stats(). Thread safety: as the filter member that
 * calls them.
 */
#include <ksieve/filters/bloom/bloom_words.hpp>
#include <ksieve/filters/common/filter.hpp>
#include <ksieve/filters/support/error.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace ksieve::detail
{

/*! \brief The tables of a sharded blocked Bloom filter for lookups across its shards: whole key x
 * belongs to shard (x >> shift) & shard_mask, whose table is words[s] (blocks[s] blocks), asked for
 * x & local_mask. */
struct bloom_shard_tables
{
    std::uint64_t * const * words;
    std::uint64_t const * blocks;
    unsigned shift;
    std::uint64_t shard_mask;
    std::uint64_t local_mask;
};

/*! \brief A key's double hashing: positions mul_high(a + i b, m) for i < k. */
struct double_hash
{
    std::uint64_t a;
    std::uint64_t b;
};

/*! \brief The stage of detail::pipelined for the classic and counting filters: a key's double
 * hashing, the words of its k positions among m (`per_word` to a word) prefetched for writing (rw =
 * 1) or reading (rw = 0). */
template <int rw, std::uint64_t per_word>
[[gnu::always_inline]] inline double_hash
stage_double_hash(std::uint64_t const key, unsigned const k, std::uint64_t const m,
                  std::uint64_t const * const words) noexcept
{
    std::uint64_t a = mix64(key);
    std::uint64_t const b = classic_second_hash(a);
    double_hash const s{a, b};
    for (unsigned i = 0; i < k; ++i, a += b)
        __builtin_prefetch(words + mul_high(a, m) / per_word, rw, 3);
    return s;
}

/*! \brief What the shared members need to know of a Bloom filter type (bloom_kind_of<filter_t>). */
template <typename filter_t> struct bloom_kind
{
    char const * name;            //!< the type in messages ("a classic Bloom filter")
    char const * ctor_unit;       //!< what the size argument of the public constructor counts
    std::uint64_t words_per_unit; //!< words of one such unit
    char const * hash_unit;       //!< what k counts in the constructor's messages
    //! the first argument of the private constructor (word storage): with k, the filter's shape
    std::uint64_t (filter_t::*size)() const noexcept;
    char const * size_unit;                                            //!< what size counts
    std::uint64_t (*unite)(std::uint64_t, std::uint64_t) noexcept;     //!< word op of unite_with
    std::uint64_t (*intersect)(std::uint64_t, std::uint64_t) noexcept; //!< of intersect_with
};

/*! \brief The bloom_kind of each Bloom filter type (specialised in the filter's source file). */
template <typename filter_t> extern bloom_kind<filter_t> const bloom_kind_of;

/*! \brief The size of f in its shape (bloom_kind::size). */
template <typename filter_t> [[nodiscard]] std::uint64_t shape_size(filter_t const & f) noexcept
{
    return (f.*bloom_kind_of<filter_t>.size)();
}

/*! \brief The words of a new, empty filter of `units` constructor units with k hash functions.
 * \throws usage_error "a <name> filter needs between 1 and 2^56 <ctor_unit> (got <units>)" or "a
 * <name> filter needs 1 to <max_hashes> <hash_unit> (got <k>)"; ksieve::error if out of memory. */
template <typename filter_t>
[[nodiscard]] word_storage bloom_words(std::uint64_t const units, unsigned const k)
{
    constexpr auto const & kind = bloom_kind_of<filter_t>;
    if (units == 0 || units > (std::uint64_t{1} << 56))
        throw usage_error{std::string{"a "} + kind.name + " filter needs between 1 and 2^56 " +
                          kind.ctor_unit + " (got " + std::to_string(units) + ")"};
    if (k < 1 || k > filter_t::max_hashes)
        throw usage_error{std::string{"a "} + kind.name + " filter needs 1 to " +
                          std::to_string(filter_t::max_hashes) + " " + kind.hash_unit + " (got " +
                          std::to_string(k) + ")"};
    return word_storage{static_cast<std::size_t>(units * kind.words_per_unit)};
}

/*! \brief create() of the classic and counting filters: classic_bloom_shape for `expected` keys
 * (capped at 2^key_bits) in whole words of `slots_per_word` slots (bits or counters), with at most
 * max_hashes hash functions. \throws usage_error as check_bloom_config. */
template <typename filter_t>
[[nodiscard]] filter_t create_classic_layout(filter_config const & cfg, unsigned const key_bits,
                                             std::uint64_t const expected,
                                             std::uint64_t const slots_per_word)
{
    check_bloom_config(cfg, expected, bloom_kind_of<filter_t>.name);
    std::uint64_t m = 0;
    unsigned k = 0;
    classic_bloom_shape(cap_expected(expected, key_bits), cfg.fpr, slots_per_word, m, k);
    return filter_t{m / slots_per_word, std::min(k, filter_t::max_hashes)};
}

/*! \brief The hash count params[2] of a filter's parameters, after the checks of view() in their
 * order: three parameters, the hash scheme filter_t::scheme, check_size(params[1]) (throws
 * format_error for an invalid size) and 1 <= k <= filter_t::max_hashes. \throws format_error
 * "<name> filter with <what is wrong>". */
template <typename filter_t, typename size_check_t>
[[nodiscard]] unsigned view_hash_count(std::span<std::uint64_t const> const params,
                                       size_check_t const & check_size)
{
    constexpr auto const & kind = bloom_kind_of<filter_t>;
    if (params.size() != 3)
        throw format_error{std::string{kind.name} + " filter with " +
                           std::to_string(params.size()) + " parameters instead of 3"};
    if (params[0] != filter_t::scheme)
        throw format_error{std::string{kind.name} + " filter with unknown hash scheme " +
                           std::to_string(params[0])};
    check_size(params[1]);
    std::uint64_t const k = params[2];
    if (k < 1 || k > filter_t::max_hashes)
        throw format_error{std::string{kind.name} +
                           " filter with an invalid number of hash functions " + std::to_string(k)};
    return static_cast<unsigned>(k);
}

/*! \brief \throws format_error "<name> filter of <size> <unit> with <got> payload words" unless
 * got == expected (the payload check of view() of the classic and counting filters). */
template <typename filter_t>
void check_payload_words(std::uint64_t const size, char const * const unit, std::size_t const got,
                         std::uint64_t const expected)
{
    if (got != expected)
        throw format_error{std::string{bloom_kind_of<filter_t>.name} + " filter of " +
                           std::to_string(size) + " " + unit + " with " + std::to_string(got) +
                           " payload words"};
}

/*! \brief "<size> <size_unit>, k = <k>": a filter's shape in messages. */
template <typename filter_t> [[nodiscard]] std::string shape_text(filter_t const & f)
{
    return std::to_string(shape_size(f)) + " " + bloom_kind_of<filter_t>.size_unit +
           ", k = " + std::to_string(f.hash_count());
}

/*! \brief \throws incompatible_error "cannot <what> <name> filters of different sizes (<shape of a>
 * vs <shape of b>)" unless a and b have the same size and hash count. */
template <typename filter_t>
void check_compatible(filter_t const & a, filter_t const & b, char const * const what)
{
    constexpr auto const & kind = bloom_kind_of<filter_t>;
    if (shape_size(a) != shape_size(b) || a.hash_count() != b.hash_count())
        throw incompatible_error{std::string{"cannot "} + what + " " + kind.name +
                                 " filters of different sizes (" + shape_text(a) + " vs " +
                                 shape_text(b) + ")"};
}

/*! \brief The members of the Bloom filters that reach their words and private constructor (a friend
 * of each filter). */
struct bloom_ops
{
    /*! \brief a's word i = op(a's word i, b's word i) for every word: unite_with and
     * intersect_with. \throws incompatible_error (check_compatible(a, b, what)) if the shapes
     * differ. */
    template <typename filter_t, typename op_t>
    static void combine(filter_t & a, filter_t const & b, char const * const what, op_t const op)
    {
        check_compatible(a, b, what);
        std::uint64_t * const x = a.storage_.data();
        std::uint64_t const * const y = b.storage_.data();
        for (std::size_t i = 0, n = a.storage_.size(); i < n; ++i)
            x[i] = op(x[i], y[i]);
    }

    /*! \brief An owned copy of f. \throws ksieve::error if out of memory. */
    template <typename filter_t> [[nodiscard]] static filter_t clone(filter_t const & f)
    {
        return filter_t{shape_size(f), f.hash_count(), f.storage_.clone()};
    }
};

// The members of bloom_set_ops, instantiated beside each filter type's bloom_kind_of.
template <typename F> void bloom_set_ops<F>::unite_with(F const & other)
{
    constexpr auto op = bloom_kind_of<F>.unite;
    bloom_ops::combine(static_cast<F &>(*this), other, "unite",
                       [](std::uint64_t const x, std::uint64_t const y) { return op(x, y); });
}

template <typename F> void bloom_set_ops<F>::intersect_with(F const & other)
{
    constexpr auto op = bloom_kind_of<F>.intersect;
    bloom_ops::combine(static_cast<F &>(*this), other, "intersect",
                       [](std::uint64_t const x, std::uint64_t const y) { return op(x, y); });
}

template <typename F> F bloom_set_ops<F>::merge(std::span<F const * const> const filters)
{
    if (filters.empty())
        throw incompatible_error{std::string{"merge needs at least one "} + bloom_kind_of<F>.name +
                                 " filter"};
    for (auto const * f : filters)
        check_compatible(*filters[0], *f, "merge");
    F r = filters[0]->clone();
    for (auto const * f : filters.subspan(1))
        r.unite_with(*f);
    return r;
}

template <typename F> F bloom_set_ops<F>::clone() const
{
    return bloom_ops::clone(static_cast<F const &>(*this));
}

/*! \brief stats() of a Bloom filter of `words` words with `used` of its `slots` slots (bits or
 * counters) set and k hash functions: distinct = bloom_cardinality, total_count = distinct, load =
 * used / slots and estimated_fpr = load^k (the estimate of the classic layouts). */
[[nodiscard]] inline filter_stats bloom_stats(std::uint64_t const used, std::uint64_t const slots,
                                              std::size_t const words, unsigned const k) noexcept
{
    filter_stats s{};
    s.used = used;
    s.bytes = words * 8;
    s.slots = slots;
    s.distinct = bloom_cardinality(used, slots, k);
    s.total_count = s.distinct;
    s.load = static_cast<double>(used) / static_cast<double>(slots);
    s.estimated_fpr = std::pow(s.load, static_cast<double>(k));
    return s;
}

} // namespace ksieve::detail

namespace ksieve
{
namespace
{

/*! Atomic OR of mask into word, skipping the read-modify-write when every bit is already set (keeps
 * shared cache lines clean under contention). Internal linkage: each CPU level's kernels have their
 * own. */
[[gnu::always_inline]] inline void atomic_or(std::uint64_t & word,
                                             std::uint64_t const mask) noexcept
{
#if defined(__cpp_lib_atomic_ref)
    std::atomic_ref<std::uint64_t> a{word};
    if ((a.load(std::memory_order_relaxed) & mask) != mask)
        a.fetch_or(mask, std::memory_order_relaxed);
#else // libc++ before 19 has no std::atomic_ref: the GCC/Clang builtins it is made of
    if ((__atomic_load_n(&word, __ATOMIC_RELAXED) & mask) != mask)
        __atomic_fetch_or(&word, mask, __ATOMIC_RELAXED);
#endif
}

} // namespace
} // namespace ksieve
