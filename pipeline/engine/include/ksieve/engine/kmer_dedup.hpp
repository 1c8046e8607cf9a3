#pragma once
/*! \file
 * \brief dedup by the k-mer rule, batch by batch (kmer_deduplicator): the path that fits the filter
 * and the outputs asked for (speculation, in-batch resolution, or read by read), each giving the
 * classes of the serial definition, within a memory budget (dedup_budget: a hash sample of the
 * k-mers, with the hit fraction needed raised towards keeping reads, then forgetting).
 *
 * Thread safety: one thread at a time; the engine's own threads work inside each call.
 */
#include <ksieve/engine/batch_decider.hpp>
#include <ksieve/engine/decision_rule.hpp>
#include <ksieve/engine/dedup.hpp>
#include <ksieve/engine/dedup_budget.hpp>
#include <ksieve/engine/engine.hpp>
#include <ksieve/engine/stream.hpp>
#include <ksieve/filters/common/any_filter.hpp>
#include <ksieve/filters/quotient/prefiltered_filter.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ksieve
{

/*! \brief What a k-mer dedup run decides by. */
struct kmer_dedup_options
{
    decision_rule rule;            //!< --min-count, --min-hit-fraction
    bool exact_hits{false};        //!< count every hit (--report, --exact-hits)
    std::uint64_t skip_at{0};      //!< keys at or above this count are not inserted again (0: all)
    std::string filter_name;       //!< for errors: "dedup" or the --save-filter path
    std::uint64_t budget_bytes{0}; //!< what the filter's tables may take (0: no limit)
};

/*! \brief dedup of batches in input order into one filter. */
class kmer_deduplicator final : public batch_decider
{
public:
    /*! \pre the filter outlives this object; kmer is the filter's. \throws resource_error if the
     * engine's threads cannot be started */
    kmer_deduplicator(any_filter & filter, kmer_params const & kmer, unsigned threads,
                      kmer_dedup_options options);

    /*! \brief Decide the units of a batch in input order (item.results) and add the k-mers of the
     * novel ones. \throws full_error naming the filter where it cannot take them; std::bad_alloc */
    void decide(work_item & item) override;

    [[nodiscard]] bool exact_hits() const noexcept { return options_.exact_hits; }
    [[nodiscard]] std::uint64_t budget_bytes() const noexcept { return options_.budget_bytes; }
    [[nodiscard]] dedup_budget const & budget() const noexcept { return budget_; }
    /*! \brief The unit (read or pair, from 1) before which dedup first sampled or forgot k-mers;
     * 0: never. */
    [[nodiscard]] std::uint64_t forgetting_from_unit() const noexcept { return first_forgetting_; }

    /*! \brief Standard errors added to the hit fraction a read needs once dedup looks at a sample
     * of the k-mers, so that the sample errs towards keeping a read (a read one standard error
     * below --min-hit-fraction is called known with a probability of about 7%; docs/design.md). */
    static constexpr double sample_margin = 0.5;

private:
    any_filter & filter_;
    prefiltered_filter * const prefiltered_; // the filter, when it has a prefilter
    bool const resolvable_; // a quotient filter: collision keys make in-batch resolution exact
    std::vector<any_filter const *> const query_filters_;
    kmer_dedup_options options_; // (its rule on a sample of the k-mers, with a margin)
    batch_engine engine_;
    dedup_resolver resolver_;
    dedup_speculator speculator_;
    dedup_budget budget_;
    std::uint64_t units_{0};            // units before this batch
    std::uint64_t first_forgetting_{0}; // see forgetting_from_unit()
    batch_keys keys_;
};

} // namespace ksieve
