#pragma once
/*! \file
 * \brief quotient_builder: a quotient filter built from (fingerprint, count) entries in increasing
 * fingerprint order, in the table size they need (set operations, re-sharding).
 */
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include <ksieve/filters/quotient/quotient_filter.hpp>
#include <ksieve/filters/support/zeroed_memory.hpp>

namespace ksieve
{

/*! \brief Builds a quotient filter from entries in strictly increasing fingerprint order, in two
 * passes: measure() them all, then start() a table of the size measured, append() them again and
 * finish(); while finish() says they did not fit (counters longer than measured), start() again and
 * append them again. The table depends only on the parameters and the entries, not on how they are
 * split into calls. Thread safety: none; one builder per thread. */
class quotient_builder
{
public:
    /*! \brief (fingerprint, count) with count >= 1. */
    using entry = std::pair<std::uint64_t, std::uint64_t>;

    /*! \brief Filters as quotient_filter::with_slots makes them; counters measured at remainder
     * width r_ref. \pre p in [min_fingerprint_bits, 64]; r_ref in [min_remainder_bits,
     * max_remainder_bits]. */
    quotient_builder(unsigned key_bits, unsigned p, double max_load, bool auto_grow,
                     unsigned r_ref);
    /*! \brief The table that `like` (an empty filter from quotient_filter::create()) reaches when
     * the entries are inserted one by one: the first of its growth sizes that holds them, so the
     * result has that filter's bytes. `distinct` (the distinct fingerprints within a factor of two)
     * chooses the sizes measured; where none holds the entries, sized as the other constructor. */
    quotient_builder(quotient_filter const & like, std::uint64_t distinct);
    quotient_builder(quotient_builder &&) noexcept;
    quotient_builder & operator=(quotient_builder &&) noexcept;
    ~quotient_builder();

    //! Pass 1: count the slots `entries` take (and keep them, see keep()). \throws std::bad_alloc
    void measure(std::span<entry const> entries);
    /*! \brief Keep the entries measure() is given from now on (about 5 bytes each, up to
     * max_bytes) for append_kept(); room for `expected` of them reserved. \throws std::bad_alloc */
    void keep(std::size_t max_bytes, std::size_t expected = 0);
    /*! \brief Take in what `later` measured and kept, as if this one had measured it. \pre later
     * has the same parameters, its entries all follow this one's, and neither started pass 2.
     * \throws std::bad_alloc */
    void absorb(quotient_builder && later);
    /*! \brief Pass 2: append() of the kept entries. \returns false, having appended nothing, if
     * they were not all kept (append() them from a walk then). */
    bool append_kept();
    /*! \brief Pass 1 for a caller that measures itself: `slots` more slots. */
    void add_slots(std::uint64_t slots) noexcept;

    /*! \brief Start pass 2 with an empty table of the size measured, 1/8 larger each time after;
     * `spare`: memory to take for it when large enough (quotient_filter::release_table). \throws
     * full_error when no table of these fingerprints is that large; std::bad_alloc. */
    void start(zeroed_memory * spare = nullptr);
    /*! \brief Pass 2: append the next `entries`. \returns false once one did not fit (then calls do
     * nothing until the next start()). \pre start() called. */
    bool append(std::span<entry const> entries) noexcept;
    /*! \brief End pass 2. \returns whether the table holds the entries within max_load (then
     * take() the filter, else start() again). */
    [[nodiscard]] bool finish() noexcept;
    /*! \brief The filter built. \pre finish() returned true. */
    [[nodiscard]] quotient_filter take() noexcept;

private:
    struct state;
    std::unique_ptr<state> s_;
};

} // namespace ksieve
