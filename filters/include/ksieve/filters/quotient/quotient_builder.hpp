#pragma once
/*! \file
 * \brief quotient_builder: a quotient filter built from (fingerprint, count) entries given in
 * increasing fingerprint order, in the table size they need (as the set operations build their
 * results; re-sharding uses it to move a filter to another layout without inserting key by key).
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
 * passes over the same entries: measure() them all (pass 1: the slots they take), then start() a
 * table at the size measured, append() them again and finish() (pass 2). While finish() says they
 * did not fit (counters longer at the table's remainder width than measured), start() again (1/8
 * larger) and append them again. The table depends only on the parameters and the entries, never on
 * how they are split into calls. Thread safety: none; one builder per thread (builders of different
 * filters may run concurrently). */
class quotient_builder
{
public:
    /*! \brief (fingerprint, count) with count >= 1. */
    using entry = std::pair<std::uint64_t, std::uint64_t>;

    /*! \brief A builder of filters of `key_bits`-bit keys with p-bit fingerprints (as
     * quotient_filter:: with_slots takes them), load at most max_load, growth as auto_grow;
     * counters measured at remainder width r_ref. \pre p in [min_fingerprint... 64], r_ref in
     * [min_remainder_bits, max_remainder_bits]. */
    quotient_builder(unsigned key_bits, unsigned p, double max_load, bool auto_grow,
                     unsigned r_ref);
    /*! \brief A builder of the table that `like` (an empty filter, as quotient_filter::create()
     * makes it) reaches when the entries are inserted into it one by one: the first of its growth
     * sizes whose load limit and slots hold them, so that the result has the bytes of that filter
     * (the table is canonical for its size and contents). `distinct`: an estimate of the distinct
     * fingerprints (within a factor of two), to choose the sizes measured; where none of them holds
     * the entries, sized as the other constructor. */
    quotient_builder(quotient_filter const & like, std::uint64_t distinct);
    quotient_builder(quotient_builder &&) noexcept;
    quotient_builder & operator=(quotient_builder &&) noexcept;
    ~quotient_builder();

    /*! \brief Pass 1: count the slots that `entries` take (and keep them, see keep()).
     * \throws std::bad_alloc while keeping. */
    void measure(std::span<entry const> entries);
    /*! \brief Keep the entries that measure() is given from now on (about 5 bytes each, up to
     * max_bytes), so that pass 2 can take them from the builder (append_kept()) instead of from a
     * second walk; room for `expected` of them is reserved. \throws std::bad_alloc */
    void keep(std::size_t max_bytes, std::size_t expected = 0);
    /*! \brief Pass 1 split: take in what `later` (a builder of the same parameters and distinct
     * estimate, whose measured entries all follow this one's) measured and kept (and its room to
     * keep), as if this one had measured them. \pre neither has started pass 2. \throws
     * std::bad_alloc */
    void absorb(quotient_builder && later);
    /*! \brief Pass 2 from the kept entries: append() of all of them. \returns false, having
     * appended nothing, if they were not all kept (then append() them from a walk); else as
     * append(). */
    bool append_kept();
    /*! \brief Pass 1 for a caller that measures itself: `slots` more slots. */
    void add_slots(std::uint64_t slots) noexcept;

    /*! \brief Start pass 2 with an empty table: the fewest home slots that hold the slots measured
     * within max_load the first time, 1/8 larger each time after. `spare` (optional): memory to
     * take for the table when large enough (see quotient_filter::release_table). \throws full_error
     * when no table of these fingerprints can be that large; std::bad_alloc. */
    void start(zeroed_memory * spare = nullptr);
    /*! \brief Pass 2: append `entries` (the next ones after those appended since start()). \returns
     * false once an entry did not fit (later calls then do nothing until the next start()). \pre
     * start() called. */
    bool append(std::span<entry const> entries) noexcept;
    /*! \brief End pass 2. \returns whether the table holds every entry appended within max_load;
     * then take() gives the filter, else start() again. */
    [[nodiscard]] bool finish() noexcept;
    /*! \brief The filter built. \pre finish() returned true. */
    [[nodiscard]] quotient_filter take() noexcept;

private:
    struct state;
    std::unique_ptr<state> s_;
};

} // namespace ksieve
