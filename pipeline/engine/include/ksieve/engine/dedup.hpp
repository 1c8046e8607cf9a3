#pragma once
/*! \file
 * \brief dedup inside the batch engine: the serial definition (a read is known iff enough of its
 * k-mers were added by earlier novel reads) computed batch by batch, by in-order resolution
 * (dedup_resolver) or by speculation with roll-back (dedup_speculator). Both give exactly the
 * serial definition's classes and filter contents for any thread count.
 */
#include <cstdint>
#include <string>
#include <vector>

#include <ksieve/engine/engine.hpp>
#include <ksieve/engine/hit_set.hpp>
#include <ksieve/engine/stamp_table.hpp>
#include <ksieve/filters/quotient/prefiltered_filter.hpp>

namespace ksieve
{

/*! \brief Serial in-batch resolution for dedup: decides units in input order against the counts
 * before the batch (keys.values) plus what earlier novel units of the batch added, tracked per
 * collision key (the filter's shard and fingerprint), so that fingerprint collisions count exactly
 * as the filter would count them. Thread safety: one controlling thread; runs OpenMP regions
 * internally. */
class dedup_resolver
{
public:
    /*! \brief \param threads threads of the parallel pre-pass (0 counts as 1), started for the
     * calling thread (reserve_openmp_threads). \throws resource_error if they cannot be started. */
    explicit dedup_resolver(unsigned threads = 1);

    /*! \brief Decide the units of a batch by `rule` in input order (nothing is inserted: see the
     * class). \pre filter.growable(); keys.values hold the counts before the batch. \param
     * exact_hits false: results[u].hits of a unit that is known from the counts before the batch
     * alone may miss hits added inside the batch (classes are exact either way). \throws
     * std::bad_alloc */
    void resolve(any_filter const & filter, batch_keys const & keys, decision_rule const & rule,
                 bool exact_hits, std::vector<unit_result> & results);

private:
    std::uint64_t prepare(any_filter const & filter, batch_keys const & keys,
                          decision_rule const & rule, bool exact_hits);
    std::uint32_t keys_below(batch_keys const & keys, std::size_t u, decision_rule const & rule);
    std::uint32_t hits_added(batch_keys const & keys, std::size_t u, decision_rule const & rule,
                             std::uint32_t m) const;
    void track(batch_keys const & keys, std::size_t u, std::uint32_t m);

    // collision key -> count added inside the current batch (one cache line access per probe)
    detail::stamp_table table_;
    std::vector<std::uint64_t> cks_;         // per key below min_count: collision key
    std::vector<std::size_t> homes_;         // ... and its hash (home slot: hash & (capacity - 1))
    std::vector<std::uint32_t> hits_before_; // per unit: keys at min_count before the batch
    std::vector<std::uint64_t> need_;        // per unit: hits_needed()
    std::vector<std::uint32_t> slots_;       // per unit: indices of its keys below min_count
    unsigned threads_{1};
};

/*! \brief dedup of one batch by speculation, for filters with collision keys (quotient filters):
 * the same classes, and the same filter contents afterwards, as query() + dedup_resolver +
 * insert(), with fewer filter operations (a novel unit costs one per k-mer instead of a lookup and
 * an insert). The steps (docs/design.md, "Speculation"): a sample of every 16th k-mer predicts a
 * unit known, and its other k-mers confirm it in rounds of lookups (with min_count >= 2 in a
 * hit_set of the keys that reached min_count in earlier batches, which may take at most half the
 * filter's bytes, 16 MiB at least); every other unit is speculated novel and adds its k-mers at
 * once (any_filter::add_batch, which returns each k-mer's count before); then, in input order,
 * each speculated unit is decided, and one that turns out known is rolled back after the batch,
 * the counts seen by later units corrected by a small table of its k-mers.
 *
 * Classes are exact; results[u].hits is not (a known unit may count fewer, a novel unit with a
 * repeated k-mer more): where --report / --stats need exact hits, use query() + dedup_resolver +
 * insert(). Afterwards every k-mer's count equals the serial definition's; counts at or above
 * min_count are not capped (unlike insert() with skip_at). Thread safety: one controlling thread;
 * runs OpenMP regions internally. */
class dedup_speculator
{
public:
    /*! \brief \param threads threads of the parallel phases (0 counts as 1), started for the
     * calling thread (reserve_openmp_threads). \throws resource_error if they cannot be started. */
    explicit dedup_speculator(unsigned threads = 1);

    /*! \brief Decide the units of a batch by `rule` in input order and add the k-mers of the novel
     * ones to the filter (each occurrence adds 1). \pre filter.growable(); keys from
     * batch_engine::extract without a key range; no other thread uses the filter. \throws
     * full_error if the filter is full; std::bad_alloc (outside parallel regions). Memory: about 40
     * bytes per k-mer of the batch, whatever the number of threads. */
    void run(any_filter & filter, batch_keys const & keys, decision_rule const & rule,
             std::vector<unit_result> & results, std::string const & filter_name);

    /*! \brief Work done so far (for benchmarks and tests). Thread safety: a plain value. */
    struct counters
    {
        std::uint64_t lookups{0};           //!< keys looked up in the filter
        std::uint64_t hit_lookups{0};       //!< keys looked up in the set of hits instead
        std::uint64_t added{0};             //!< keys added speculatively
        std::uint64_t rolled_back_units{0}; //!< speculated units that turned out known
        std::uint64_t removed{0};           //!< keys removed again
    };
    /*! \brief The counters of the work done so far. */
    [[nodiscard]] counters const & work() const noexcept { return work_; }

private:
    // The steps of run(), in order (see the class comment and dedup_speculator.cpp).
    void choose_hit_lookups(any_filter const & filter, std::uint64_t min_count);
    void predict(any_filter const & filter, batch_keys const & keys, decision_rule const & rule);
    void confirm_predicted_known(any_filter const & filter, batch_keys const & keys,
                                 decision_rule const & rule, std::vector<unit_result> & results);
    void add_speculated(any_filter & filter, batch_keys const & keys, std::uint64_t min_count,
                        std::string const & filter_name);
    void count_speculated_hits(any_filter const & filter, batch_keys const & keys,
                               decision_rule const & rule);
    bool decide_in_order(any_filter const & filter, batch_keys const & keys,
                         decision_rule const & rule, std::vector<unit_result> & results);
    void remove_rolled_back(any_filter & filter, std::string const & filter_name);
    void learn_hits(any_filter const & filter, batch_keys const & keys, std::uint64_t min_count,
                    bool rolled_back);
    // Their parts.
    void drop_hit_keys();
    template <typename Take> std::size_t gather(std::size_t n, Take const & take);
    std::size_t gather_round(batch_keys const & keys, unsigned round);
    void settle_round(batch_keys const & keys, decision_rule const & rule,
                      std::vector<unit_result> & results);
    [[nodiscard]] std::uint32_t count_hits(batch_keys const & keys, std::size_t u,
                                           decision_rule const & rule) const noexcept;
    void make_exact(any_filter const & filter, batch_keys const & keys, std::size_t u,
                    detail::stamp_table & dup) noexcept;
    void make_exact_sorted(any_filter const & filter, batch_keys const & keys, std::size_t u);
    [[nodiscard]] std::uint32_t corrected_hits(any_filter const & filter, batch_keys const & keys,
                                               std::size_t u,
                                               decision_rule const & rule) const noexcept;
    void roll_back(any_filter const & filter, batch_keys const & keys, std::size_t u, bool first);
    [[nodiscard]] std::uint32_t rolled_back_copies(std::uint64_t ck) const noexcept;
    void lookup(any_filter const & filter, std::size_t n);
    void lookup_hits(any_filter const & filter, std::size_t n, std::uint64_t min_count);

    unsigned threads_{1};
    counters work_;
    std::vector<batch_engine_query_scratch> scratch_;
    std::vector<std::uint64_t> flat_keys_, flat_values_; // keys looked up, and their counts
    std::vector<std::uint64_t> flat_offset_;             // per unit: its first key in flat_keys_
    std::vector<std::uint32_t> hits_;          // per unit: hits before the batch / speculative hits
    std::vector<std::uint32_t> need_, looked_; // per predicted-known unit: hits_needed, looked up
    std::vector<std::uint32_t> active_;        // predicted-known units not decided yet
    std::vector<std::uint8_t> speculated_;     // per unit: 1 if its keys were added
    std::vector<std::uint8_t> exact_;          // per speculated unit: old_ without its own copies
    std::vector<std::uint8_t> pending_; // per unit: to be made exact after the parallel count
    std::vector<std::uint32_t> order_;  // a long unit's positions, sorted (make_exact_sorted)
    std::vector<std::uint64_t> old_;    // per key of a speculated unit: count seen
    std::vector<std::uint64_t> cks_;    // per key of an exact_ unit: collision key
    // speculated keys by shard, their positions, the shards' starts; per thread: keys per shard,
    // then positions
    std::vector<std::uint64_t> part_, part_pos_, start_;
    std::vector<std::vector<std::uint64_t>> part_count_;
    std::vector<detail::stamp_table> dups_;      // per thread: earlier copies inside a unit
    detail::stamp_table corrections_;            // keys of rolled-back units -> copies added
    std::vector<std::uint64_t> correction_bits_; // mix64(collision key) bits: maybe corrected
    std::vector<std::uint64_t> rollback_;        // keys to remove after the batch
    std::vector<std::uint64_t> candidates_;      // per shard: keys added with count min_count - 1
    std::vector<std::uint64_t> cand_start_;      // per shard: its first key in cand_keys_
    std::vector<std::uint64_t> cand_keys_;       // keys that may have reached min_count
    std::vector<std::uint8_t> cand_doubt_; // ... 1 if a rolled-back key shares its collision key
    // Keys whose count reached min_count before the batch (or a subset, where keys share their
    // fingerprints), learnt from the additions: used from a first batch on an empty filter while
    // min_count stays the same (and above 1) and the table within its memory cap.
    hit_set hit_keys_;
    std::uint64_t hit_keys_min_count_{0};
    bool use_hit_keys_{true};
};

/*! \brief Ends a batch of dedup with a prefilter: every shard of `filter` is committed
 * (prefiltered_filter::commit_shard), `threads` shards at a time. Thread safety: exclusive use of
 * the filter. */
void commit_round(prefiltered_filter & filter, unsigned threads);

} // namespace ksieve
