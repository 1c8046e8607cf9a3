// detail::qf_view: what the quotient filter's kernels (quotient_filter_kernels.inc, namespace-scope
// functions compiled once per CPU level) read and change of a quotient_filter, the one friend they
// go through (private header of the quotient filter's sources).
#pragma once

#include <ksieve/filters/quotient/quotient_filter.hpp>

#include <cstdint>

namespace ksieve::detail
{

/*! \brief A quotient filter as its kernels see it: one pointer, passed by value, with the table's
 * geometry, storage and counters (the filter's private members of the same names without the
 * trailing underscore). Read-only kernels take it from a const filter and never write through it:
 * one type serves both kinds, as the filter's hot paths share their primitives. Thread safety: that
 * of the filter's member the kernel implements. */
class qf_view
{
public:
    using locate_info = quotient_filter::locate_info; //!< a run's place (private to the filter)
    using group_info = quotient_filter::group_info;   //!< a fingerprint's group in its run

    /*! \brief The view of `f`. */
    explicit qf_view(quotient_filter const & f) noexcept : q_{const_cast<quotient_filter *>(&f)} {}

    /*! \brief Remainder bits r. */
    [[nodiscard, gnu::always_inline]] unsigned r() const noexcept { return q_->r_; }
    /*! \brief 2^r - 1. */
    [[nodiscard, gnu::always_inline]] std::uint64_t rmask() const noexcept { return q_->rmask_; }
    /*! \brief Home slots N. */
    [[nodiscard, gnu::always_inline]] std::uint64_t nslots() const noexcept { return q_->nslots_; }
    /*! \brief Slots of the table, overflow blocks included. */
    [[nodiscard, gnu::always_inline]] std::uint64_t phys_slots() const noexcept
    {
        return q_->phys_slots_;
    }
    /*! \brief Blocks of 64 slots. */
    [[nodiscard, gnu::always_inline]] std::uint64_t nblocks() const noexcept
    {
        return q_->nblocks_;
    }
    /*! \brief Bytes of a block (header and 64 remainders). */
    [[nodiscard, gnu::always_inline]] std::uint64_t block_bytes() const noexcept
    {
        return q_->block_bytes_;
    }
    /*! \brief Fields of r bits in a 57-bit window. */
    [[nodiscard, gnu::always_inline]] unsigned swar_fields() const noexcept
    {
        return q_->swar_fields_;
    }
    /*! \brief The lowest bit of each such field. */
    [[nodiscard, gnu::always_inline]] std::uint64_t swar_ones() const noexcept
    {
        return q_->swar_ones_;
    }
    /*! \brief The highest bit of each such field. */
    [[nodiscard, gnu::always_inline]] std::uint64_t swar_high() const noexcept
    {
        return q_->swar_high_;
    }
    /*! \brief The table's words, writable (null for a view of a file). */
    [[nodiscard, gnu::always_inline]] std::uint64_t * table() const noexcept { return q_->table_; }
    /*! \brief The table's words. */
    [[nodiscard, gnu::always_inline]] std::uint64_t const * ctable() const noexcept
    {
        return q_->ctable_;
    }
    /*! \brief Whether the filter grows when full. */
    [[nodiscard, gnu::always_inline]] bool auto_grow() const noexcept { return q_->auto_grow_; }
    /*! \brief Used slots that trigger growth. */
    [[nodiscard, gnu::always_inline]] std::uint64_t grow_at() const noexcept
    {
        return q_->grow_at_;
    }
    /*! \brief Used slots at which a growing filter that cannot grow is full. */
    [[nodiscard, gnu::always_inline]] std::uint64_t stuck_at() const noexcept
    {
        return q_->stuck_at_;
    }
    /*! \brief Slots in use. */
    [[nodiscard, gnu::always_inline]] std::uint64_t & used() const noexcept { return q_->used_; }
    /*! \brief Distinct fingerprints. */
    [[nodiscard, gnu::always_inline]] std::uint64_t & distinct() const noexcept
    {
        return q_->distinct_;
    }
    /*! \brief Sum of the counts (saturating). */
    [[nodiscard, gnu::always_inline]] std::uint64_t & total() const noexcept { return q_->total_; }

    /*! \brief quotient_filter::fingerprint. */
    [[nodiscard, gnu::always_inline]] std::uint64_t
    fingerprint(std::uint64_t const key) const noexcept
    {
        return q_->fingerprint(key);
    }
    /*! \brief quotient_filter::slot_code: a fingerprint as the table stores it. */
    [[nodiscard, gnu::always_inline]] std::uint64_t slot_code(std::uint64_t const fp) const noexcept
    {
        return q_->slot_code(fp);
    }
    /*! \brief quotient_filter::key_code: the table code of a key. */
    [[nodiscard, gnu::always_inline]] std::uint64_t key_code(std::uint64_t const key) const noexcept
    {
        return q_->key_code(key);
    }
    /*! \brief quotient_filter::can_grow. */
    [[nodiscard]] bool can_grow() const noexcept { return q_->can_grow(); }
    /*! \brief quotient_filter::try_grow: false if the table could not grow. */
    [[nodiscard]] bool try_grow() const noexcept { return q_->try_grow(); }
    /*! \brief quotient_filter::fold_concurrent: the counters of concurrent inserts into the
     * filter's.
     */
    void fold_concurrent() const noexcept { q_->fold_concurrent(); }

private:
    quotient_filter * q_;
};

} // namespace ksieve::detail
