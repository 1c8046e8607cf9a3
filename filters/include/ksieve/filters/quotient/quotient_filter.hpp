#pragma once
/*! \file
 * \brief ksieve's counting quotient filter: rank-and-select metadata, in-slot variable-length
 * counters, exact mode, resize, k-way merge, prefetched batch operations and region-locked
 * concurrent insertion.
 *
 * Design (fingerprints, exact mode, home slots of any number, growth, CPU levels): docs/design.md,
 * "Filter internals"; the table's layout and counters: docs/file_format.md, section 5.1.
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
    /*! \brief Exact filters of key spaces below 2^small_key_space_bits get exact_padding_bits more.
     */
    static constexpr unsigned small_key_space_bits = 36;
    static constexpr unsigned exact_padding_bits = 6;
    /*! \brief Initial table size when nothing is expected: 2^9 = 512 home slots. */
    static constexpr unsigned default_min_quotient_bits = 9;
    /*! \brief Keys a whole filter is designed for when the expected count is unknown (divided among
     * shards): 2^30, about a billion distinct k-mers. Beyond it the FPR grows as n / 2^p. */
    static constexpr std::uint64_t default_design_keys = std::uint64_t{1} << 30;
    /*! \brief Slots per concurrency region (one lock each). */
    static constexpr unsigned region_slot_bits = 12;

    /*! \brief Iteration in increasing fingerprint order over (fingerprint, count) groups. The
     * filter must not be modified while a cursor is in use. */
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
        /*! \brief The next (up to) `cap` fingerprints and their counts, in order, into fps and
         * counts (the same sequence next() gives; the two may be mixed). \returns how many were
         * written: fewer than cap only at the end, then 0. \pre fps and counts hold cap values. */
        std::size_t read(std::uint64_t * fps, std::uint64_t * counts, std::size_t cap) noexcept;
        /*! \brief How many of the table's words (from the start of words()) the walk will not read
         * again. */
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
            // The occupied and runend bits not yet consumed, of one word each (runs are stored in
            // the order of their home slots, so the i-th runend ends the i-th occupied home slot's
            // run).
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
     * from ordered batches than the sort costs (2^22 slots, 5 MB: ordered lookups 3-5 ns slower;
     * 2^26 slots, 85 MB: 25% faster, inserts 40% faster; measured by
     * bench/filters/bench_quotient.cpp). */
    static constexpr std::uint64_t order_min_table_bytes = std::uint64_t{16} << 20;

    /*! \brief Reusable memory for the table-ordered batch operations (the count_batch /
     * insert_batch overloads that take one): a copy of the batch's fingerprints and their batch
     * indices (12 bytes per key), grown to the largest batch seen, after which no call allocates.
     * Thread safety: none; keep one per thread. */
    class batch_scratch
    {
    public:
        /*! \brief Grow to room for n keys. \returns false (keeping what it had) if memory runs out.
         */
        bool reserve(std::size_t n) noexcept;
        /*! \brief Tables of at most this many bytes keep the input order (tune to the cache size).
         */
        std::uint64_t min_table_bytes{order_min_table_bytes};

    private:
        friend class quotient_filter;
        std::vector<std::uint64_t>
            fps_; // fingerprints in table order; then the results, in that order
        std::vector<std::uint32_t> pos_;   // pos_[j]: the batch index of fps_[j]
        std::vector<std::uint32_t> start_; // per table region: its first position (counting sort)
    };

    /*! \brief Empty filter for `expected` keys of `key_bits` bits (expected already divided among
     * shards; 0 = unknown). Uses cfg.fpr (0 = exact), cfg.max_load, cfg.auto_grow and
     * cfg.shard_bits (only to divide default_design_keys). \throws usage_error for fpr outside [0,
     * 0.5), max_load outside (0, 1] or key_bits outside [1, 64]. */
    [[nodiscard]] static quotient_filter create(filter_config const & cfg, unsigned key_bits,
                                                std::uint64_t expected);

    /*! \brief The bytes of the table create(cfg, key_bits, expected) makes, without making it.
     * \throws as create(). */
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

    /*! \brief The fewest home slots (a multiple of 64, at least 64) that hold `used` slots within
     * max_load.
     */
    [[nodiscard]] static std::uint64_t slots_for(std::uint64_t used, double max_load) noexcept;

    /*! \brief Read-only filter over `words` it does not own (e.g. an mmap'd file); no copy.
     * \throws format_error if params and words are inconsistent (never reads out of bounds). */
    [[nodiscard]] static quotient_filter view(std::span<std::uint64_t const> params,
                                              std::span<std::uint64_t const> words,
                                              unsigned key_bits);

    /*! \brief Union of filters, counts added, built by a k-way streaming merge in fingerprint order
     * into a new filter sized for the union (load <= max_load of inputs[0]). Inputs of different
     * fingerprint widths combine at the narrowest (the fingerprints are the top bits of the keys:
     * cut, they are those of a filter of that width). \throws incompatible_error unless all inputs
     * have the same key_bits; usage_error for an empty input list; full_error if the union cannot
     * be represented. */
    [[nodiscard]] static quotient_filter merge(std::span<quotient_filter const * const> inputs);

    /*! \brief The most values params() gives. */
    static constexpr std::size_t max_param_count = 12;
    /*! \brief The most bytes a combine_scratch holds by default. */
    static constexpr std::size_t combine_buffer_bytes = std::size_t{64} << 20;
    /*! \brief Working memory of combine() that one thread reuses from call to call: the result of a
     * walk, about 5 bytes per fingerprint (gaps between fingerprints and counts, the rare wide ones
     * apart), at most max_bytes (a larger result is walked again instead). Not thread-safe: one per
     * thread. */
    struct combine_scratch
    {
        //! fingerprint minus the one before (all ones: in wide_gaps), room for `capacity` entries
        //! (the most a walk has kept so far; pages only touched as entries are written), the last
        //! walk's first
        std::unique_ptr<std::uint32_t[]> gaps;
        std::unique_ptr<std::uint8_t[]> counts; //!< counts (255: in wide_counts), room as gaps
        std::size_t capacity{0};
        std::vector<std::uint64_t> wide_gaps;        //!< gaps of 2^32 - 1 and more, in order
        std::vector<std::uint64_t> wide_counts;      //!< counts of 255 and more, in order
        std::size_t max_bytes{combine_buffer_bytes}; //!< the most it keeps (0: always walk twice)
        //! memory for the result's table (a release_table() of an earlier result): combine() takes
        //! it, zeroed again, when it is large enough, instead of mapping fresh pages
        zeroed_memory spare_table;
    };
    /*! \brief Called by combine() as its walk passes an input's words: (input index, words it will
     * not read again), a few hundred KiB at a time (a mapped input can give their pages back). */
    using consumed_fn = std::function<void(std::size_t, std::span<std::uint64_t const>)>;

    /*! \brief A set operation over filters of equal key widths, built as merge() is (k-way
     * walk in fingerprint order, sized for the result). Counts below `min_count` are as absent.
     * unite: counts added; intersect: fingerprints of every input, the smallest count; subtract:
     * the first input's fingerprints that no other input holds, with their counts; subtract_counts:
     * the first input's count minus the others' summed counts, where positive. `scratch`
     * (optional): the calling thread's reusable buffer for the result of the first pass. `consumed`
     * (optional): told of each input's words as the walk passes them (called on the calling
     * thread). Thread safety: the inputs are only read; several threads may combine at once, each
     * with its own scratch. \throws as merge(). */
    [[nodiscard]] static quotient_filter combine(std::span<quotient_filter const * const> inputs,
                                                 set_operation op, std::uint64_t min_count = 1,
                                                 combine_scratch * scratch = nullptr,
                                                 consumed_fn const & consumed = {});
    /*! \brief The memory of this filter's table (for combine_scratch::spare_table), leaving the
     * filter empty (as a moved-from one); empty for views. Thread safety: none on this filter. */
    [[nodiscard]] zeroed_memory release_table() noexcept;

    quotient_filter(quotient_filter &&) noexcept;
    quotient_filter & operator=(quotient_filter &&) noexcept;
    quotient_filter(quotient_filter const &) = delete;
    quotient_filter & operator=(quotient_filter const &) = delete;
    ~quotient_filter();

    /*! \brief An owning, mutable deep copy (also of a view). */
    [[nodiscard]] quotient_filter clone() const;

    /*! \brief Add `count` occurrences of `key` (count 0 is a no-op). Grows the table when the load
     * would exceed max_load (if auto_grow). \returns full (and changes nothing) if there is no
     * room: growth disabled and every slot used, a growing filter at 0.95 load whose remainder is
     * already at min_remainder_bits, out of memory, or a view. \pre key < 2^key_bits. */
    insert_status insert(std::uint64_t key, std::uint64_t count = 1) noexcept;

    /*! \brief Remove up to `count` occurrences of `key`; the fingerprint is erased when its count
     * reaches 0. In fingerprint mode, removing a key that was never inserted may remove a colliding
     * key's occurrence (as in every counting filter). \returns false if the fingerprint is absent
     * (nothing changes). */
    bool remove(std::uint64_t key, std::uint64_t count = 1) noexcept;

    /*! \brief Stored count of the key's fingerprint (0 if absent). Exact in exact mode; never below
     * the true count in fingerprint mode. */
    [[nodiscard]] std::uint64_t count(std::uint64_t key) const noexcept;
    /*! \brief count(key) != 0. */
    [[nodiscard]] bool contains(std::uint64_t key) const noexcept { return count(key) != 0; }

    /*! \brief insert(keys[i], 1) for i in order, with software prefetch. Stops at the first `full`
     * and returns it (keys before it are inserted, the others are not). */
    insert_status insert_batch(std::span<std::uint64_t const> keys) noexcept;
    /*! \brief insert_batch(keys) that also reports, in old[i], the count of keys[i]'s fingerprint
     * just before keys[i] itself was added (so a key repeated in the batch sees its earlier
     * copies): a batched fetch-and-add. On `full`, old[] is set for the keys inserted. \pre old has
     * keys.size() elements. */
    insert_status insert_batch(std::span<std::uint64_t const> keys, std::uint64_t * old) noexcept;
    /*! \brief out[i] = count(keys[i]), with software prefetch. \pre out has keys.size() elements.
     */
    void count_batch(std::span<std::uint64_t const> keys, std::uint64_t * out) const noexcept;

    /*! \brief out[i] = the count of keys[i] in the sharded filter whose shard j is shards[j]: a key
     * x of key_bits bits belongs to shard x >> (key_bits - shard_bits), which sees its low key_bits
     * - shard_bits bits (as sharded_filter shards keys). One software pipeline runs across the
     * shards, so that the cache misses of consecutive keys overlap whatever shards they fall in
     * (count_batch per shard would restart its pipeline for every shard's few keys). \pre
     * shards.size() == 2^shard_bits; every key < 2^key_bits; out has keys.size() elements. Thread
     * safety: as count_batch. */
    static void count_sharded(std::span<quotient_filter const> shards, unsigned key_bits,
                              unsigned shard_bits, std::span<std::uint64_t const> keys,
                              std::uint64_t * out) noexcept;

    /*! \brief count_batch(keys, out) that visits the keys in table order when that pays
     * (ordered_batch()): a stable counting sort by table region (about order_region_bytes each, at
     * most 4096 regions), so that the pipeline walks the table from front to back and reuses a
     * block's cache lines for all the keys that fall in it instead of missing once per key. Same
     * results as count_batch(keys, out). Never throws; it may grow `scratch` (and keeps the input
     * order if that fails). Thread safety: as count_batch, with one scratch per thread. */
    void count_batch(std::span<std::uint64_t const> keys, std::uint64_t * out,
                     batch_scratch & scratch) const noexcept;
    /*! \brief insert_batch(keys, old) in table order when that pays (see the count_batch overload);
     * old may be null. When it returns ok, the table and old[] are those of insert_batch(keys,
     * old): equal fingerprints keep their input order, and the table does not depend on the order
     * of insertion. On `full`, the filter keeps everything it held plus an unspecified subset of
     * the batch (not a prefix), and old[] is set only for those keys. Thread safety: as
     * insert_batch, with one scratch per thread. */
    insert_status insert_batch(std::span<std::uint64_t const> keys, std::uint64_t * old,
                               batch_scratch & scratch) noexcept;
    /*! \brief Whether the scratch overloads visit a batch of n keys in table order: the table is
     * larger than scratch.min_table_bytes and spans more than one region of about
     * order_region_bytes, and the batch has at least one key per order_min_density blocks (sparser
     * batches share few cache lines). */
    [[nodiscard]] bool ordered_batch(std::size_t n, batch_scratch const & scratch) const noexcept;
    /*! \brief insert(key, count) that may run concurrently with other insert_concurrent() calls on
     * this filter (and nothing else). Never grows: returns full when the table has no room left for
     * the key's cluster (or for a view). Statistics reflect these inserts once the threads are
     * joined. */
    insert_status insert_concurrent(std::uint64_t key, std::uint64_t count = 1) noexcept;

    /*! \brief Call fn(value, count) for every stored fingerprint in increasing order; value is the
     * original key in exact mode, the fingerprint (p bits) otherwise. */
    template <typename Fn> void for_each(Fn && fn) const
    {
        cursor c{*this};
        bool const ex = exact();
        while (c.next())
            fn(ex ? (c.fingerprint() >> shl_) : c.fingerprint(), c.count());
    }

    /*! \brief Rebuild with 2^new_q home slots (r = p - new_q), keeping every fingerprint and count.
     * \returns false (and changes nothing) if new_q is out of range, the data would not fit in
     * 2^new_q slots, or this is a view. \throws std::bad_alloc. */
    bool resize(unsigned new_q);
    /*! \brief Rebuild with `nslots` home slots (see with_slots), keeping every fingerprint and
     * count. \returns false (and changes nothing) if the geometry is invalid, the data would not
     * fit, or this is a view. \throws std::bad_alloc. */
    bool resize_slots(std::uint64_t nslots);
    /*! \brief Double the home slots (or, where the fingerprints are too narrow for that, grow to
     * the power of two below twice the slots). \returns false if neither is possible. */
    bool grow() { return can_grow() && resize_slots(grown_slots()); }
    /*! \brief Whether a larger table exists for these fingerprints (no allocation is tried). */
    [[nodiscard]] bool can_grow() const noexcept;
    /*! \brief Halve the home slots if the result stays within max_load (and a multiple of 64). */
    bool shrink();
    /*! \brief The fitted size of the contents: the fewest home slots (a multiple of 64) that hold
     * them within max_load, a function of the stored fingerprints and counts alone. \throws
     * std::bad_alloc. */
    [[nodiscard]] std::uint64_t fit_slots() const;
    /*! \brief Rebuild at fit_slots() (or the next multiple of 64 where the counters need a few more
     * slots): with slack 0 whenever that differs from the slots now, so that equal contents give
     * equal tables whatever size they grew to; with slack > 0 only when it saves more than that
     * fraction of the slots (a rebuild costs a pass over the table). Build and dedup call it before
     * saving. \returns whether it changed. \throws std::bad_alloc. */
    bool fit(double slack = 0.0);
    /*! \brief Rebuild with every count set to 1 (presence only), at the same home slots: each
     * fingerprint then takes one slot (call fit() afterwards to shrink the table). \returns
     * whether it changed (false if every count is already 1, or this is a view). \throws
     * std::bad_alloc. */
    bool drop_counts();
    /*! \brief The table bytes of this filter at `nslots` home slots (its fingerprint width). */
    [[nodiscard]] std::uint64_t bytes_at(std::uint64_t nslots) const noexcept;
    /*! \brief Make room for `incoming` more used slots without a table larger than `cap_bytes`: if
     * the table cannot hold them within max_load, even grown as far as the cap allows, forget()
     * down to what leaves that room. \returns the fingerprints forgotten (0: nothing changed).
     * Deterministic: a function of the contents, the table size and the arguments. \throws
     * std::bad_alloc (a rebuild of the table at its size). */
    std::uint64_t make_room(std::uint64_t cap_bytes, std::uint64_t incoming);
    /*! \brief Whether `incoming` more used slots fit within max_load of a table of at most
     * `cap_bytes` (grown as far as that allows), as make_room() would find without forgetting. */
    [[nodiscard]] bool has_room(std::uint64_t cap_bytes, std::uint64_t incoming) const noexcept;
    /*! \brief Keep the entries of the highest counts (ties: a hash of the fingerprint) so that at
     * most `target_used` slots are used, at the same home slots; the rest are forgotten (their
     * counts start again from zero). \returns the fingerprints forgotten. \throws std::bad_alloc.
     */
    std::uint64_t forget(std::uint64_t target_used);
    /*! \brief The position in a key of the bits that keep_sample() tests (the lowest bits that the
     * fingerprint holds). */
    [[nodiscard]] unsigned sample_shift() const noexcept { return shr_; }
    /*! \brief Keep only the entries whose keys have `level` zero bits at sample_shift() (a
     * 2^-level sample of the key space), at the same home slots. \returns the fingerprints
     * dropped. \pre level < 32. \throws std::bad_alloc */
    std::uint64_t keep_sample(unsigned level);

    /*! \brief Parameters stored in the file (see view()). */
    [[nodiscard]] std::vector<std::uint64_t> params() const;
    /*! \brief The whole table as little-endian words. */
    [[nodiscard]] std::span<std::uint64_t const> words() const noexcept
    {
        return {ctable_, nwords_};
    }
    /*! \brief bytes (table), slots (N), used slots, distinct fingerprints, total count, load,
     * estimated FPR (0 in exact mode, distinct / 2^p otherwise). */
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

    /*! \brief A fingerprint as the table stores it: (home slot << r) | remainder. The identity when
     * N = 2^q; increasing in the fingerprint either way. */
    [[nodiscard]] std::uint64_t slot_code(std::uint64_t const fp) const noexcept
    {
        if (!split_)
            return fp;
        std::uint64_t const a = fp >> low_bits_;
        // (a N) >> q and whether (a N) mod 2^q >= N, from one product with N shifted to the top of
        // a word
        wide const t = static_cast<wide>(a) * scaled_slots_;
        std::uint64_t const h = static_cast<std::uint64_t>(t >> 64);
        std::uint64_t const second = static_cast<std::uint64_t>(t) >= scaled_slots_ ? 1 : 0;
        return (h << r_) | (second << low_bits_) | (fp & low_mask_);
    }
    /*! \brief The table code of a key's fingerprint. */
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
    /*! \brief Fill the scratch with the batch's fingerprints in table order and their batch
     * indices. \returns false (use the input order) unless ordered_batch(keys.size(), scratch) and
     * the scratch could grow. */
    [[nodiscard]] bool order_batch(std::span<std::uint64_t const> keys,
                                   batch_scratch & scratch) const noexcept;
    /*! \brief The home slots of the table growth would make (0: it cannot grow); set by
     * set_geometry(). */
    [[nodiscard]] std::uint64_t grown_slots() const noexcept { return grown_slots_; }
    /*! \brief The used slots that max_load allows in the largest table growth reaches within
     * `cap_bytes` (this table's if it is larger). */
    [[nodiscard]] std::uint64_t room_within(std::uint64_t cap_bytes) const noexcept;
    /*! \brief Rebuild at the same home slots with the entries for which keep(fingerprint, count)
     * (quotient_filter_forget.cpp). \throws std::bad_alloc */
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
