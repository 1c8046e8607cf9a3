// dedup within a memory budget (dedup_budget): the keys of a batch counted per shard, and the
// shards that could outgrow their share made to forget before the batch.
#include <ksieve/engine/dedup_budget.hpp>

#include <algorithm>

namespace ksieve
{

dedup_budget::dedup_budget(any_filter const & filter, std::uint64_t const budget_bytes)
    : share_{budget_bytes == 0
                 ? 0
                 : std::max<std::uint64_t>(1, budget_bytes / (2 * filter.num_shards()))},
      per_shard_(filter.num_shards(), 0)
{
}

std::uint64_t dedup_budget::make_room(any_filter & filter, batch_keys const & keys)
{
    if (share_ == 0)
        return 0;
    std::fill(per_shard_.begin(), per_shard_.end(), 0);
    for (std::uint64_t const key : keys.keys) // (each insert takes one slot at most)
        ++per_shard_[filter.shard_of(key)];
    std::uint64_t now = 0;
    for (std::size_t s = 0; s < per_shard_.size(); ++s)
        if (per_shard_[s] != 0)
            now += filter.make_room_shard(s, share_, per_shard_[s] + 64);
    forgotten_ += now;
    return now;
}

} // namespace ksieve
