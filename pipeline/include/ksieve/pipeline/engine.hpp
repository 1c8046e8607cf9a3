#pragma once
/*! \file
 * \brief The batch engine: cut the records of a batch into hashed canonical k-mers, query or insert them
 * shard by shard, and decide known / novel per unit (read or pair).
 *
 * Work per batch, no lock per k-mer:
 * 1. keys: every thread hashes the k-mers of a contiguous range of units into one batch-wide array
 *    (unit u owns keys [offset[u], offset[u] + kmers[u])).
 * 2. query: each thread counting-sorts its own keys by shard and calls any_filter::count_batch once per
 *    shard (prefetching inside the filter), then scatters the counts back.
 * 3. insert (build, dedup): the keys to insert are counting-sorted by shard in unit order (stable, so the
 *    insertion order inside a shard is the input order: deterministic for any thread count), and every
 *    shard is inserted by exactly one thread.
 *
 * Thread safety: a batch_engine is used by one controlling thread; it runs OpenMP regions internally.
 */
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <ksieve/filters/sharded_filter.hpp>
#include <ksieve/pipeline/commands.hpp>
#include <ksieve/pipeline/hit_set.hpp>
#include <ksieve/pipeline/io.hpp>

namespace ksieve
{

/*! \brief Per-unit result. */
struct unit_result
{
    std::uint32_t kmers{0};
    std::uint32_t hits{0};
    bool known{false};
};

/*! \brief Keys of a batch, unit by unit. */
struct batch_keys
{
    std::vector<std::uint64_t> keys;    //!< hashed keys; unit u at [offset[u], offset[u] + count[u])
    std::vector<std::uint64_t> offset;
    std::vector<std::uint32_t> count;
    std::vector<std::uint64_t> values;  //!< per key: the count found (query) -- same indexing as keys
    [[nodiscard]] std::size_t units() const noexcept { return count.size(); }
};

/*! \brief Known iff kmers > 0 and hits >= fraction * kmers. */
[[nodiscard]] inline bool is_known(std::uint64_t const kmers, std::uint64_t const hits, double const fraction) noexcept
{
    // hits / kmers is correctly rounded, so a ratio equal to the user's decimal F compares equal to it.
    return kmers > 0 && static_cast<double>(hits) / static_cast<double>(kmers) >= fraction;
}

/*! \brief Per-thread scratch of the engine's shard partition (reused between batches: no allocation in
 * steady state). */
struct batch_engine_query_scratch
{
    std::vector<std::uint64_t> part, result;
    std::vector<std::uint32_t> index;
    std::vector<std::size_t> start;
};

/*! \brief The fewest hits that make a unit of `kmers` k-mers known (kmers + 1 if none does). */
[[nodiscard]] std::uint64_t hits_needed(std::uint64_t kmers, double fraction) noexcept;

/*! \brief The batch engine (see file comment). */
class batch_engine
{
public:
    /*! \brief \param range only keys in this range are produced (build --shard); nullptr = all. */
    batch_engine(kmer_params const & kmer, unsigned threads, shard_range const * range = nullptr);

    /*! \brief Hash the k-mers of units: r1[i] (and r2[i] when r2 is non-null and non-empty). */
    void extract(io::record_batch const & r1, io::record_batch const * r2, batch_keys & out) const;

    /*! \brief Hash the k-mers of sequence windows, one unit per window (for_each_window() cuts a long record
     * into windows whose k-mers are exactly the record's). Memory stays bounded by the windows' total length. */
    void extract_windows(std::span<std::string_view const> windows, batch_keys & out) const;

    /*! \brief fn(w) for the windows of `seq`: at most `window + k - 1` bases each, overlapping by k - 1, so
     * that every k-mer position of `seq` lies in exactly one window (an empty `seq` gives one empty window).
     * \pre window > 0. */
    template <typename Fn>
    void for_each_window(std::string_view const seq, std::size_t const window, Fn && fn) const
    {
        std::size_t const k = kmer_.k;
        for (std::size_t start = 0; start == 0 || start + k <= seq.size(); start += window)
            fn(seq.substr(start, window + k - 1));
    }

    /*! \brief values[j] = max over filters of count(keys[j]) (0 = absent everywhere).
     * \pre constructed without a key range (keys of consecutive units are contiguous). */
    void query(std::span<any_filter const * const> filters, batch_keys & keys) const;

    /*! \brief Hash, query and classify the units of a batch, stopping each unit's lookups as soon as its
     * class is decided (no more hits can make it novel, or no more misses can make it known). The classes
     * equal query() + decide(); results[u].kmers is exact, results[u].hits is only a lower bound (the hits
     * found before the decision). Keys are looked up in rounds over chunks of units: each round asks, per
     * undecided unit, for the fewest further k-mers that could decide it, taken in a spread order (every 8th
     * position first), so that a run of k-mers broken by one sequencing error rarely delays the decision. A
     * unit of more than early_window_kmers k-mers (a contig, a chromosome) is looked up in windows of that
     * many k-mers instead, in sequence order, so that memory does not grow with the longest record. \pre
     * constructed without a key range. */
    void classify_early(io::record_batch const & r1, io::record_batch const * r2,
                        std::span<any_filter const * const> filters, std::uint64_t min_count, double fraction,
                        std::vector<unit_result> & results) const;

    /*! \brief classify_early() looks up units of more k-mers than this in windows of this many k-mers. */
    static constexpr std::uint32_t early_window_kmers = std::uint32_t{1} << 18;

    /*! \brief Classify every unit against values (hit iff value >= min_count). */
    void decide(batch_keys const & keys, std::uint64_t min_count, double fraction,
                std::vector<unit_result> & results) const;

    /*! \brief Insert the keys of the selected units (all units if only_novel is null, else the units not
     * known) into a mutable filter.
     * \param skip_at if > 0, keys whose count before the batch (keys.values) is already >= skip_at are not
     * inserted: for dedup without --save-filter, where counts at or above min_count all mean "hit".
     * \throws full_error if the filter is full. */
    void insert(any_filter & filter, batch_keys const & keys, std::vector<unit_result> const * only_novel,
                std::string const & filter_name, std::uint64_t skip_at = 0);

    /*! \brief dedup, read by read, for filters without collision keys (Bloom, cuckoo): query each unit's
     * keys against the filter, decide, insert the keys of novel units. Serial; exact serial definition.
     * \throws full_error */
    void dedup_serial(any_filter & filter, batch_keys const & keys, double fraction,
                      std::vector<unit_result> & results, std::string const & filter_name) const;

    [[nodiscard]] unsigned threads() const noexcept { return threads_; }
    [[nodiscard]] kmer_params const & kmer() const noexcept { return kmer_; }

private:
    kmer_params kmer_;
    template <typename Sequences>
    void extract_units(std::size_t n, Sequences const & sequences, batch_keys & out) const;

    kmer_scanner scanner_;
    kmer_hasher hasher_;
    unsigned threads_;
    shard_range range_{};
    bool use_range_{false};
    // per-thread query scratch, reused between batches (no allocation in steady state)
    using query_scratch = batch_engine_query_scratch;
    mutable std::vector<query_scratch> scratch_;
    // per-thread classify_early scratch
    struct early_scratch
    {
        query_scratch q;
        std::vector<std::uint64_t> keys, qkeys, qvalues; // keys: canonical codes (hashed on lookup)
        std::vector<std::uint32_t> offset, count, need, hits, queried, active, next_active, qstart;
        std::vector<std::uint32_t> long_units; // units of more than early_window_kmers k-mers: in windows
    };
    mutable std::vector<early_scratch> early_;
    mutable std::vector<std::size_t> chunk_begin_;
    // insert scratch, reused between batches
    std::vector<std::uint64_t> part_keys_;
    std::vector<std::uint64_t> part_start_;
    std::vector<std::vector<std::uint64_t>> part_count_; // per thread: keys per shard, then positions
};

/*! \brief Serial in-batch resolution for dedup: decides units in input order against the state before
 * the batch (keys.values) plus what earlier novel units of the same batch added, tracked per collision key
 * (the filter's shard and fingerprint), so that fingerprint collisions count exactly as the filter would
 * count them. Exactly the serial definition of the contract. */
class dedup_resolver
{
public:
    /*! \brief \param threads threads of the parallel pre-pass (the in-order resolution itself is serial). */
    explicit dedup_resolver(unsigned const threads = 1) : threads_{threads < 1 ? 1u : threads} {}

    /*! \pre filter.collision_keys(); keys.values hold the counts before the batch.
     * \param exact_hits false: results[u].hits of a unit that is known from the counts before the batch
     * alone may miss hits added inside the batch (classes are exact either way). */
    void resolve(any_filter const & filter, batch_keys const & keys, std::uint64_t min_count, double fraction,
                 bool exact_hits, std::vector<unit_result> & results);

private:
    // open addressing table collision key -> count added inside the current batch (one cache line access
    // per probe); an entry is empty iff its stamp != epoch_
    struct entry
    {
        std::uint64_t key{0};
        std::uint32_t count{0};
        std::uint32_t stamp{0};
    };
    std::vector<entry> table_;
    std::vector<std::uint64_t> cks_;         // per key below min_count: collision key
    std::vector<std::size_t> homes_;         // ... and its hash (home slot: hash & (capacity - 1))
    std::vector<std::uint32_t> hits_before_; // per unit: keys at min_count before the batch
    std::vector<std::uint64_t> need_;        // per unit: hits_needed()
    std::vector<std::uint32_t> slots_;       // per unit: indices of its keys below min_count
    unsigned threads_{1};
    std::uint32_t epoch_{0};
};

/*! \brief dedup of one batch by speculation, for filters with collision keys (quotient filters): the same
 * classes, and the same filter contents afterwards, as query() + dedup_resolver + insert(), with fewer filter
 * operations (a novel unit costs one per k-mer instead of a lookup and an insert; on the 2 M-read benchmark
 * 250 M instead of 359 M).
 *
 * 1. Every 16th k-mer of each unit is looked up; units whose sample makes them known are *predicted known*,
 *    and their other k-mers are looked up in rounds (the fewest that could make the unit known, in a spread
 *    order; at most four rounds). A predicted-known unit with enough hits before the batch is known for
 *    certain (counts added inside the batch only raise counts). These lookups only ask "hit or not": with
 *    min_count >= 2 they go to a hit_set of the keys that have reached min_count, learnt from the additions
 *    of earlier batches (a key reaches it by an addition that returns min_count - 1); a plain hash table
 *    lookup is a fraction of a quotient-filter lookup. The set may take at most twice the filter's bytes
 *    (16 MiB at least), growth included.
 * 2. Every other unit (predicted novel, or not certain) is *speculated novel*: its k-mers are added to the
 *    filter at once, shard by shard in input order, by a batched fetch-and-add (any_filter::add_batch) that
 *    returns the count each k-mer had just before: the count it has in the serial definition, minus copies
 *    earlier in the same unit, as long as every earlier speculated unit really is novel.
 * 3. In input order (serial, O(1) per unit while speculation holds), each speculated unit is decided. One
 *    that turns out known had no right to add its k-mers: they are removed again after the batch, and the
 *    counts seen by later speculated units are corrected by a small table of those k-mers.
 *
 * Classes are exact; results[u].hits is not (a known unit may count fewer, a novel unit with a repeated
 * k-mer more): where --report / --stats need exact hits, use query() + dedup_resolver + insert(). Afterwards
 * every k-mer's count equals the serial definition's; counts at or above min_count are not capped (unlike
 * insert() with skip_at). Thread safety: one controlling thread; runs OpenMP regions internally. */
class dedup_speculator
{
public:
    /*! \brief \param threads threads of the parallel phases. */
    explicit dedup_speculator(unsigned threads = 1);

    /*! \brief Decide the units of a batch in input order and add the k-mers of the novel ones to the filter
     * (each occurrence adds 1).
     * \pre filter.collision_keys(); keys from batch_engine::extract without a key range.
     * \throws full_error if the filter is full. */
    void run(any_filter & filter, batch_keys const & keys, std::uint64_t min_count, double fraction,
             std::vector<unit_result> & results, std::string const & filter_name);

    /*! \brief Work done so far (for benchmarks and tests). */
    struct counters
    {
        std::uint64_t lookups{0};           //!< keys looked up in the filter
        std::uint64_t hit_lookups{0};       //!< keys looked up in the set of hits instead
        std::uint64_t added{0};             //!< keys added speculatively
        std::uint64_t rolled_back_units{0}; //!< speculated units that turned out known
        std::uint64_t removed{0};           //!< keys removed again
    };
    [[nodiscard]] counters const & work() const noexcept { return work_; }

private:
    void lookup(any_filter const & filter, std::size_t n);
    void lookup_hits(any_filter const & filter, std::size_t n, std::uint64_t min_count);
    void learn_hits(any_filter const & filter, batch_keys const & keys, std::uint64_t min_count,
                    bool rolled_back);
    struct entry
    {
        std::uint64_t key{0};
        std::uint32_t count{0};
        std::uint32_t stamp{0};
    };
    // open addressing (collision key -> count) with epoch stamps; grows to a power of two >= 2 * need
    struct stamp_table
    {
        std::vector<entry> slots;
        std::uint32_t epoch{0};
        void reset(std::size_t need);
        std::uint32_t & at(std::uint64_t key) noexcept; // the entry's count, inserted as 0 if absent
        [[nodiscard]] std::uint32_t find(std::uint64_t key) const noexcept;
    };
    unsigned threads_{1};
    counters work_;
    std::vector<batch_engine_query_scratch> scratch_;
    std::vector<std::uint64_t> flat_keys_, flat_values_; // keys looked up, and their counts
    std::vector<std::uint64_t> flat_offset_;             // per unit: its first key in flat_keys_
    std::vector<std::uint32_t> hits_;                    // per unit: hits before the batch / speculative hits
    std::vector<std::uint32_t> need_, looked_; // per predicted-known unit: hits_needed, keys looked up
    std::vector<std::uint32_t> active_;        // predicted-known units not decided yet
    std::vector<std::uint8_t> speculated_;               // per unit: 1 if its keys were added
    std::vector<std::uint8_t> exact_;                    // per speculated unit: old_ without its own copies
    std::vector<std::uint64_t> old_;                     // per key of a speculated unit: count seen
    std::vector<std::uint64_t> cks_;                     // per key of an exact_ unit: collision key
    std::vector<std::uint64_t> part_, part_pos_, start_; // speculated keys by shard, their positions
    std::vector<std::vector<std::uint64_t>> part_count_; // per thread: keys per shard, then positions
    std::vector<stamp_table> dups_;                      // per thread: earlier copies inside a unit
    stamp_table corrections_;                            // keys of rolled-back units -> copies added
    std::vector<std::uint64_t> correction_bits_;         // bitset over mix64(collision key): maybe corrected
    std::vector<std::uint64_t> rollback_;                // keys to remove after the batch
    std::vector<std::uint64_t> candidates_;              // per shard: keys added with count min_count - 1
    std::vector<std::uint64_t> remove_start_;            // per shard: first key to remove / learn
    std::vector<std::uint64_t> cand_keys_;               // keys that may have reached min_count
    std::vector<std::uint8_t> cand_doubt_; // ... 1 if a rolled-back key shares its collision key
    // Keys whose count had reached min_count before the batch (all of them, or a subset if other keys share
    // their fingerprints), learnt from the additions: for the lookups that only need "hit or not". Used
    // from a first batch on an empty filter for as long as min_count stays the same (and is above 1), and
    // the table stays within its memory cap.
    hit_set hit_keys_;
    std::uint64_t hit_keys_min_count_{0};
    bool use_hit_keys_{true};
};

} // namespace ksieve
