// read_classifier (read_classifier.hpp): the classification path of a run, chosen once.
#include <ksieve/engine/read_classifier.hpp>

#include <ksieve/filters/support/error.hpp>

namespace ksieve
{

read_classifier::read_classifier(std::span<any_filter const * const> const filters,
                                 decision_rule const & rule, bool const exact_hits,
                                 unsigned const threads)
    : filters_(filters.begin(), filters.end()), rule_{rule}, engine_{filters.empty()
                                                                         ? kmer_params{}
                                                                         : filters.front()->kmer(),
                                                                     threads}
{
    if (filters_.empty())
        throw usage_error{"classification needs a filter"};
    if (exact_hits || filters_.front()->labeled())
        exact_.emplace(engine_, std::span<any_filter const * const>{filters_}, rule_);
    else
        early_.emplace(engine_);
}

void read_classifier::decide(work_item & item)
{
    if (exact_)
        exact_->classify(item);
    else
        early_->classify(item.r1, &item.r2, filters_, rule_, item.results);
}

} // namespace ksieve
