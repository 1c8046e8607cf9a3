#pragma once
/*! \file
 * \brief One part of a split of the key space (`build --part I/S`): the keys that a scatter job
 * keeps.
 */
#include <cstdint>

#include <ksieve/filters/common/filter.hpp>

namespace ksieve
{

/*! \brief Part `index` of `count` parts of the key space (key_parts::part_of; index counted from
 * 0). \pre index < count, count >= 1. Thread safety: a plain value. */
struct key_part_range
{
    std::uint64_t index{0};
    std::uint64_t count{1};
    /*! \brief Whether a hashed key belongs to the part. No exceptions; thread-safe. */
    [[nodiscard]] bool contains(std::uint64_t const key) const noexcept
    {
        return count == 1 || key_parts::part_of(key, count) == index;
    }
};

} // namespace ksieve
