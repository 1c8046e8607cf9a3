// exact_classifier: classification with every k-mer looked up (exact hits), long records in
// windows, labels by vote.
#include <ksieve/engine/exact_classifier.hpp>
#include <ksieve/engine/key_pieces.hpp>

#include <algorithm>
#include <limits>

namespace ksieve
{

exact_classifier::exact_classifier(batch_engine const & engine,
                                   std::span<any_filter const * const> const filters,
                                   decision_rule const & rule)
    : engine_{engine}, filters_{filters}, rule_{rule}, rescue_{engine}
{
    if (filters.size() == 1 && filters.front()->labeled())
        vote_.emplace(*filters.front()->labels());
}

void exact_classifier::classify(work_item & item)
{
    std::size_t const n = item.r1.size();
    hits_.assign(n, 0);
    for_each_key_piece(engine_, item, keys_, kmers_,
                       [&](batch_keys & piece, std::span<std::size_t const> const owner)
                       {
                           engine_.query(filters_, piece);
                           engine_.decide(piece, rule_, piece_results_);
                           for (std::size_t w = 0; w < piece.units(); ++w)
                               hits_[owner.empty() ? w : owner[w]] += piece_results_[w].hits;
                           if (vote_)
                               add_votes(piece, owner);
                       });
    item.results.resize(n);
    for (std::size_t u = 0; u < n; ++u)
    {
        auto const c = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(kmers_[u], std::numeric_limits<std::uint32_t>::max()));
        auto const h = static_cast<std::uint32_t>(std::min<std::uint64_t>(hits_[u], c));
        item.results[u] = unit_result{c, h, rule_.known(h, c)};
    }
    if (rescue_.active())
        rescue_.run(item.r1, &item.r2, filters_, rule_, item.results, vote_ ? &*vote_ : nullptr);
    if (vote_)
    {
        vote_->decide(item.results);
        vote_->clear();
    }
}

void exact_classifier::add_votes(batch_keys const & piece, std::span<std::size_t const> const owner)
{
    for (std::size_t w = 0; w < piece.units(); ++w)
    {
        auto const unit = static_cast<std::uint32_t>(owner.empty() ? w : owner[w]);
        std::uint64_t const * const v = piece.values.data() + piece.offset[w];
        for (std::uint32_t j = 0; j < piece.count[w]; ++j)
            vote_->add(unit, v[j]);
    }
}

} // namespace ksieve
