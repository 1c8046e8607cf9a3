#pragma once
/*! \file
 * \brief anchor_rescue: the second look of classify at a read (or pair) that its sampled k-mers
 * left one hit short. Against a sampled filter a read is looked up by its own minimizers only; a
 * sequencing error changes the minimizers of the windows around it, so that an intact k-mer that
 * the host stored may not be one the read asks for. A unit that is novel by the rule but has at
 * least one hit among its minimizers (an anchor) is looked up again with every k-mer: it is known
 * where those lookups meet the rule, and its k-mers and hits are then those of every k-mer.
 *
 * Only short units are taken (at most max_sampled minimizers: reads up to a few kilobases), so that
 * a long foreign read with one chance hit costs no more than a short one. The outcome depends only
 * on the unit and the filters: the same classes by early decision and by exact hits.
 *
 * Thread safety: one anchor_rescue per thread; the filters are read only.
 */
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <ksieve/engine/decision_rule.hpp>
#include <ksieve/engine/engine.hpp>
#include <ksieve/engine/label_vote.hpp>
#include <ksieve/engine/unit_result.hpp>
#include <ksieve/filters/any_filter.hpp>
#include <ksieve/io/io.hpp>

namespace ksieve
{

/*! \brief The rescue of units one hit short (see the file's description). */
class anchor_rescue
{
public:
    /*! \brief Units of more minimizers than this are not rescued. */
    static constexpr std::uint32_t max_sampled = 512;

    /*! \brief A rescue on `engine`'s k-mers. \pre the engine outlives this object. */
    explicit anchor_rescue(batch_engine const & engine) noexcept : engine_{engine} {}

    /*! \brief Whether a rescue applies to the engine's filters at all (sampled k-mers). */
    [[nodiscard]] bool active() const noexcept { return engine_.kmer().sampled(); }

    /*! \brief Whether the unit of `r` may be rescued: novel, at least one hit, at most max_sampled
     * minimizers; `r.hits` must then be exact. */
    [[nodiscard]] static bool eligible(unit_result const & r) noexcept
    {
        return !r.known && r.hits >= 1 && r.kmers > 0 && r.kmers <= max_sampled;
    }

    /*! \brief Look up every k-mer of the eligible units of results (r1[u], and (*r2)[u] when r2
     * is non-null and non-empty) and make those that meet `rule` known (unit_result::rescued set;
     * kmers and hits of every k-mer). With `vote` (a labeled filter), the votes of a rescued unit
     * are those of every k-mer, replacing the unit's earlier votes in `vote`. \pre active(); the
     * results' hits are exact for eligible units. \returns the units rescued. \throws
     * std::bad_alloc */
    std::size_t run(io::record_batch const & r1, io::record_batch const * r2,
                    std::span<any_filter const * const> filters, decision_rule const & rule,
                    std::vector<unit_result> & results, label_vote * vote = nullptr);

private:
    batch_engine const & engine_;
    std::vector<std::uint32_t> units_, offset_, rescued_, rescued_units_;
    std::vector<std::uint64_t> keys_, values_;
    batch_engine_query_scratch q_;
};

} // namespace ksieve
