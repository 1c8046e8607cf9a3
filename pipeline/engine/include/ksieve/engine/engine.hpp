#pragma once
/*! \file
 * \brief The batch engine: cut the records of a batch into hashed canonical k-mers, query or insert
 * them shard by shard, and decide known / novel per unit (read or pair). Lookups that stop once a
 * unit's class is decided are in early_classify.hpp; classification starts in read_classifier.hpp.
 *
 * Work per batch, no lock per k-mer:
 * 1. keys: every thread hashes the k-mers of a contiguous range of units into one batch-wide array.
 * 2. query: each thread counting-sorts its own keys by shard and calls any_filter::count_batch once
 *    per shard (prefetching inside the filter), then scatters the counts back.
 * 3. insert (build, dedup): the keys to insert are counting-sorted by shard in unit order (stable:
 *    a shard's insertion order is the input order for any thread count), and every shard is
 *    inserted by exactly one thread.
 */
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <ksieve/engine/decision_rule.hpp>
#include <ksieve/engine/key_part_range.hpp>
#include <ksieve/engine/unit_result.hpp>
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/kmers/hyperloglog.hpp>
#include <ksieve/filters/kmers/low_complexity.hpp>
#include <ksieve/filters/kmers/sampling.hpp>
#include <ksieve/io/io.hpp>

namespace ksieve
{

/*! \brief Keys of a batch, unit by unit (filled by batch_engine::extract). Thread safety: a plain
 * value. */
struct batch_keys
{
    std::vector<std::uint64_t> keys; //!< hashed keys; unit u at [offset[u], offset[u] + count[u])
    std::vector<std::uint64_t> offset;
    std::vector<std::uint32_t> count;
    std::vector<std::uint64_t> values; //!< per key: the count found by query()
    [[nodiscard]] std::size_t units() const noexcept { return count.size(); }
};

/*! \brief Per-thread scratch of the engine's shard partition, reused between batches. Thread
 * safety: one thread at a time. */
struct batch_engine_query_scratch
{
    std::vector<std::uint64_t> part, result, counts, more;
    std::vector<std::uint32_t> index, unit;
    std::vector<std::size_t> start;
};

/*! \brief The k-mer start positions [begin, end) of a record that one unit of work owns: a whole
 * read (0, npos) or a window of a long record. With sampling, the minimizers of the windows of
 * valid k-mers that start in [begin, end) belong to the piece, so that the pieces of a record hold
 * exactly its minimizers. Thread safety: a plain value (a view of the record, which must outlive
 * it). */
struct sequence_piece
{
    std::string_view record;
    std::size_t begin{0};
    std::size_t end{static_cast<std::size_t>(-1)};
};

/*! \brief Per-thread scratch of key extraction, reused. Thread safety: one thread at a time. */
struct key_scratch
{
    //! canonical codes of a piece and its context, and their minimizer orders
    std::vector<std::uint64_t> keys, order;
    //! whole-record minimizers (for_each_record_minimizer)
    std::unique_ptr<minimizer_scratch> minimizers;
};

/*! \brief The batch engine (see file comment). Thread safety: one controlling thread per engine
 * (its const members too: they use the engine's scratch); it runs OpenMP regions of threads()
 * threads internally. */
class batch_engine
{
public:
    /*! \brief An engine of `threads` threads (0 counts as 1) for k-mers of `kmer`; starts its
     * OpenMP threads for the calling thread (reserve_openmp_threads). \param range only keys in
     * this part of the key space are produced (build --part); nullptr = all. \throws resource_error
     * if the threads cannot be started; error if kmer has a mask without sampling. */
    batch_engine(kmer_params const & kmer, unsigned threads,
                 key_part_range const * range = nullptr);
    ~batch_engine();
    batch_engine(batch_engine const &) = delete;
    batch_engine & operator=(batch_engine const &) = delete;

    /*! \brief Hash the k-mers of units: r1[i] (and r2[i] when r2 is non-null and non-empty), into
     * `out` (its arrays grow, never shrink). \throws std::bad_alloc */
    void extract(io::record_batch const & r1, io::record_batch const * r2, batch_keys & out) const;

    /*! \brief Hash the k-mers of record pieces, one unit per piece (for_each_window() cuts a long
     * record into pieces whose keys are exactly the record's). Memory stays bounded by the pieces'
     * total length. \throws std::bad_alloc */
    void extract_windows(std::span<sequence_piece const> windows, batch_keys & out) const;

    /*! \brief Adds the keys of `keys` (all units) to `sketch`, on the engine's threads (one sketch
     * each, merged into `sketch`: the same registers for any thread count). \pre `keys` from
     * extract() or extract_windows() of this engine. \throws std::bad_alloc */
    void add_to_sketch(batch_keys const & keys, hyperloglog & sketch) const;

    /*! \brief fn(piece) for the pieces of `seq`: `window` k-mer start positions each, so that every
     * k-mer position of `seq` lies in exactly one piece (an empty `seq` gives one empty piece).
     * \pre window > 0. */
    template <typename Fn>
    void for_each_window(std::string_view const seq, std::size_t const window, Fn && fn) const
    {
        std::size_t const k = kmer_.k;
        for (std::size_t start = 0; start == 0 || start + k <= seq.size(); start += window)
            fn(sequence_piece{seq, start, start + window});
    }

    /*! \brief fn(key) for the hashed keys of a piece in sequence order: every valid k-mer, or with
     * sampling (kmer_params::window > 1) the minimizers that belong to the piece, less the
     * low-complexity ones where kmer_params::dust_threshold is set; no key range applied.
     * \throws std::bad_alloc only while `s` grows. */
    template <typename Fn>
    void for_each_key(sequence_piece const & piece, key_scratch & s, Fn && fn) const
    {
        std::string_view const seq = piece.record;
        std::size_t const k = kmer_.k;
        std::size_t const begin = std::min(piece.begin, seq.size());
        std::size_t const end =
            std::min(piece.end, seq.size() < k ? std::size_t{0} : seq.size() - k + 1);
        if (!kmer_.sampled())
        {
            if (begin < end)
                scanner_.for_each(seq.substr(begin, end - begin + k - 1),
                                  [&](std::size_t, std::uint64_t const code) noexcept
                                  { fn(hasher_(code)); });
            return;
        }
        if (piece.begin == 0 && piece.end >= seq.size() &&
            kmer_.window <= minimizer_scratch::ring_size)
        { // a whole record: one pass, no per-record arrays
            if (!s.minimizers)
                s.minimizers = std::make_unique<minimizer_scratch>();
            for_each_record_minimizer(scanner_, seq, kmer_.window, kmer_.seed, *s.minimizers,
                                      [&](std::uint64_t const code) noexcept
                                      {
                                          if (!low_complexity(code, kmer_.k, kmer_.dust_threshold))
                                              fn(hasher_(code));
                                      });
            return;
        }
        std::size_t own_first = 0, own_last = 0;
        std::size_t const n = sampled_context(piece, s, own_first, own_last);
        for_each_minimizer(s.order.data(), n, kmer_.window, own_first, own_last,
                           [&](std::size_t const i) noexcept
                           {
                               if (!low_complexity(s.keys[i], kmer_.k, kmer_.dust_threshold))
                                   fn(hasher_(s.keys[i]));
                           });
    }

    /*! \brief values[j] = max over filters of count(keys[j]) (0 = absent everywhere).
     * \pre constructed without a key range (keys of consecutive units are contiguous); no filter is
     * modified meanwhile. \throws std::bad_alloc */
    void query(std::span<any_filter const * const> filters, batch_keys & keys) const;

    /*! \brief Classify every unit by `rule` against keys.values (filled by query()). No exceptions
     * other than std::bad_alloc (results grows). */
    void decide(batch_keys const & keys, decision_rule const & rule,
                std::vector<unit_result> & results) const;

    /*! \brief Insert the keys of the units (those not known in *only_novel where it is given) into
     * a mutable filter. \param skip_at if > 0, keys whose count before the batch (keys.values) is
     * already >= skip_at are not inserted (dedup without --save-filter: such counts all mean
     * "hit"). \pre no other thread uses the filter. \throws full_error if the filter is full;
     * std::bad_alloc */
    void insert(any_filter & filter, batch_keys const & keys,
                std::vector<unit_result> const * only_novel, std::string const & filter_name,
                std::uint64_t skip_at = 0);

    /*! \brief dedup, read by read, for filters without collision keys (Bloom, cuckoo): decide each
     * unit by `rule` against the filter, then insert its keys if novel (the serial definition). A
     * k-mer is a hit iff the filter holds it: rule.min_count is not used (dedup takes only 1 with
     * these filters). \pre no other thread uses the filter. \throws full_error */
    void dedup_serial(any_filter & filter, batch_keys const & keys, decision_rule const & rule,
                      std::vector<unit_result> & results, std::string const & filter_name) const;

    /*! \brief The threads of the engine's parallel regions. */
    [[nodiscard]] unsigned threads() const noexcept { return threads_; }
    /*! \brief The k-mer parameters of the keys. */
    [[nodiscard]] kmer_params const & kmer() const noexcept { return kmer_; }
    /*! \brief The scanner of the k-mers' canonical codes. */
    [[nodiscard]] kmer_scanner const & scanner() const noexcept { return scanner_; }
    /*! \brief The hash of a canonical code into a key. */
    [[nodiscard]] kmer_hasher const & hasher() const noexcept { return hasher_; }

private:
    // Sampling: s.keys / s.order = the canonical codes of the valid k-mers of the piece and its
    // context (one valid k-mer before its own positions, window - 1 after them, or up to the
    // record's ends), [own_first, own_last) those at its own positions. \returns their number.
    std::size_t sampled_context(sequence_piece const & piece, key_scratch & s,
                                std::size_t & own_first, std::size_t & own_last) const;

    // sequences(u, fn) calls fn(piece) for each piece of unit u (one, or two for a pair).
    template <typename Sequences>
    void extract_units(std::size_t n, Sequences const & sequences, batch_keys & out) const;

    kmer_params kmer_;
    kmer_scanner scanner_;
    kmer_hasher hasher_;
    unsigned threads_;
    key_part_range range_;
    bool use_range_; // a range of more than one part: keys outside it are dropped
    // per-thread scratch, reused between batches (no allocation in steady state)
    mutable std::vector<batch_engine_query_scratch> scratch_;
    mutable std::vector<key_scratch> key_scratch_;
    mutable std::vector<hyperloglog> sketches_; // add_to_sketch
    // insert(): keys by shard, shard starts, per thread keys per shard, then positions
    std::vector<std::uint64_t> part_keys_, part_start_;
    std::vector<std::vector<std::uint64_t>> part_count_;
};

} // namespace ksieve
