#pragma once
/*! \file
 * \brief Internal (not installed): what the three Bloom filters (blocked, classic, counting) share -- the
 * double-hashing stage of the classic and counting layouts and the word-wise set operations with their
 * shape checks. Thread safety: as the filter member that calls them.
 */
#include <ksieve/filters/bloom.hpp>
#include <ksieve/filters/error.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace ksieve::detail
{

/*! \brief A key's double hashing: positions mul_high(a + i b, m) for i < k. */
struct double_hash
{
    std::uint64_t a;
    std::uint64_t b;
};

/*! \brief Hashes a key for double hashing (a = mix64(key), b = classic_bloom_filter::second_hash(a)) and
 * prefetches the words of its k positions among m, `per_word` positions to a word of `words`, for writing
 * (rw = 1) or reading (rw = 0). The stage of detail::pipelined for the classic and counting filters. */
template <int rw, std::uint64_t per_word>
[[gnu::always_inline]] inline double_hash stage_double_hash(std::uint64_t const key, unsigned const k,
                                                            std::uint64_t const m,
                                                            std::uint64_t const * const words) noexcept
{
    std::uint64_t a = mix64(key);
    std::uint64_t const b = classic_bloom_filter::second_hash(a);
    double_hash const s{a, b};
    for (unsigned i = 0; i < k; ++i, a += b)
        __builtin_prefetch(words + mul_high(a, m) / per_word, rw, 3);
    return s;
}

/*! \brief Throws incompatible_error "cannot <what> <type_name> filters of different sizes (<a> vs <b>)". */
[[noreturn]] inline void throw_different_shapes(char const * const what, char const * const type_name,
                                                std::string const & a, std::string const & b)
{
    throw incompatible_error{std::string{"cannot "} + what + " " + type_name +
                             " filters of different sizes (" + a + " vs " + b + ")"};
}

/*! \brief a[i] = op(a[i], b[i]) for every word (union and intersection of filters of one shape).
 * \pre b has as many words as a. */
template <typename op_t>
inline void combine_words(word_storage & a, word_storage const & b, op_t const op) noexcept
{
    std::uint64_t * const x = a.data();
    std::uint64_t const * const y = b.data();
    for (std::size_t i = 0, n = a.size(); i < n; ++i)
        x[i] = op(x[i], y[i]);
}

/*! \brief The merge of Bloom filters of one type: every filter is checked against the first
 * (check(first, f) throws incompatible_error), then all are united into a copy of the first.
 * \throws incompatible_error also if the span is empty. */
template <typename filter_t, typename check_t>
[[nodiscard]] filter_t merge_all(std::span<filter_t const * const> const filters,
                                 char const * const type_name, check_t const & check)
{
    if (filters.empty())
        throw incompatible_error{std::string{"merge needs at least one "} + type_name + " filter"};
    for (auto const * f : filters)
        check(*filters[0], *f);
    filter_t r = filters[0]->clone();
    for (auto const * f : filters.subspan(1))
        r.unite_with(*f);
    return r;
}

/*! \brief (a.*op)(b) on a copy of a: the free unite() and intersect() of the Bloom filters. */
template <typename filter_t>
[[nodiscard]] filter_t combined(filter_t const & a, filter_t const & b,
                                void (filter_t::*op)(filter_t const &))
{
    filter_t r = a.clone();
    (r.*op)(b);
    return r;
}

} // namespace ksieve::detail
