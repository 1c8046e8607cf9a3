#pragma once
/*! \file
 * \brief label_vote: the label of a read (or pair) against a labeled filter. A label's hits are the
 * unit's looked-up k-mers whose label set holds it; the unit's label is the label with the most
 * hits, or `ambiguous` where several labels share the most hits.
 */
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include <ksieve/engine/unit_result.hpp>
#include <ksieve/filters/common/labels.hpp>

namespace ksieve
{

/*! \brief Counts the label hits of the units of a batch and decides their labels. Thread safety:
 * one thread at a time (keep one per worker); the table is only read. No allocation once its
 * vectors have grown to the largest batch. */
class label_vote
{
public:
    /*! \brief Votes among the labels of `table`. \pre table outlives the vote. */
    explicit label_vote(label_table const & table);

    /*! \brief Forget the hits of the previous batch. */
    void clear() noexcept { hits_.clear(); }

    /*! \brief One looked-up k-mer of unit `unit` whose count in the labeled filter is `count`
     * (class id + 1; 0: not found, ignored). \throws std::bad_alloc */
    void add(std::uint32_t const unit, std::uint64_t const count)
    {
        if (count != 0)
            hits_.emplace_back(unit, static_cast<std::uint32_t>(count - 1));
    }

    /*! \brief Forget the hits of the units in `units` (sorted, increasing). */
    void drop(std::span<std::uint32_t const> units);

    /*! \brief label of every known unit of `results` (unit_result::label): its top label's index,
     * or unit_result::ambiguous; novel units get unit_result::no_label. \pre every add() of the
     * batch was made; a count names a class of the table. */
    void decide(std::vector<unit_result> & results);

private:
    label_table const * table_;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> hits_; // (unit, class id)
    std::vector<std::uint32_t> tally_;                          // per label
    std::vector<std::uint32_t> touched_;                        // labels with tally_ > 0
    std::vector<std::uint32_t> class_hits_;                     // per class, of the unit
    std::vector<std::uint32_t> classes_seen_;                   // classes with class_hits_ > 0
};

} // namespace ksieve
