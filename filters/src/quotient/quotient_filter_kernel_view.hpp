// detail::qf_view: what the quotient filter's kernels (quotient_filter_kernels.inc, namespace-scope
// functions compiled once per CPU level) read and change of a quotient_filter, the one friend they
// go through (private header of the quotient filter's sources).
#pragma once

#include <ksieve/filters/quotient/quotient_filter.hpp>

#include <cstdint>

namespace ksieve::detail
{

/*! \brief What a batch lookup needs of a quotient filter's table besides its words, by value. The
 * shards of a sharded filter built in one run share it: a pipeline over them keeps it in registers
 * (a local copy that no store can alias) instead of reading it from each key's shard. */
struct qf_geometry
{
    std::uint64_t key_mask{0};     //!< the key bits the fingerprint takes
    std::uint64_t low_mask{0};     //!< the fingerprint bits below its top q (split tables)
    std::uint64_t scaled_slots{0}; //!< split tables: home slots << (64 - q)
    std::uint64_t rmask{0};        //!< 2^r - 1
    std::uint64_t nblocks{0};      //!< blocks of 64 slots
    std::uint64_t block_bytes{0};  //!< bytes of a block
    std::uint64_t swar_ones{0};    //!< the lowest bit of each r-bit field of a 57-bit window
    std::uint64_t swar_high{0};    //!< the highest bit of each such field
    unsigned shl{0};               //!< fingerprint: left shift of the masked key
    unsigned shr{0};               //!< fingerprint: then right shift
    unsigned low_bits{0};          //!< p - q
    unsigned r{0};                 //!< remainder bits
    unsigned swar_fields{0};       //!< fields of r bits in a 57-bit window
    bool split{false};             //!< home slots not a power of two

    /*! \brief Whether two tables have the same geometry. */
    [[nodiscard]] bool operator==(qf_geometry const &) const noexcept = default;

    /*! \brief quotient_filter::key_code, with the table's split known at compile time. \pre Split
     * == split. */
    template <bool Split>
    [[nodiscard, gnu::always_inline]] std::uint64_t key_code(std::uint64_t const key) const noexcept
    {
        std::uint64_t const fp = ((key & key_mask) << shl) >> shr;
        if constexpr (!Split)
            return fp;
        else
        {
            std::uint64_t const a = fp >> low_bits;
            __extension__ using wide = unsigned __int128;
            wide const t = static_cast<wide>(a) * scaled_slots;
            std::uint64_t const h = static_cast<std::uint64_t>(t >> 64);
            std::uint64_t const second = static_cast<std::uint64_t>(t) >= scaled_slots ? 1 : 0;
            return (h << r) | (second << low_bits) | (fp & low_mask);
        }
    }
};

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

    /*! \brief The table's geometry by value. */
    [[nodiscard]] qf_geometry geometry() const noexcept
    {
        quotient_filter const & q = *q_;
        return qf_geometry{.key_mask = q.key_mask_,
                           .low_mask = q.low_mask_,
                           .scaled_slots = q.scaled_slots_,
                           .rmask = q.rmask_,
                           .nblocks = q.nblocks_,
                           .block_bytes = q.block_bytes_,
                           .swar_ones = q.swar_ones_,
                           .swar_high = q.swar_high_,
                           .shl = q.shl_,
                           .shr = q.shr_,
                           .low_bits = q.low_bits_,
                           .r = q.r_,
                           .swar_fields = q.swar_fields_,
                           .split = q.split_};
    }
    /*! \brief This view (the rare paths of the kernels that also take a qf_shard_view). */
    [[nodiscard, gnu::always_inline]] qf_view full() const noexcept { return *this; }

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

/*! \brief One shard of a sharded filter as its batch lookups see it: the geometry all shards share
 * (held by the caller), the shard's words, and the shard itself for the rare paths (full()). The
 * members of qf_view that the lookups' common path reads, by the same names and meanings (ctable():
 * the shard's words, full(): the shard's qf_view). Thread safety: that of the read-only kernels. */
class qf_shard_view
{
public:
    /*! \brief The view of `f`, whose geometry is `g`. \pre g == qf_view{f}.geometry(); g outlives
     * the view. */
    qf_shard_view(qf_geometry const & g, quotient_filter const & f) noexcept
        : g_{g}, ctable_{qf_view{f}.ctable()}, f_{f}
    {
    }
    [[nodiscard, gnu::always_inline]] unsigned r() const noexcept { return g_.r; }
    [[nodiscard, gnu::always_inline]] std::uint64_t rmask() const noexcept { return g_.rmask; }
    [[nodiscard, gnu::always_inline]] std::uint64_t nblocks() const noexcept { return g_.nblocks; }
    [[nodiscard, gnu::always_inline]] std::uint64_t block_bytes() const noexcept
    {
        return g_.block_bytes;
    }
    [[nodiscard, gnu::always_inline]] unsigned swar_fields() const noexcept
    {
        return g_.swar_fields;
    }
    [[nodiscard, gnu::always_inline]] std::uint64_t swar_ones() const noexcept
    {
        return g_.swar_ones;
    }
    [[nodiscard, gnu::always_inline]] std::uint64_t swar_high() const noexcept
    {
        return g_.swar_high;
    }
    [[nodiscard, gnu::always_inline]] std::uint64_t const * ctable() const noexcept
    {
        return ctable_;
    }
    [[nodiscard, gnu::always_inline]] qf_view full() const noexcept { return f_; }

private:
    qf_geometry const & g_;
    std::uint64_t const * ctable_;
    qf_view f_;
};

} // namespace ksieve::detail
