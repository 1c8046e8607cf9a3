#pragma once
/*! \file
 * \brief batch_decider: how the commands have a batch of units (reads, or pairs) decided;
 * classify's read_classifier, dedup's kmer_deduplicator and dedup --exact's exact_deduplicator
 * implement it.
 */
#include <ksieve/engine/stream.hpp>

namespace ksieve
{

/*! \brief Decides the units of batches: item.results[u] for every unit u of item (k-mers, hits,
 * class, label). Batches are given in input order (dedup's decisions depend on the earlier ones).
 * Thread safety: one thread at a time per decider. */
class batch_decider
{
public:
    virtual ~batch_decider() = default;
    /*! \brief Decide every unit of `item` into item.results. \throws what the decider documents */
    virtual void decide(work_item & item) = 0;

protected:
    batch_decider() = default;
    batch_decider(batch_decider const &) = default;
    batch_decider & operator=(batch_decider const &) = default;
};

} // namespace ksieve
