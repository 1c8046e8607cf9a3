// label_vote: the label with the most hits of each known unit.
#include <ksieve/engine/label_vote.hpp>

#include <algorithm>

namespace ksieve
{

label_vote::label_vote(label_table const & table)
    : table_{&table}, tally_(table.names.size(), 0), class_hits_(table.classes.size(), 0)
{
}

void label_vote::drop(std::span<std::uint32_t const> const units)
{
    if (units.empty())
        return;
    std::erase_if(hits_, [&](std::pair<std::uint32_t, std::uint32_t> const & h)
                  { return std::binary_search(units.begin(), units.end(), h.first); });
}

void label_vote::decide(std::vector<unit_result> & results)
{
    // (hits come unit by unit from the classifiers; sorted here should a caller interleave them)
    auto const by_unit = [](auto const & a, auto const & b) { return a.first < b.first; };
    if (!std::is_sorted(hits_.begin(), hits_.end(), by_unit))
        std::stable_sort(hits_.begin(), hits_.end(), by_unit);
    for (auto & r : results)
        r.label = unit_result::no_label;
    auto const & classes = table_->classes;
    for (std::size_t i = 0; i < hits_.size();)
    {
        std::uint32_t const unit = hits_[i].first;
        std::size_t end = i;
        while (end < hits_.size() && hits_[end].first == unit)
            ++end;
        if (unit >= results.size() || !results[unit].known)
        { // (novel: no label)
            i = end;
            continue;
        }
        // the unit's hits per class, then each class's labels counted once with its hits
        for (; i < end; ++i)
            if (std::uint32_t const c = hits_[i].second; c < classes.size()) // (else: damaged file)
                if (class_hits_[c]++ == 0)
                    classes_seen_.push_back(c);
        for (std::uint32_t const c : classes_seen_)
        {
            std::uint32_t const n = class_hits_[c];
            class_hits_[c] = 0;
            for (std::uint32_t const l : classes[c])
            {
                if (tally_[l] == 0)
                    touched_.push_back(l);
                tally_[l] += n;
            }
        }
        classes_seen_.clear();
        std::uint32_t best = unit_result::no_label, most = 0;
        bool tie = false;
        for (std::uint32_t const l : touched_)
        {
            if (tally_[l] > most)
            {
                most = tally_[l];
                best = l;
                tie = false;
            }
            else if (tally_[l] == most)
                tie = true;
            tally_[l] = 0;
        }
        touched_.clear();
        results[unit].label = tie ? unit_result::ambiguous : best;
    }
}

} // namespace ksieve
