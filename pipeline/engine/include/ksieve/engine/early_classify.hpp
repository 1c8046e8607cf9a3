#pragma once
/*! \file
 * \brief Early-decision classify: the lookups of a unit (read or pair) stop as soon as its class is
 * decided, in rounds over chunks of units, and long records in windows of bounded memory.
 */
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <ksieve/engine/anchor_rescue.hpp>
#include <ksieve/engine/decision_rule.hpp>
#include <ksieve/engine/engine.hpp>
#include <ksieve/engine/unit_result.hpp>
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/io/io.hpp>

namespace ksieve
{

/*! \brief Classifies the units of batches against filters, stopping each unit's lookups as soon as
 * its class is decided (no more hits can make it novel, or no more misses can make it known). Its
 * classes equal batch_engine::query() + decide(). Thread safety: one thread at a time per
 * classifier; it runs OpenMP regions of the engine's threads internally. */
class early_classifier
{
public:
    /*! \brief A classifier on `engine`'s k-mers and threads. \pre the engine outlives the
     * classifier and was constructed without a key range. */
    explicit early_classifier(batch_engine const & engine);

    /*! \brief Hash, query and classify (by `rule`) the units of a batch: r1[u] (and (*r2)[u] when
     * r2 is non-null and non-empty). results[u].kmers is exact, results[u].hits only a lower bound
     * (the hits found before the decision), except for the units anchor_rescue looks up again.
     * Each round of lookups asks, per undecided unit of a chunk, for the fewest further k-mers that
     * could decide it or as many as it has asked so far, whichever is more, in a spread order
     * (every 8th position first), so that a run of k-mers broken by one sequencing error rarely
     * delays the decision. A unit of more than window_kmers k-mers (a contig, a chromosome) is
     * looked up in windows of that many k-mers in sequence order, so that memory does not grow
     * with the longest record. \pre no filter is modified meanwhile. \throws std::bad_alloc */
    void classify(io::record_batch const & r1, io::record_batch const * r2,
                  std::span<any_filter const * const> filters, decision_rule const & rule,
                  std::vector<unit_result> & results);

    /*! \brief classify() looks up units of more k-mers than this in windows of this many k-mers. */
    static constexpr std::uint32_t window_kmers = std::uint32_t{1} << 18;

private:
    // Per-thread scratch, reused between chunks and batches.
    struct scratch
    {
        batch_engine_query_scratch q;
        std::vector<std::uint64_t> keys, qkeys, qvalues; // keys: canonical codes (hashed on lookup)
        std::vector<std::uint32_t> offset, count, need, hits, queried, active, next_active, qstart;
        std::vector<std::uint32_t> long_units; // units of more than window_kmers k-mers: in windows
        std::vector<std::uint64_t> skeys;      // sampled: the chunk's minimizers, unit after unit
        key_scratch ks;
    };
    // One chunk of units and what it is asked.
    struct chunk
    {
        io::record_batch const & r1;
        io::record_batch const * r2; // null unless pairs
        std::size_t u0;              // first unit
        std::size_t m;               // units
        std::span<any_filter const * const> filters;
        decision_rule rule;
        // The sequence of unit i's mate 1, or with `mate2` (pairs only) of its mate 2.
        [[nodiscard]] std::string_view seq(std::size_t const i,
                                           bool const mate2 = false) const noexcept
        {
            return (mate2 ? *r2 : r1)[u0 + i].seq;
        }
    };
    // then every remaining k-mer of the undecided units at once
    static constexpr unsigned max_rounds = 16;

    void classify_chunk(scratch & s, chunk const & c, std::vector<unit_result> & results) const;
    void count_keys(scratch & s, chunk const & c) const;
    void add_minimizers(scratch & s, std::string_view seq, std::size_t & used) const;
    void drop_long_units(scratch & s, chunk const & c) const;
    void spread_keys(scratch & s, chunk const & c) const;
    void rounds(scratch & s, chunk const & c) const;
    static std::uint32_t next_lookups(scratch const & s, std::uint32_t i);
    void windowed_units(scratch & s, chunk const & c) const;
    void find_anchors(scratch & s, chunk const & c) const;

    batch_engine const & engine_;
    anchor_rescue rescue_;                 // units one hit short (sampled filters)
    std::vector<scratch> scratch_;         // per thread
    std::vector<std::size_t> chunk_begin_; // first unit of each chunk, then the batch's units
};

} // namespace ksieve
