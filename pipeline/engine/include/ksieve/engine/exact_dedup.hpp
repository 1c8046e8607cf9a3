#pragma once
/*! \file
 * \brief Exact duplicates (`dedup --exact`): 64-bit keys of whole sequences (a read, or both mates
 * of a pair) on one strand or on both, and the decision, in input order, of which reads repeat an
 * earlier one, against a filter of the keys of the reads kept.
 *
 * A sequence is hashed as its upper-case form (a and A are one base); with both strands its key is
 * the smaller of the hashes of that form and of its reverse complement (A/T, C/G and the IUPAC
 * codes R/Y, K/M, B/V, D/H complemented; S, W, N and every other byte are their own complement). A
 * pair's key combines its mates' forward hashes: in order on one strand; on both, in either order,
 * since the fragment read from its other strand gives the same mates swapped.
 */
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <ksieve/engine/batch_decider.hpp>
#include <ksieve/engine/dedup.hpp>
#include <ksieve/engine/dedup_budget.hpp>
#include <ksieve/engine/engine.hpp>
#include <ksieve/engine/stream.hpp>
#include <ksieve/engine/unit_result.hpp>
#include <ksieve/filters/common/any_filter.hpp>
#include <ksieve/io/io.hpp>

namespace ksieve
{

/*! \brief How sequences are compared. A plain value. */
struct sequence_key_options
{
    bool both_strands{true}; //!< a reverse complement (a pair: the mates swapped) counts as equal
    std::uint64_t seed{default_hash_seed}; //!< seed of the hash (any value)
};

/*! \brief The 64-bit hash of the upper-case form of `seq`, or (reverse) of its reverse complement:
 * sequence_hash(s, seed, true) == sequence_hash(rc(s), seed, false). Two different forms give equal
 * hashes with probability about 2^-64. Pure; allocates nothing; thread-safe. */
[[nodiscard]] std::uint64_t sequence_hash(std::string_view seq, std::uint64_t seed,
                                          bool reverse) noexcept;

/*! \brief The key of a read: sequence_hash of its sequence, with both strands the smaller of the
 * forward and reverse hashes. Pure; noexcept; thread-safe. */
[[nodiscard]] std::uint64_t read_key(std::string_view seq,
                                     sequence_key_options const & options) noexcept;

/*! \brief The key of a pair: a hash of its mates' forward hashes, in order on one strand, the
 * smaller first with both strands. It equals read_key of a read with probability about 2^-64.
 * Pure; thread-safe. */
[[nodiscard]] std::uint64_t pair_key(std::string_view mate1, std::string_view mate2,
                                     sequence_key_options const & options) noexcept;

/*! \brief The k-mer parameters of a filter of sequence keys: 64-bit keys (k = 32, every key), the
 * seed of `options`, canonical iff both strands. */
[[nodiscard]] kmer_params sequence_key_params(sequence_key_options const & options) noexcept;

/*! \brief dedup --exact, batch by batch: a unit (read or pair) is known iff its key is in the
 * filter (the keys of all earlier novel units) or equals, as the filter tells keys apart, the key
 * of an earlier novel unit of its batch; the keys of novel units are then inserted. Exactly that
 * read-by-read definition for every thread count; results[u] = {kmers 1, hits 1 if known else 0}.
 * Per batch: keys hashed on all threads, looked up shard by shard, decided in input order
 * (dedup_resolver), novel keys inserted shard by shard; no lock or allocation per read.
 * Thread safety: one controlling thread; it runs OpenMP regions of `threads` threads internally. */
class exact_deduplicator final : public batch_decider
{
public:
    /*! \brief Dedup into `filter` (its name in errors: filter_name), within `budget` where one is
     * given: a batch that could push the filter past it first samples the keys (dedup_budget::
     * make_room), and a unit whose key is outside the sample is novel and not remembered. \param
     * threads threads of the parallel phases (0 counts as 1), started for the calling thread. \pre
     * filter.growable() (a quotient filter) with the key parameters sequence_key_params(options);
     * the filter (and budget) outlive this object and no other thread uses the filter. \throws
     * resource_error if the threads cannot be started. */
    exact_deduplicator(sequence_key_options const & options, unsigned threads, any_filter & filter,
                       std::string filter_name, dedup_budget * budget = nullptr);

    /*! \brief Decide the units of a batch (item.r1[u], with item.r2[u] when r2 is not empty) into
     * item.results and insert the keys of the novel ones into the filter. \pre r2 empty or
     * r2.size() == r1.size(). \throws full_error naming the filter if it cannot grow;
     * std::bad_alloc */
    void decide(work_item & item) override;

private:
    void hash_units(io::record_batch const & r1, io::record_batch const & r2);

    sequence_key_options options_;
    any_filter & filter_;
    std::string filter_name_;
    dedup_budget * budget_;
    batch_engine engine_;
    dedup_resolver resolver_;
    batch_keys keys_;
};

} // namespace ksieve
