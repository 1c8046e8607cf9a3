// kmer_deduplicator: dedup by the k-mer rule, batch by batch, on the path that fits the filter and
// the outputs asked for, within a memory budget.
#include <ksieve/engine/kmer_dedup.hpp>

#include <utility>

namespace ksieve
{

kmer_deduplicator::kmer_deduplicator(any_filter & filter, kmer_params const & kmer,
                                     unsigned const threads, kmer_dedup_options options)
    : filter_{filter}, prefiltered_{dynamic_cast<prefiltered_filter *>(&filter)},
      resolvable_{filter.growable() != nullptr}, query_filters_{&filter},
      options_{std::move(options)}, engine_{kmer, threads}, resolver_{threads},
      speculator_{threads}, budget_{filter, options_.budget_bytes}
{
}

void kmer_deduplicator::decide(work_item & item)
{
    engine_.extract(item.r1, &item.r2, keys_);
    // within the memory budget: a sample of the k-mers, or forgetting, where this batch could make
    // a shard outgrow its share
    if ((budget_.make_room(filter_, keys_) != 0 || budget_.level() > 0) && first_forgetting_ == 0)
        first_forgetting_ = units_ + 1;
    if (budget_.level() > 0)
        options_.rule.sample_margin = sample_margin;
    units_ += item.r1.size();
    decision_rule const & rule = options_.rule;
    std::string const & name = options_.filter_name;
    // Both quotient-filter paths equal the serial definition. Speculation needs fewer filter
    // operations but does not count exact hits for known reads.
    if (resolvable_ && !options_.exact_hits)
        speculator_.run(filter_, keys_, rule, item.results, name);
    else if (resolvable_)
    {
        // parallel query, serial in-batch resolution, parallel insert
        engine_.query(query_filters_, keys_);
        resolver_.resolve(filter_, keys_, rule, options_.exact_hits, item.results);
        engine_.insert(filter_, keys_, &item.results, name, options_.skip_at);
    }
    else
        engine_.dedup_serial(filter_, keys_, rule, item.results, name);
    if (prefiltered_ != nullptr) // the end of a batch for the prefilter
        commit_round(*prefiltered_, engine_.threads());
}

} // namespace ksieve
