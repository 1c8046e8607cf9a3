#pragma once
/*! \file
 * \brief cuckoo_filter: partial-key cuckoo hashing with buckets of 4 fingerprints (Fan, Andersen,
 * Kaminsky, Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014), one shard
 * of a sharded_filter (see shard_filter in filter.hpp).
 *
 * Design (hashing, fingerprint width, size, insert / remove semantics): docs/design.md, "Filter
 * internals"; the words' layout: docs/file_format.md, section 5.5.
 *
 * Thread safety: const members may run concurrently; mutating members (insert*, remove) need
 * exclusive access. A view (over mmap'd words) is read-only: mutating it is a precondition
 * violation.
 */
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <ksieve/filters/common/filter.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

namespace ksieve
{

/*! \brief Cuckoo filter shard (buckets of 4, 8..16-bit fingerprints, victim slot, delete).
 * Move-only; clone() makes a copy. Satisfies shard_filter. */
class cuckoo_filter
{
public:
    /*! \brief Filter type id stored in filter files. */
    static constexpr filter_type type_id = filter_type::cuckoo;
    /*! \brief Slots per bucket (b). */
    static constexpr unsigned bucket_size = 4;
    /*! \brief Smallest and largest fingerprint width in bits. */
    static constexpr unsigned min_fingerprint_bits = 8;
    static constexpr unsigned max_fingerprint_bits = 16;
    /*! \brief Largest load that create() sizes for (expected keys / slots). */
    static constexpr double max_design_load = 0.95;
    /*! \brief Evictions tried before an insert reports full. With random keys and 2^24 buckets the
     * first failure came at 95.6% load with Fan et al.'s plain random walk and 500 kicks (too close
     * to the 95% design load), at 97.0% with the one-step look-ahead used here and 500 kicks, at
     * 97.6% with 2000. A failing insert costs up to 2000 steps of about one cache miss, once (then
     * the victim slot is occupied and further inserts report full at once). */
    static constexpr unsigned default_max_kicks = 2000;
    /*! \brief Largest bucket count of a shard: 2^max_bucket_bits (more shards beyond that). */
    static constexpr unsigned max_bucket_bits = 32;
    /*! \brief Smallest eps that 16-bit fingerprints can honour: 2b / 2^16. */
    static constexpr double min_fpr = 2.0 * bucket_size / 65536.0;

    /*! \brief Fingerprint width for a target false-positive rate: max(8, ceil(log2(8 / eps))).
     * \throws usage_error if eps is 0 (exact mode: needs --type qf), below min_fpr, >= 0.5 or not a
     * number. */
    [[nodiscard]] static unsigned fingerprint_bits_for(double eps);
    /*! \brief log2 of the number of buckets that holds `expected` keys at load <= max_design_load.
     * \throws usage_error if expected is 0 (the filter cannot grow: needs --expected) or needs more
     * than 2^max_bucket_bits buckets. */
    [[nodiscard]] static unsigned bucket_bits_for(std::uint64_t expected);

    /*! \brief Empty filter for `expected` keys (of this shard) with fingerprints chosen from
     * cfg.fpr. cfg.max_load / cfg.auto_grow are ignored (the table has a fixed size). \throws
     * usage_error as fingerprint_bits_for / bucket_bits_for. */
    [[nodiscard]] static cuckoo_filter create(filter_config const & cfg, unsigned key_bits,
                                              std::uint64_t expected);
    /*! \brief Empty filter with explicit geometry (default_max_kicks). \pre 8 <= fp_bits <= 16,
     * bucket_bits <= 32. \throws usage_error otherwise. */
    [[nodiscard]] static cuckoo_filter with_geometry(unsigned fp_bits, unsigned bucket_bits,
                                                     unsigned key_bits = 62);
    /*! \brief Read-only filter over words it does not own (mmap'd file payload); they must outlive
     * it. \throws format_error (message without file name) if params are malformed or disagree with
     * the words (count, unused bits, victim, key_bits). Never reads outside `words`. */
    [[nodiscard]] static cuckoo_filter view(std::span<std::uint64_t const> params,
                                            std::span<std::uint64_t const> words,
                                            unsigned key_bits);

    cuckoo_filter(cuckoo_filter &&) noexcept = default;
    cuckoo_filter & operator=(cuckoo_filter &&) noexcept = default;
    cuckoo_filter(cuckoo_filter const &) = delete;
    cuckoo_filter & operator=(cuckoo_filter const &) = delete;
    ~cuckoo_filter() = default;

    /*! \brief Insert (set semantics, see file comment). `count` is ignored except that 0 inserts
     * nothing. \returns ok if key is now stored, full if the kicks ran out (key and all earlier
     * keys are still stored, the victim slot is now occupied) or the victim slot was already
     * occupied (key not stored). \pre key < 2^key_bits; not a view. */
    insert_status insert(std::uint64_t key, std::uint64_t count = 1) noexcept;
    /*! \brief Insert one more copy of key's fingerprint even if it is present (multiset semantics;
     * at most 2b = 8 copies fit). Returns as insert(). \pre as insert. */
    insert_status insert_copy(std::uint64_t key) noexcept;
    /*! \brief 1 if key's fingerprint is present (key possibly inserted), else 0 (certainly not). */
    [[nodiscard]] std::uint64_t count(std::uint64_t key) const noexcept;
    /*! \brief count(key) != 0. */
    [[nodiscard]] bool contains(std::uint64_t const key) const noexcept { return count(key) != 0; }
    /*! \brief Remove one copy of key's fingerprint. \returns false if it was not present (nothing
     * changed). If the victim slot is occupied, tries to place the victim again afterwards. \pre
     * key was inserted and not removed since (else another key may be lost); not a view. */
    bool remove(std::uint64_t key) noexcept;

    /*! \brief insert(key) for every key, with both buckets of keys ahead prefetched. Stops at the
     * first full and returns full (keys before it are stored; the one that got full is stored too
     * unless the victim slot was occupied already). \pre not a view. */
    insert_status insert_batch(std::span<std::uint64_t const> keys) noexcept;
    /*! \brief out[i] = count(keys[i]), with prefetching. \pre out has keys.size() elements. */
    void count_batch(std::span<std::uint64_t const> keys, std::uint64_t * out) const noexcept;

    /*! \brief Per-shard parameters as stored in the file (see file comment). */
    [[nodiscard]] std::vector<std::uint64_t> params() const;
    /*! \brief The table words (little-endian bit string, see file comment). */
    [[nodiscard]] std::span<std::uint64_t const> words() const noexcept { return data_; }
    /*! \brief An owning, mutable copy (also of a view). */
    [[nodiscard]] cuckoo_filter clone() const;
    /*! \brief bytes, slots (4 * buckets), used = entries (victim included), distinct = total_count
     * = entries (distinct fingerprints per bucket pair under set semantics), load, estimated_fpr at
     * this load. */
    [[nodiscard]] filter_stats stats() const noexcept;

    [[nodiscard]] unsigned fingerprint_bits() const noexcept { return fp_bits_; }
    [[nodiscard]] unsigned bucket_bits() const noexcept { return bucket_bits_; }
    [[nodiscard]] std::uint64_t capacity() const noexcept
    {
        return std::uint64_t{bucket_size} << bucket_bits_;
    }
    [[nodiscard]] unsigned key_bits() const noexcept { return key_bits_; }
    /*! \brief Stored fingerprints, the victim included. */
    [[nodiscard]] std::uint64_t size() const noexcept { return entries_; }
    /*! \brief True while a failed insert's last evicted fingerprint waits in the victim slot. */
    [[nodiscard]] bool victim_used() const noexcept { return victim_used_; }
    /*! \brief True for a view over words it does not own. */
    [[nodiscard]] bool is_view() const noexcept { return mut_ == nullptr; }

private:
    struct hashed
    {
        std::uint64_t i1;
        std::uint64_t fp;
    };

    cuckoo_filter() = default;
    void init_geometry(unsigned fp_bits, unsigned bucket_bits, unsigned key_bits,
                       unsigned max_kicks) noexcept;
    static std::uint64_t words_for(unsigned fp_bits, unsigned bucket_bits) noexcept;

    [[nodiscard]] hashed hash(std::uint64_t key) const noexcept;
    [[nodiscard]] std::uint64_t alt_index(std::uint64_t i, std::uint64_t fp) const noexcept;
    [[nodiscard]] std::uint64_t load_bucket(std::uint64_t i) const noexcept;
    void store_bucket(std::uint64_t i, std::uint64_t bucket) noexcept;
    // non-zero iff fp is one of the bucket's 4 fingerprints
    [[nodiscard]] std::uint64_t bucket_match(std::uint64_t bucket, std::uint64_t fp) const noexcept;
    // whether fp is in bucket i1 or i2 = alt_index(i1, fp), or in the victim slot for them
    [[nodiscard]] bool present(std::uint64_t i1, std::uint64_t i2, std::uint64_t fp) const noexcept;
    bool try_put(std::uint64_t i, std::uint64_t fp) noexcept;
    insert_status place(std::uint64_t i1, std::uint64_t fp) noexcept;
    void prefetch(std::uint64_t i) const noexcept;
    std::uint64_t next_random() noexcept;

    memory_charge charge_;                // owned_'s bytes against the memory budget
    std::vector<std::uint64_t> owned_;    // storage (empty for a view)
    std::span<std::uint64_t const> data_; // the words (owned_ or mapped)
    std::uint64_t * mut_{nullptr};        // writable words, nullptr for a view
    unsigned fp_bits_{8};
    unsigned bucket_bits_{0};
    unsigned key_bits_{62};
    unsigned max_kicks_{default_max_kicks};
    std::uint64_t index_mask_{0};
    std::uint64_t fp_mask_{0};     // 2^f - 1
    std::uint64_t bucket_mask_{0}; // 4f low bits
    std::uint64_t lanes_lo_{0};    // 1 in the low bit of each of the 4 lanes
    std::uint64_t lanes_hi_{0};    // 1 in the high bit of each lane
    std::uint64_t entries_{0};
    bool victim_used_{false};
    std::uint64_t victim_fp_{0};
    std::uint64_t victim_index_{0};
    std::uint64_t rng_{0};
};

static_assert(shard_filter<cuckoo_filter>);

} // namespace ksieve
