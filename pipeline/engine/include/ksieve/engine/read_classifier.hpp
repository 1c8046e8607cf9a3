#pragma once
/*! \file
 * \brief read_classifier: the engine's one entry point for classification, for the classify command
 * (one per worker) and the Python module: a batch of units (reads, or pairs) in, each unit's
 * k-mers, hits, class and label out, against any filters. Whether a unit's lookups stop once its
 * class is decided (early_classifier) or every k-mer is looked up (exact_classifier: exact hits,
 * and the label of a labeled filter) is decided once, here: the classes are the same either way.
 */
#include <ksieve/engine/batch_decider.hpp>
#include <ksieve/engine/decision_rule.hpp>
#include <ksieve/engine/early_classify.hpp>
#include <ksieve/engine/engine.hpp>
#include <ksieve/engine/exact_classifier.hpp>
#include <ksieve/engine/stream.hpp>
#include <ksieve/filters/common/any_filter.hpp>

#include <optional>
#include <span>
#include <vector>

namespace ksieve
{

/*! \brief See the file comment. Thread safety: one thread at a time per classifier; it runs OpenMP
 * regions of its `threads` inside (1: none). */
class read_classifier final : public batch_decider
{
public:
    /*! \brief Classifies by `rule` against `filters`, on `threads` threads, with exact hits where
     * `exact_hits` is asked or the filter is labeled. \pre the filters outlive this object, answer
     * the same k-mers (check_query_compatible) and are not modified meanwhile; a labeled filter is
     * the only one. \throws resource_error if the threads cannot be started */
    read_classifier(std::span<any_filter const * const> filters, decision_rule const & rule,
                    bool exact_hits, unsigned threads);
    read_classifier(read_classifier const &) = delete;
    read_classifier & operator=(read_classifier const &) = delete;

    /*! \brief item.results[u] for every unit of the batch: k-mers (exact), hits (exact where
     * exact_hits(), else a lower bound that decided the unit), class and label. \throws
     * std::bad_alloc */
    void decide(work_item & item) override;

    /*! \brief Whether hits are exact (every k-mer looked up). */
    [[nodiscard]] bool exact_hits() const noexcept { return exact_.has_value(); }

private:
    std::vector<any_filter const *> filters_;
    decision_rule rule_;
    batch_engine engine_;
    std::optional<exact_classifier> exact_; // exact hits
    std::optional<early_classifier> early_; // otherwise
};

} // namespace ksieve
