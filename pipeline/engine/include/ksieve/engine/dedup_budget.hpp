#pragma once
/*! \file
 * \brief dedup within a memory budget: before each batch, every shard of a growing quotient filter
 * that the batch's keys could push past its share of the budget forgets its entries of the lowest
 * counts (quotient_filter::make_room), so that dedup never stops for memory. Forgetting only ever
 * makes later reads look newer (more reads kept, never fewer), and the load, so the false-positive
 * rate, stays within the filter's design.
 *
 * Thread safety: one thread at a time, with exclusive use of the filter.
 */
#include <ksieve/engine/engine.hpp>
#include <ksieve/filters/any_filter.hpp>

#include <cstdint>
#include <vector>

namespace ksieve
{

/*! \brief The share of a memory budget that each shard of dedup's filter may take, and what was
 * forgotten to stay within it. */
class dedup_budget
{
public:
    /*! \brief \param filter the dedup filter \param budget_bytes what its tables may take in all
     * (0: no limit). Each shard may take 2/3 of budget / shards: a table that grows holds its old
     * half beside the new one for a moment, and a table that forgets is rebuilt beside itself. */
    dedup_budget(any_filter const & filter, std::uint64_t budget_bytes);

    /*! \brief Before a batch of `keys`: each shard that its keys of the batch (an insert takes a
     * slot at most) could fill beyond its share forgets (any_filter::make_room_shard). Deterministic: a function of the
     * filter's contents and table sizes and of the keys. \returns the fingerprints forgotten now.
     * \throws std::bad_alloc */
    std::uint64_t make_room(any_filter & filter, batch_keys const & keys);

    /*! \brief Fingerprints forgotten so far. */
    [[nodiscard]] std::uint64_t forgotten() const noexcept { return forgotten_; }
    /*! \brief Whether a budget applies (0 was not given). */
    [[nodiscard]] bool limited() const noexcept { return share_ != 0; }

private:
    std::uint64_t share_{0}; // bytes per shard; 0: no limit
    std::uint64_t forgotten_{0};
    std::vector<std::uint64_t> per_shard_;
};

} // namespace ksieve
