#pragma once
/*! \file
 * \brief One part of a key-space split (`build --shard I/S`): the keys a scatter job keeps.
 * Thread safety: a plain value.
 */
#include <cstdint>

#include <ksieve/filters/filter.hpp>

namespace ksieve
{

/*! \brief `--shard I/S`: keep only the keys of part I of S (key_parts::part_of; I counted from 0). */
struct shard_range
{
    std::uint64_t index{0};
    std::uint64_t count{1};
    /*! \brief Whether a hashed key belongs to part index of count. */
    [[nodiscard]] bool contains(std::uint64_t const key) const noexcept
    {
        return count == 1 || key_parts::part_of(key, count) == index;
    }
};

} // namespace ksieve
