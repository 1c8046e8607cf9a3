// key_parts: which parts of a split of the key space a filter holds (build --part I/S), their
// union, descriptions and the check that a split is complete.
#include <ksieve/filters/common/filter.hpp>

#include <algorithm>
#include <map>

namespace ksieve
{

key_parts key_parts::one(std::uint64_t const index, std::uint64_t const split)
{
    key_parts p;
    p.split = split;
    p.held.assign((split + 63) / 64, 0);
    p.held[index / 64] |= std::uint64_t{1} << (index % 64);
    return p.complete() ? whole() : p;
}

bool key_parts::complete() const noexcept
{
    for (std::uint64_t i = 0; i < split / 64; ++i)
        if (held[i] != ~std::uint64_t{0})
            return false;
    if (split % 64 != 0)
    {
        std::uint64_t const last = (std::uint64_t{1} << (split % 64)) - 1;
        if ((held[split / 64] & last) != last)
            return false;
    }
    return true;
}

void key_parts::add(key_parts const & other)
{
    for (std::size_t i = 0; i < held.size() && i < other.held.size(); ++i)
        held[i] |= other.held[i];
    if (complete())
        *this = whole();
}

std::vector<std::uint64_t> key_parts::list() const
{
    std::vector<std::uint64_t> out;
    for (std::uint64_t i = 0; i < split; ++i)
        if (has(i))
            out.push_back(i);
    return out;
}

namespace
{

// "part 2 of 4" / "parts 0, 1, 3-9 of 16" for the parts i < split with want(i)
template <typename Want> std::string describe_parts(std::uint64_t const split, Want const & want)
{
    std::string text;
    std::uint64_t n = 0;
    for (std::uint64_t i = 0; i < split;)
    {
        if (!want(i))
        {
            ++i;
            continue;
        }
        std::uint64_t j = i;
        while (j + 1 < split && want(j + 1))
            ++j;
        text += (text.empty() ? "" : ", ") + std::to_string(i);
        if (j > i)
            text += (j == i + 1 ? ", " : "-") + std::to_string(j);
        n += j - i + 1;
        i = j + 1;
    }
    return (n == 1 ? "part " : "parts ") + text + " of " + std::to_string(split);
}

} // namespace

std::string key_parts::describe() const
{
    return complete() ? "all"
                      : describe_parts(split, [&](std::uint64_t const i) { return has(i); });
}

std::string key_parts::describe_missing() const
{
    return describe_parts(split, [&](std::uint64_t const i) { return !has(i); });
}

std::size_t first_incomplete_split(std::span<key_parts const> const parts)
{
    std::map<std::uint64_t, key_parts> unions;
    for (auto const & p : parts)
        if (!p.complete())
        {
            auto const [it, fresh] = unions.try_emplace(p.split, p);
            if (!fresh)
                it->second.add(p);
        }
    for (std::size_t i = 0; i < parts.size(); ++i)
        if (!parts[i].complete() && !unions.at(parts[i].split).complete())
            return i;
    return parts.size();
}

} // namespace ksieve
