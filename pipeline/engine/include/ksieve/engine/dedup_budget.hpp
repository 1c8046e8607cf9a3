#pragma once
/*! \file
 * \brief dedup within a memory budget (docs/design.md, "Within a memory budget"): before each
 * batch that could push a shard of a growing quotient filter past its share, the key space is
 * sampled one level deeper, and beyond the deepest sample the lowest counts are forgotten, so that
 * dedup never stops for memory. Forgetting only makes later reads look newer (more reads kept,
 * never fewer). Thread safety: one thread at a time, with exclusive use of the filter.
 */
#include <ksieve/engine/engine.hpp>
#include <ksieve/filters/common/any_filter.hpp>

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
     * (0: no limit). Each shard may take half of budget / shards: a table that grows holds its old
     * half beside the new one for a moment, and one that forgets is rebuilt beside itself. */
    dedup_budget(any_filter const & filter, std::uint64_t budget_bytes);

    /*! \brief Before a batch of `keys`: while a shard could not take its keys of the batch within
     * its share (an insert takes two slots at most), every shard keeps only the keys with one more
     * zero bit at the filter's sample_shift() (half of them); beyond 2^-max_level, a shard forgets
     * its lowest counts (growable_filter::make_room_shard; a filter that is not growable forgets
     * nothing). Then the batch's keys are cut to the sample. Deterministic: a function of the
     * filter's contents and table sizes and of the keys. \returns the fingerprints forgotten now.
     * \throws std::bad_alloc */
    std::uint64_t make_room(any_filter & filter, batch_keys & keys);

    /*! \brief Fingerprints forgotten so far. */
    [[nodiscard]] std::uint64_t forgotten() const noexcept { return forgotten_; }
    /*! \brief The depth of the sample: dedup looks at 2^-level of the keys. */
    [[nodiscard]] unsigned level() const noexcept { return level_; }
    /*! \brief Whether a budget applies (0 was not given). */
    [[nodiscard]] bool limited() const noexcept { return share_ != 0; }
    /*! \brief The deepest sample: 1/64 of the keys. */
    static constexpr unsigned max_level = 6;

private:
    // Whether a key is in the sample of the current level.
    [[nodiscard]] bool sampled(std::uint64_t key) const noexcept;
    // Count the sampled keys of the batch per shard; whether every shard has room for them.
    bool count_keys(any_filter const & filter, batch_keys const & keys);
    // Keep the sampled keys of each unit (offsets and counts made to match).
    void cut_to_sample(batch_keys & keys) const;

    std::uint64_t share_{0}; // bytes per shard; 0: no limit
    int shift_{-1};          // the filter's sample_shift(); -1: it cannot sample (not growable)
    unsigned level_{0};
    std::uint64_t forgotten_{0};
    std::vector<std::uint64_t> per_shard_;
};

} // namespace ksieve
