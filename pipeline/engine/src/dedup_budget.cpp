// dedup within a memory budget (dedup_budget): the keys of a batch counted per shard; a deeper
// sample of the key space wherever a shard could outgrow its share, then the lowest counts; the
// batch's keys cut to the sample.
#include <ksieve/engine/dedup_budget.hpp>

#include <algorithm>

namespace ksieve
{

dedup_budget::dedup_budget(any_filter const & filter, std::uint64_t const budget_bytes)
    : share_{budget_bytes == 0
                 ? 0
                 : std::max<std::uint64_t>(1, budget_bytes / (2 * filter.num_shards()))},
      shift_{filter.growable() == nullptr ? -1
                                          : static_cast<int>(filter.growable()->sample_shift())},
      per_shard_(filter.num_shards(), 0)
{
}

bool dedup_budget::sampled(std::uint64_t const key) const noexcept
{
    return level_ == 0 ||
           ((key >> static_cast<unsigned>(shift_)) & ((std::uint64_t{1} << level_) - 1)) == 0;
}

bool dedup_budget::count_keys(any_filter const & filter, batch_keys const & keys)
{
    std::fill(per_shard_.begin(), per_shard_.end(), 0);
    growable_filter const * const g = filter.growable();
    if (g == nullptr)
        return true; // (a filter that does not grow has room, or is full, whatever is done)
    // every shard with room for the whole batch (as a counting table has): nothing to count
    std::uint64_t const batch = keys.units() == 0 ? 0 : keys.offset[keys.units()];
    bool all = true;
    for (std::size_t s = 0; all && s < per_shard_.size(); ++s)
        all = g->has_room_shard(s, share_, 2 * batch + 64);
    if (all)
        return true;
    // two slots a key: an insert takes two at most (a prefilter admits a k-mer with count 2)
    for (std::size_t u = 0; u < keys.units(); ++u)
    {
        std::uint64_t const * const k = keys.keys.data() + keys.offset[u];
        for (std::uint32_t j = 0; j < keys.count[u]; ++j)
            if (sampled(k[j]))
                per_shard_[filter.shard_of(k[j])] += 2;
    }
    for (std::size_t s = 0; s < per_shard_.size(); ++s)
        if (per_shard_[s] != 0 && !g->has_room_shard(s, share_, per_shard_[s] + 64))
            return false;
    return true;
}

void dedup_budget::cut_to_sample(batch_keys & keys) const
{
    std::uint64_t at = 0;
    std::size_t const n = keys.units();
    for (std::size_t u = 0; u < n; ++u)
    {
        std::uint64_t const from = keys.offset[u];
        std::uint32_t kept = 0;
        for (std::uint32_t j = 0; j < keys.count[u]; ++j)
            if (std::uint64_t const key = keys.keys[from + j]; sampled(key))
                keys.keys[at + kept++] = key;
        keys.offset[u] = at;
        keys.count[u] = kept;
        at += kept;
    }
    keys.offset[n] = at;
}

std::uint64_t dedup_budget::make_room(any_filter & filter, batch_keys & keys)
{
    growable_filter * const g = filter.growable();
    if (share_ == 0 || g == nullptr)
        return 0;
    // far from the budget (every table, doubled, and the batch's keys at 16 bytes a slot fit in one
    // shard's share): nothing to count
    std::uint64_t const batch = keys.units() == 0 ? 0 : keys.offset[keys.units()];
    if (level_ == 0 && 2 * filter.stats().bytes + 32 * batch <= share_)
        return 0;
    std::uint64_t now = 0;
    // a sample of half the keys of the one before, while a shard cannot take the batch: decisions
    // on the sample keep their hit fractions, where forgetting at random would not
    while (!count_keys(filter, keys) && shift_ >= 0 && level_ < max_level)
    {
        ++level_;
        for (std::size_t s = 0; s < per_shard_.size(); ++s)
            now += g->keep_sample_shard(s, level_);
    }
    // beyond the deepest sample: the lowest counts
    for (std::size_t s = 0; s < per_shard_.size(); ++s)
        if (per_shard_[s] != 0)
            now += g->make_room_shard(s, share_, per_shard_[s] + 64);
    if (level_ > 0)
        cut_to_sample(keys);
    forgotten_ += now;
    return now;
}

} // namespace ksieve
