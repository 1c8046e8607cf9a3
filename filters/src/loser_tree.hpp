// loser_tree: the k-way merge's choice of the smallest head among k sorted streams (a tournament
// tree that keeps each match's loser): after the winner's stream advances, one comparison per level
// of the tree finds the next winner. Ties go to the lower stream index, so that equal keys come out
// in stream order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ksieve::detail
{

class loser_tree
{
public:
    // A tree over `streams` streams, all exhausted until set() and build().
    explicit loser_tree(std::size_t const streams)
    {
        while (leaves_ < streams)
            leaves_ *= 2;
        key_.assign(leaves_, 0);
        live_.assign(leaves_, 0);
        node_.assign(leaves_, 0);
    }
    // The head of stream i (before build()).
    void set(std::size_t const i, std::uint64_t const key) noexcept
    {
        key_[i] = key;
        live_[i] = 1;
    }
    // The tournament over the heads set.
    void build()
    {
        std::vector<std::uint32_t> win(2 * leaves_);
        for (std::size_t i = 0; i < leaves_; ++i)
            win[leaves_ + i] = static_cast<std::uint32_t>(i);
        for (std::size_t j = leaves_; j-- > 1;)
        {
            std::uint32_t const a = win[2 * j], b = win[2 * j + 1];
            bool const a_wins = less(a, b);
            win[j] = a_wins ? a : b;
            node_[j] = a_wins ? b : a;
        }
        node_[0] = win[1];
    }
    // Whether any stream has a head left.
    [[nodiscard]] bool empty() const noexcept { return live_[node_[0]] == 0; }
    // The stream of the smallest head, and that head. \pre !empty()
    [[nodiscard]] std::uint32_t winner() const noexcept { return node_[0]; }
    [[nodiscard]] std::uint64_t top() const noexcept { return key_[node_[0]]; }
    // The winner's stream moved on to `key`, or (next = false) ran out.
    void replace_top(std::uint64_t const key, bool const next) noexcept
    {
        std::uint32_t w = node_[0];
        key_[w] = key;
        live_[w] = next ? 1 : 0;
        for (std::size_t j = (w + leaves_) / 2; j >= 1; j /= 2)
            if (less(node_[j], w))
                std::swap(node_[j], w);
        node_[0] = w;
    }

private:
    [[nodiscard]] bool less(std::uint32_t const a, std::uint32_t const b) const noexcept
    {
        if (live_[a] != live_[b])
            return live_[a] > live_[b];
        return key_[a] < key_[b] || (key_[a] == key_[b] && a < b);
    }

    std::size_t leaves_{1};
    std::vector<std::uint64_t> key_;
    std::vector<unsigned char> live_;
    std::vector<std::uint32_t> node_; // node_[0]: the winner; node_[j]: the loser of match j
};

} // namespace ksieve::detail
