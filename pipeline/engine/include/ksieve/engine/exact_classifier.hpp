#pragma once
/*! \file
 * \brief Classification with every k-mer looked up, so that hits are exact (classify --report,
 * --exact-hits, and every run against a labeled filter): long records are taken in windows
 * (for_each_key_piece) to bound memory; against a labeled filter each known read gets the label
 * with the most hits (label_vote). Thread safety: one per thread; the filters are read only.
 */
#include <ksieve/engine/anchor_rescue.hpp>
#include <ksieve/engine/decision_rule.hpp>
#include <ksieve/engine/engine.hpp>
#include <ksieve/engine/label_vote.hpp>
#include <ksieve/engine/stream.hpp>
#include <ksieve/engine/unit_result.hpp>
#include <ksieve/filters/common/any_filter.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace ksieve
{

/*! \brief Every k-mer of each unit looked up in the filters: exact hits, the class by the rule, and
 * the label of a labeled filter. */
class exact_classifier
{
public:
    /*! \brief \pre the filters outlive this object and answer the engine's keys; a labeled filter
     * is the only one. */
    exact_classifier(batch_engine const & engine, std::span<any_filter const * const> filters,
                     decision_rule const & rule);

    /*! \brief item.results[u] for every unit of the batch: its k-mers, hits and class (and label).
     * \throws std::bad_alloc */
    void classify(work_item & item);

private:
    void add_votes(batch_keys const & piece, std::span<std::size_t const> owner);

    batch_engine const & engine_;
    std::span<any_filter const * const> filters_;
    decision_rule rule_;
    batch_keys keys_;
    std::vector<std::uint64_t> kmers_, hits_; // per unit of the batch
    std::vector<unit_result> piece_results_;
    std::optional<label_vote> vote_; // labeled filters
    anchor_rescue rescue_;           // units one hit short (sampled filters)
};

} // namespace ksieve
