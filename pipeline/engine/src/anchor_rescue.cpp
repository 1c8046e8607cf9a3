// anchor_rescue: every k-mer of the units that their minimizers left one hit short.
#include "engine_detail.hpp"
#include <ksieve/engine/anchor_rescue.hpp>
#include <ksieve/filters/low_complexity.hpp>

namespace ksieve
{

std::size_t anchor_rescue::run(io::record_batch const & r1, io::record_batch const * const r2,
                               std::span<any_filter const * const> const filters,
                               decision_rule const & rule, std::vector<unit_result> & results,
                               label_vote * const vote)
{
    bool const pairs = r2 != nullptr && !r2->empty();
    kmer_params const & kmer = engine_.kmer();
    // low-complexity k-mers (poly-A tails, microsatellites) do not count in the second look: a
    // foreign read with a homopolymer run would find them in any large host
    std::uint32_t const dust = kmer.k < min_masked_k      ? 0
                               : kmer.dust_threshold != 0 ? kmer.dust_threshold
                                                          : default_dust_threshold;
    units_.clear();
    offset_.assign(1, 0);
    keys_.clear();
    for (std::size_t u = 0; u < results.size(); ++u)
    {
        if (!eligible(results[u]))
            continue;
        auto const add = [&](std::size_t, std::uint64_t const code)
        {
            if (!low_complexity(code, kmer.k, dust))
                keys_.push_back(engine_.hasher()(code));
        };
        engine_.scanner().for_each(r1[u].seq, add);
        if (pairs)
            engine_.scanner().for_each((*r2)[u].seq, add);
        units_.push_back(static_cast<std::uint32_t>(u));
        offset_.push_back(static_cast<std::uint32_t>(keys_.size()));
    }
    if (units_.empty())
        return 0;
    values_.resize(keys_.size());
    detail::query_keys(filters, keys_.data(), keys_.size(), values_.data(), q_);
    rescued_.clear(); // indices into units_ of the rescued units, increasing
    for (std::size_t i = 0; i < units_.size(); ++i)
    {
        std::uint32_t const kmers = offset_[i + 1] - offset_[i];
        std::uint32_t hits = 0;
        for (std::uint32_t j = offset_[i]; j < offset_[i + 1]; ++j)
            hits += rule.hit(values_[j]) ? 1u : 0u;
        if (!rule.known(hits, kmers))
            continue;
        unit_result & r = results[units_[i]];
        r = unit_result{kmers, hits, true};
        r.rescued = true;
        rescued_.push_back(static_cast<std::uint32_t>(i));
    }
    if (vote != nullptr && !rescued_.empty())
    {
        rescued_units_.clear();
        for (std::uint32_t const i : rescued_)
            rescued_units_.push_back(units_[i]);
        vote->drop(rescued_units_);
        for (std::uint32_t const i : rescued_)
            for (std::uint32_t j = offset_[i]; j < offset_[i + 1]; ++j)
                vote->add(units_[i], values_[j]);
    }
    return rescued_.size();
}

} // namespace ksieve
