#pragma once
/*! \file
 * \brief ksieve's counting quotient filter: in-slot counters, exact mode, resize, k-way merge,
 * prefetched batches and region-locked concurrent insertion. Design: docs/design.md, "Filter
 * internals"; the table's layout and counters: docs/file_format.md, section 5.1.
 *
 * Thread safety: const members may run concurrently with each other; mutating members need
 * exclusive access, except insert_concurrent() (region locks; see its contract). Hot paths never
 * throw and never allocate, except automatic growth and the growth of a batch_scratch.
 */
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include <ksieve/filters/common/filter.hpp>
#include <ksieve/filters/support/zeroed_memory.hpp>

namespace ksieve
{

namespace detail
{
class qf_view;
} // namespace detail

/*! \brief Counting quotient filter over keys of `key_bits` bits; satisfies shard_filter. */
class quotient_filter
{
public:
    static constexpr filter_type type_id = filter_type::quotient;
    /*! \brief Smallest remainder width the counter encoding supports (growth stops there). */
    static constexpr unsigned min_remainder_bits = 2;
    /*! \brief Largest remainder width (a slot must fit one unaligned 64-bit load). */
    static constexpr unsigned max_remainder_bits = 57;
    /*! \brief Smallest fingerprint width (tiny keys are padded, see file comment). */
    static constexpr unsigned min_fingerprint_bits = 16;
    //! Exact filters of key spaces below 2^small_key_space_bits get exact_padding_bits more.
    static constexpr unsigned small_key_space_bits = 36;
    static constexpr unsigned exact_padding_bits = 6;
    /*! \brief Initial table size when nothing is expected: 2^9 = 512 home slots. */
    static constexpr unsigned default_min_quotient_bits = 9;
    /*! \brief Keys a whole filter is designed for when the expected count is unknown (divided among
     * shards); beyond it the FPR grows as n / 2^p. */
    static constexpr std::uint64_t default_design_keys = std::uint64_t{1} << 30;
    /*! \brief Slots per concurrency region (one lock each). */
    static constexpr unsigned region_slot_bits = 12;

    /*! \brief Iteration over (fingerprint, count) in increasing order. \pre the filter is not
     * modified while the cursor is in use. */
    class cursor
    {
    public:
        explicit cursor(quotient_filter const & f) noexcept;
        /*! \brief Advance to the next stored fingerprint. \returns false at the end. */
        bool next() noexcept;
        /*! \brief Current fingerprint (p bits). \pre next() returned true. */
        [[nodiscard]] std::uint64_t fingerprint() const noexcept { return fp_; }
        /*! \brief Count of the current fingerprint (>= 1). \pre next() returned true. */
        [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
        /*! \brief The next (up to) `cap` entries of next()'s sequence into fps and counts (the two
         * may be mixed). \returns how many: fewer than cap only at the end. \pre fps and counts
         * hold cap values. */
        std::size_t read(std::uint64_t * fps, std::uint64_t * counts, std::size_t cap) noexcept;
        /*! \brief How many words from the start of words() the walk will not read again. */
        [[nodiscard]] std::uint64_t words_done() const noexcept;

    private:
        // Where the walk stands: the run being read and the next home slot to look at.
        struct position
        {
            std::uint64_t next_quotient{0};
            std::uint64_t pos{0};
            std::uint64_t run_end{0};
            std::uint64_t quotient{0};
            std::uint64_t top{0}; // split geometry: the smallest fingerprint top of quotient
            std::uint64_t prev_end{0};
            bool have_prev{false};
            bool in_run{false};
            // The occupied and runend bits not yet consumed, a word each (the i-th runend ends the
            // i-th occupied home slot's run).
            std::uint64_t occ_block{~std::uint64_t{0}};
            std::uint64_t occ_bits{0};
            std::uint64_t end_block{~std::uint64_t{0}};
            std::uint64_t end_bits{0};
        };
        static bool next_run(quotient_filter const & f, position & at) noexcept;

        quotient_filter const * f_;
        position at_;
        std::uint64_t fp_{0};
        std::uint64_t count_{0};
    };

    /*! \brief Size of a table region for ordered batches (fits L1 with room to spare). */
    static constexpr std::uint64_t order_region_bytes = std::uint64_t{32} << 10;
    /*! \brief Ordered batches need at least one key per this many blocks (see ordered_batch()). */
    static constexpr std::uint64_t order_min_density = 16;
    /*! \brief Default batch_scratch::min_table_bytes: a table in the last-level cache gains less
     * from ordered batches than the sort costs (bench/filters/bench_quotient.cpp: 2^22 slots,
     * ordered lookups 3-5 ns slower; 2^26 slots, 25% faster, inserts 40% faster). */
    static constexpr std::uint64_t order_min_table_bytes = std::uint64_t{16} << 20;

    /*! \brief Reusable memory of the table-ordered batches (12 bytes per key), grown to the
     * largest batch seen. Thread safety: none; keep one per thread. */
    class batch_scratch
    {
    public:
        //! Grow to room for n keys. \returns false (keeping what it had) if memory runs out.
        bool reserve(std::size_t n) noexcept;
        //! Tables of at most this many bytes keep the input order (tune to the cache size).
        std::uint64_t min_table_bytes{order_min_table_bytes};

    private:
        friend class quotient_filter;
        std::vector<std::uint64_t> fps_;   // fingerprints in table order, then their results
        std::vector<std::uint32_t> pos_;   // pos_[j]: the batch index of fps_[j]
        std::vector<std::uint32_t> start_; // per table region: its first position (counting sort)
    };

    /*! \brief Empty filter for `expected` keys (a shard's share; 0 = unknown) of `key_bits` bits,
     * by cfg.fpr (0 = exact), max_load, auto_grow and shard_bits (to divide default_design_keys).
     * \throws usage_error for fpr outside [0, 0.5), max_load outside (0, 1] or key_bits outside
     * [1, 64]. */
    [[nodiscard]] static quotient_filter create(filter_config const & cfg, unsigned key_bits,
                                                std::uint64_t expected);

    //! The bytes of the table create(cfg, key_bits, expected) would make. \throws as create().
    [[nodiscard]] static std::uint64_t planned_bytes(filter_config const & cfg, unsigned key_bits,
                                                     std::uint64_t expected);

    /*! \brief Empty filter with explicit geometry: 2^q home slots, remainders of r bits, so p = q +
     * r fingerprint bits (exact iff p >= key_bits). \throws usage_error if q + r exceeds 64, r is
     * outside [min_remainder_bits, max_remainder_bits] or q is outside [6, 48]. */
    [[nodiscard]] static quotient_filter with_geometry(unsigned key_bits, unsigned q, unsigned r,
                                                       double max_load = 0.9,
                                                       bool auto_grow = true);

    /*! \brief Empty filter of p-bit fingerprints with `nslots` home slots (see "Home slots of any
     * number"). \throws usage_error unless nslots is a multiple of 64 in [64, 2^48], p <= 64 (p <
     * 64 unless nslots is a power of two) and the remainder width is within [min_remainder_bits,
     * max_remainder_bits]. */
    [[nodiscard]] static quotient_filter with_slots(unsigned key_bits, unsigned p,
                                                    std::uint64_t nslots, double max_load = 0.9,
                                                    bool auto_grow = true);

    //! The fewest home slots (a multiple of 64, at least 64) holding `used` slots within max_load.
    [[nodiscard]] static std::uint64_t slots_for(std::uint64_t used, double max_load) noexcept;

    /*! \brief Read-only filter over `words` it does not own (e.g. an mmap'd file); no copy.
     * \throws format_error if params and words are inconsistent (never reads out of bounds). */
    [[nodiscard]] static quotient_filter view(std::span<std::uint64_t const> params,
                                              std::span<std::uint64_t const> words,
                                              unsigned key_bits);

    /*! \brief Union of filters, counts added (combine() with unite), sized for the union at
     * inputs[0]'s max_load. Inputs of different fingerprint widths combine at the narrowest (the
     * fingerprints are the keys' top bits). \throws incompatible_error unless all inputs have the
     * same key_bits; usage_error for an empty input list; full_error if the union cannot be
     * represented. */
    [[nodiscard]] static quotient_filter merge(std::span<quotient_filter const * const> inputs);

    /*! \brief The most values params() gives. */
    static constexpr std::size_t max_param_count = 12;
    /*! \brief The most bytes a combine_scratch holds by default. */
    static constexpr std::size_t combine_buffer_bytes = std::size_t{64} << 20;
    /*! \brief Working memory that combine() reuses from call to call: a walk's result, about 5
     * bytes per fingerprint, at most max_bytes (a larger result is walked again instead). Not
     * thread-safe: one per thread. */
    struct combine_scratch
    {
        //! fingerprint minus the one before (all ones: in wide_gaps), room for `capacity` entries
        std::unique_ptr<std::uint32_t[]> gaps;
        std::unique_ptr<std::uint8_t[]> counts; //!< counts (255: in wide_counts), room as gaps
        std::size_t capacity{0};
        std::vector<std::uint64_t> wide_gaps;        //!< gaps of 2^32 - 1 and more, in order
        std::vector<std::uint64_t> wide_counts;      //!< counts of 255 and more, in order
        std::size_t max_bytes{combine_buffer_bytes}; //!< the most it keeps (0: always walk twice)
        //! an earlier result's release_table(): combine() takes it, zeroed, when large enough
        zeroed_memory spare_table;
    };
    /*! \brief combine()'s report of (input index, words it will not read again), a few hundred
     * KiB at a time (a mapped input can give their pages back). */
    using consumed_fn = std::function<void(std::size_t, std::span<std::uint64_t const>)>;

    /*! \brief A set operation by a k-way walk in fingerprint order into a filter sized for the
     * result; counts below `min_count` are as absent. unite: counts added; intersect: fingerprints
     * of every input, the smallest count; subtract: the first input's fingerprints that no other
     * holds; subtract_counts: the first input's count minus the others' sum, where positive.
     * `consumed` is called on the calling thread. Thread safety: the inputs are only read; threads
     * may combine at once, each with its own scratch. \throws as merge(). */
    [[nodiscard]] static quotient_filter combine(std::span<quotient_filter const * const> inputs,
                                                 set_operation op, std::uint64_t min_count = 1,
                                                 combine_scratch * scratch = nullptr,
                                                 consumed_fn const & consumed = {});
    /*! \brief The table's memory (for combine_scratch::spare_table), leaving the filter as a
     * moved-from one; empty for views. Thread safety: none on this filter. */
    [[nodiscard]] zeroed_memory release_table() noexcept;

    quotient_filter(quotient_filter &&) noexcept;
    quotient_filter & operator=(quotient_filter &&) noexcept;
    quotient_filter(quotient_filter const &) = delete;
    quotient_filter & operator=(quotient_filter const &) = delete;
    ~quotient_filter();

    /*! \brief An owning, mutable deep copy (also of a view). */
    [[nodiscard]] quotient_filter clone() const;

    /*! \brief Add `count` occurrences of `key`, growing past max_load (if auto_grow). \returns
     * full (and changes nothing) without room: growth disabled and every slot used, a growing
     * filter that cannot grow at 0.95 load, out of memory, or a view. \pre key < 2^key_bits. */
    insert_status insert(std::uint64_t key, std::uint64_t count = 1) noexcept;

    /*! \brief Remove up to `count` occurrences of `key`'s fingerprint (in fingerprint mode maybe a
     * colliding key's). \returns false (nothing changed) if the fingerprint is absent. */
    bool remove(std::uint64_t key, std::uint64_t count = 1) noexcept;

    /*! \brief Stored count of the key's fingerprint (0 if absent). Exact in exact mode; never below
     * the true count in fingerprint mode. */
    [[nodiscard]] std::uint64_t count(std::uint64_t key) const noexcept;
    /*! \brief count(key) != 0. */
    [[nodiscard]] bool contains(std::uint64_t key) const noexcept { return count(key) != 0; }

    /*! \brief insert(keys[i], 1) in order, prefetched. Stops at the first `full` and returns it
     * (the keys before it are inserted). */
    insert_status insert_batch(std::span<std::uint64_t const> keys) noexcept;
    /*! \brief insert_batch(keys), a fetch-and-add: old[i] = the count of keys[i]'s fingerprint just
     * before keys[i] itself was added (set for the keys inserted). \pre old has keys.size()
     * elements. */
    insert_status insert_batch(std::span<std::uint64_t const> keys, std::uint64_t * old) noexcept;
    //! out[i] = count(keys[i]), prefetched. \pre out has keys.size() elements.
    void count_batch(std::span<std::uint64_t const> keys, std::uint64_t * out) const noexcept;

    /*! \brief out[i] = the count of keys[i] in the sharded filter of `shards` (as sharded_filter
     * shards keys), in one pipeline across the shards. \pre shards.size() == 2^shard_bits; every
     * key < 2^key_bits; out has keys.size() elements. Thread safety: as count_batch. */
    static void count_sharded(std::span<quotient_filter const> shards, unsigned key_bits,
                              unsigned shard_bits, std::span<std::uint64_t const> keys,
                              std::uint64_t * out) noexcept;

    /*! \brief count_batch(keys, out), visiting the keys in table order where ordered_batch() (a
     * stable counting sort by table region, so that the keys of a block share its cache lines). It
     * may grow `scratch` (keeping the input order if that fails). Thread safety: as count_batch,
     * with one scratch per thread. */
    void count_batch(std::span<std::uint64_t const> keys, std::uint64_t * out,
                     batch_scratch & scratch) const noexcept;
    /*! \brief insert_batch(keys, old) in table order where that pays; old may be null. On ok, the
     * table and old[] are those of insert_batch(keys, old); on `full`, the filter holds an
     * unspecified subset of the batch (not a prefix), old[] set for those keys. Thread safety: as
     * insert_batch, with one scratch per thread. */
    insert_status insert_batch(std::span<std::uint64_t const> keys, std::uint64_t * old,
                               batch_scratch & scratch) noexcept;
    /*! \brief Whether the scratch overloads order a batch of n keys: a table above
     * scratch.min_table_bytes, of more than one region of order_region_bytes, and at least one key
     * per order_min_density blocks. */
    [[nodiscard]] bool ordered_batch(std::size_t n, batch_scratch const & scratch) const noexcept;
    /*! \brief insert(key, count) that may run concurrently with other insert_concurrent() calls
     * (and nothing else). Never grows: full where the key's cluster has no room (or for a view).
     * Statistics include these inserts once the threads are joined. */
    insert_status insert_concurrent(std::uint64_t key, std::uint64_t count = 1) noexcept;

    /*! \brief fn(value, count) for every fingerprint in increasing order; value is the key in exact
     * mode, else the fingerprint. */
    template <typename Fn> void for_each(Fn && fn) const
    {
        cursor c{*this};
        bool const ex = exact();
        while (c.next())
            fn(ex ? (c.fingerprint() >> shl_) : c.fingerprint(), c.count());
    }

    /*! \brief resize_slots(2^new_q). \returns false if new_q is out of range; else as it. */
    bool resize(unsigned new_q);
    /*! \brief Rebuild with `nslots` home slots (see with_slots), keeping every entry. \returns
     * false (nothing changed) for an invalid geometry, contents that do not fit, or a view. \throws
     * std::bad_alloc. */
    bool resize_slots(std::uint64_t nslots);
    /*! \brief Double the home slots (or grow to the power of two below that where the fingerprints
     * are too narrow). \returns false if neither is possible. */
    bool grow() { return can_grow() && resize_slots(grown_slots()); }
    /*! \brief Whether a larger table exists for these fingerprints (no allocation is tried). */
    [[nodiscard]] bool can_grow() const noexcept;
    /*! \brief Halve the home slots if the result stays within max_load (and a multiple of 64). */
    bool shrink();
    /*! \brief The fewest home slots (a multiple of 64) that hold the contents within max_load, a
     * function of the contents alone. \throws std::bad_alloc. */
    [[nodiscard]] std::uint64_t fit_slots() const;
    /*! \brief Rebuild at fit_slots() (a few 64 more where the counters need them): with slack 0
     * whenever that differs from the slots now (equal contents give equal tables), else only when
     * it saves more than that fraction of the slots. \returns whether it changed. \throws
     * std::bad_alloc. */
    bool fit(double slack = 0.0);
    /*! \brief Rebuild with every count 1, at the same home slots (fit() may then shrink it).
     * \returns whether it changed (not if every count is 1, or for a view). \throws
     * std::bad_alloc. */
    bool drop_counts();
    /*! \brief The table bytes of this filter at `nslots` home slots (its fingerprint width). */
    [[nodiscard]] std::uint64_t bytes_at(std::uint64_t nslots) const noexcept;
    /*! \brief Room for `incoming` more used slots in a table of at most `cap_bytes`: where even
     * the grown table cannot hold them within max_load, forget() down to what leaves that room.
     * \returns the fingerprints forgotten; a function of the contents, the table size and the
     * arguments. \throws std::bad_alloc. */
    std::uint64_t make_room(std::uint64_t cap_bytes, std::uint64_t incoming);
    //! Whether make_room(cap_bytes, incoming) would find room without forgetting.
    [[nodiscard]] bool has_room(std::uint64_t cap_bytes, std::uint64_t incoming) const noexcept;
    /*! \brief Keep the entries of the highest counts (ties: a hash of the fingerprint) in at most
     * `target_used` slots, at the same home slots. \returns the fingerprints forgotten. \throws
     * std::bad_alloc. */
    std::uint64_t forget(std::uint64_t target_used);
    //! The position in a key of the bits keep_sample() tests (the fingerprint's lowest).
    [[nodiscard]] unsigned sample_shift() const noexcept { return shr_; }
    /*! \brief Keep the entries whose keys have `level` zero bits at sample_shift(), at the same
     * home slots. \returns the fingerprints dropped. \pre level < 32. \throws std::bad_alloc */
    std::uint64_t keep_sample(unsigned level);

    /*! \brief Parameters stored in the file (see view()). */
    [[nodiscard]] std::vector<std::uint64_t> params() const;
    /*! \brief The whole table as little-endian words. */
    [[nodiscard]] std::span<std::uint64_t const> words() const noexcept
    {
        return {ctable_, nwords_};
    }
    //! Table bytes, home slots, used, distinct, total, load, FPR (exact: 0, else distinct / 2^p).
    [[nodiscard]] filter_stats stats() const noexcept;

    [[nodiscard]] unsigned key_bits() const noexcept { return key_bits_; }
    [[nodiscard]] unsigned quotient_bits() const noexcept { return q_; }
    [[nodiscard]] unsigned remainder_bits() const noexcept { return r_; }
    [[nodiscard]] unsigned fingerprint_bits() const noexcept { return p_; }
    [[nodiscard]] bool exact() const noexcept { return p_ >= key_bits_; }
    [[nodiscard]] bool is_view() const noexcept { return table_ == nullptr; }
    [[nodiscard]] double max_load() const noexcept { return max_load_; }
    [[nodiscard]] bool auto_grow() const noexcept { return auto_grow_; }
    /*! \brief Home slots N (2^q, or a multiple of 64 between 2^(q-1) and 2^q). */
    [[nodiscard]] std::uint64_t slots() const noexcept { return nslots_; }
    /*! \brief Distinct fingerprints (= distinct keys in exact mode). */
    [[nodiscard]] std::uint64_t distinct() const noexcept;
    /*! \brief Sum of all counts (saturating). */
    [[nodiscard]] std::uint64_t total_count() const noexcept;
    /*! \brief Slots in use (fingerprints plus counter digits). */
    [[nodiscard]] std::uint64_t used_slots() const noexcept;
    /*! \brief The fingerprint of a key (p bits). */
    [[nodiscard]] std::uint64_t fingerprint(std::uint64_t const key) const noexcept
    {
        return ((key & key_mask_) << shl_) >> shr_;
    }

private:
    __extension__ using wide = unsigned __int128; // products of a fingerprint top and a slot count

    //! A fingerprint as the table stores it, (home slot << r) | remainder, increasing in it.
    [[nodiscard]] std::uint64_t slot_code(std::uint64_t const fp) const noexcept
    {
        if (!split_)
            return fp;
        std::uint64_t const a = fp >> low_bits_;
        // (a N) >> q and whether (a N) mod 2^q >= N, from one product with N at a word's top
        wide const t = static_cast<wide>(a) * scaled_slots_;
        std::uint64_t const h = static_cast<std::uint64_t>(t >> 64);
        std::uint64_t const second = static_cast<std::uint64_t>(t) >= scaled_slots_ ? 1 : 0;
        return (h << r_) | (second << low_bits_) | (fp & low_mask_);
    }
    [[nodiscard]] std::uint64_t key_code(std::uint64_t const key) const noexcept
    {
        return slot_code(fingerprint(key));
    }
    // The home slot of top value t: floor(t S / 2^64), S = scaled_slots_ (split tables).
    [[nodiscard]] std::uint64_t home_of_top(std::uint64_t const t) const noexcept
    {
        return static_cast<std::uint64_t>((static_cast<wide>(t) * scaled_slots_) >> 64);
    }
    // floor(h R / 2^64), R = floor((2^128 - 1) / S): never above ceil(h 2^64 / S), the smallest top
    // value whose home slot is h, and at most two below it (R is within one of 2^128 / S, h <
    // 2^64).
    [[nodiscard]] std::uint64_t top_estimate(std::uint64_t const h) const noexcept
    {
        return h + static_cast<std::uint64_t>((static_cast<wide>(h) * top_recip_) >> 64);
    }

    struct memory;
    struct concurrency;
    struct group_info;
    struct locate_info;
    friend class cursor;
    friend struct qf_appender;
    /*! \brief The kernels' access (hot paths compiled once per CPU level). */
    friend class detail::qf_view;

    quotient_filter() noexcept;
    void set_key(unsigned key_bits, unsigned p, double max_load, bool auto_grow) noexcept;
    void set_geometry(std::uint64_t nslots);
    void allocate_table(zeroed_memory * spare = nullptr);
    // An empty filter of these parameters (set_key, set_geometry, allocate_table(spare)).
    static quotient_filter empty(unsigned key_bits, unsigned p, double max_load, bool auto_grow,
                                 std::uint64_t nslots, zeroed_memory * spare = nullptr);
    void fold_concurrent() noexcept;
    // Rebuild at `nslots` home slots with the same entries (every count 1 when presence_only);
    // false, and nothing changed, if they do not fit.
    bool rebuild(std::uint64_t nslots, bool presence_only);
    // The batch's fingerprints in table order and their indices into the scratch; false (input
    // order) unless ordered_batch() and the scratch could grow.
    [[nodiscard]] bool order_batch(std::span<std::uint64_t const> keys,
                                   batch_scratch & scratch) const noexcept;
    //! The home slots of the table growth would make (0: it cannot grow).
    [[nodiscard]] std::uint64_t grown_slots() const noexcept { return grown_slots_; }
    //! The used slots max_load allows in the largest table growth reaches within `cap_bytes`.
    [[nodiscard]] std::uint64_t room_within(std::uint64_t cap_bytes) const noexcept;
    //! Rebuild at the same slots with the entries where keep(fp, count). \throws std::bad_alloc
    template <typename Keep> void rebuild_keeping(Keep && keep);
    [[nodiscard]] bool try_grow() noexcept;

    // Geometry.
    unsigned key_bits_{0};
    unsigned shl_{0}; // p - key_bits when exact
    unsigned shr_{0}; // key_bits - p otherwise
    unsigned p_{0};
    unsigned q_{0};
    unsigned r_{0};
    std::uint64_t key_mask_{0};
    std::uint64_t rmask_{0};
    std::uint64_t nslots_{0};
    bool split_{false};    // nslots_ is not 2^q: the remainder's top bit tells the two tops apart
    unsigned low_bits_{0}; // p - q: the fingerprint bits below its top q
    std::uint64_t low_mask_{0};
    std::uint64_t scaled_slots_{0}; // split geometry: nslots_ << (64 - q)
    std::uint64_t top_recip_{0};    // floor((2^128 - 1) / scaled_slots_) - 2^64 (split tables)
    std::uint64_t nblocks_{0};
    std::uint64_t phys_slots_{0};
    std::uint64_t block_bytes_{0};
    std::uint64_t swar_ones_{0};   // lowest bit of each r-bit field of a 57-bit window
    std::uint64_t swar_high_{0};   // highest bit of each field
    unsigned swar_fields_{0};      // fields per window: floor(57 / r)
    std::uint64_t grow_at_{0};     // used slots that trigger growth: max_load * N
    std::uint64_t stuck_at_{0};    // used slots at which a growing filter that cannot grow is full
    std::uint64_t grown_slots_{0}; // home slots after growth (0: cannot grow), see grown_slots()
    double max_load_{0.9};
    bool auto_grow_{true};

    // Contents.
    std::uint64_t used_{0};
    std::uint64_t distinct_{0};
    std::uint64_t total_{0};

    // Storage: table_ is null for views; ctable_ always points at the words.
    std::unique_ptr<memory> mem_;
    std::uint64_t * table_{nullptr};
    std::uint64_t const * ctable_{nullptr};
    std::size_t nwords_{0};
    std::unique_ptr<concurrency> conc_;
};

} // namespace ksieve
