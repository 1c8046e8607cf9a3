// loser_tree: the k-way merge's choice of the smallest head among k sorted streams (a tournament
// tree that keeps each match's loser with its key): after the winner's stream advances, one
// comparison per level of the tree finds the next winner. A stream that ran out is kept as a head
// of the largest key that loses every tie. Equal keys of live streams come out in an order fixed by
// the streams' contents.
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
        live_.assign(leaves_, 0);
        head_.assign(leaves_, head{dead_key, 0});
        for (std::size_t i = 0; i < leaves_; ++i)
            head_[i].stream = static_cast<std::uint32_t>(i);
        node_.assign(leaves_, head{dead_key, 0});
    }
    // The head of stream i (before build()).
    void set(std::size_t const i, std::uint64_t const key) noexcept
    {
        head_[i].key = key;
        live_[i] = 1;
    }
    // The tournament over the heads set.
    void build()
    {
        std::vector<head> win(2 * leaves_);
        for (std::size_t i = 0; i < leaves_; ++i)
            win[leaves_ + i] = head_[i];
        for (std::size_t j = leaves_; j-- > 1;)
        {
            head const a = win[2 * j], b = win[2 * j + 1];
            bool const a_wins = less(a, b);
            win[j] = a_wins ? a : b;
            node_[j] = a_wins ? b : a;
        }
        node_[0] = win[1];
    }
    // Whether any stream has a head left.
    [[nodiscard]] bool empty() const noexcept { return live_[node_[0].stream] == 0; }
    // The stream of the smallest head, and that head. \pre !empty()
    [[nodiscard]] std::uint32_t winner() const noexcept { return node_[0].stream; }
    [[nodiscard]] std::uint64_t top() const noexcept { return node_[0].key; }
    // The winner's stream moved on to `key`, or (next = false) ran out.
    void replace_top(std::uint64_t const key, bool const next) noexcept
    {
        head w = node_[0];
        w.key = next ? key : dead_key;
        live_[w.stream] = next ? 1 : 0;
        for (std::size_t j = (w.stream + leaves_) / 2; j >= 1; j /= 2)
            if (less(node_[j], w))
                std::swap(node_[j], w);
        node_[0] = w;
    }

private:
    static constexpr std::uint64_t dead_key = ~std::uint64_t{0};
    struct head
    {
        std::uint64_t key;
        std::uint32_t stream;
    };
    [[nodiscard]] bool less(head const & a, head const & b) const noexcept
    {
        if (a.key != b.key)
            return a.key < b.key;
        // (a live head of the largest key before the streams that ran out; then stream order)
        return live_[a.stream] != live_[b.stream] ? live_[a.stream] > live_[b.stream]
                                                  : a.stream < b.stream;
    }

    std::size_t leaves_{1};
    std::vector<unsigned char> live_;
    std::vector<head> head_;
    std::vector<head> node_; // node_[0]: the winner; node_[j]: the loser of match j
};

} // namespace ksieve::detail
