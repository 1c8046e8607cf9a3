#pragma once
/*! \file
 * \brief anchor_rescue: the second look of classify at a read (or pair) that its sampled k-mers
 * left one hit short. Against a sampled filter a read is looked up by its own minimizers only; a
 * sequencing error changes the minimizers of the windows around it, so that an intact k-mer that
 * the host stored may not be one the read asks for. A unit that is novel by the rule but has at
 * least one hit among its minimizers (an anchor) is looked up again with every k-mer: it is known
 * where those lookups meet the rule, and its k-mers and hits are then those of every k-mer.
 *
 * A unit that every k-mer still leaves short is looked at once more at its (at most
 * max_substituted_bases) lowest-quality bases of Phred quality <= max_substituted_quality: each of
 * the three other bases is put in turn and the k-mers over it are looked up; per base, the
 * substitution with the most hits adds its hits to the unit's (its k-mers stay those of every
 * k-mer). Reads without qualities (FASTA) skip this step.
 *
 * A short unit (at most max_screened_bases bases) without any hit among its minimizers is first
 * screened at the same bases, looking up only the minimizers of each changed read that the read
 * itself lacks; one of them hit anchors it as above. In a short read a few errors can break every
 * sampled k-mer; longer units keep hits, and a foreign read pays the screen only where it is short.
 *
 * Only units of at most max_sampled minimizers (reads up to a few kilobases) are taken, so that a
 * long foreign read with one chance hit costs no more than a short one. The outcome depends only
 * on the unit and the filters: the same classes by early decision and by exact hits.
 *
 * Thread safety: one anchor_rescue per thread; the filters are read only.
 */
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ksieve/engine/decision_rule.hpp>
#include <ksieve/engine/engine.hpp>
#include <ksieve/engine/label_vote.hpp>
#include <ksieve/engine/unit_result.hpp>
#include <ksieve/filters/common/any_filter.hpp>
#include <ksieve/filters/kmers/sampling.hpp>
#include <ksieve/io/io.hpp>

namespace ksieve
{

/*! \brief The rescue of units one hit short (see the file's description). */
class anchor_rescue
{
public:
    /*! \brief Units of more minimizers than this are not rescued. */
    static constexpr std::uint32_t max_sampled = 512;
    /*! \brief Bases of Phred quality above this are not substituted. */
    static constexpr int max_substituted_quality = 15;
    /*! \brief At most this many bases of a read (a mate) are substituted. */
    static constexpr std::size_t max_substituted_bases = 8;
    /*! \brief Units (all mates) of more bases than this are not screened. */
    static constexpr std::size_t max_screened_bases = 120;

    /*! \brief A rescue on `engine`'s k-mers. \pre the engine outlives this object. */
    explicit anchor_rescue(batch_engine const & engine) noexcept : engine_{engine} {}

    /*! \brief Whether a rescue applies to the engine's filters at all (sampled k-mers). */
    [[nodiscard]] bool active() const noexcept { return engine_.kmer().sampled(); }

    /*! \brief Whether the unit of `r` may be rescued without a screen: novel, at least one hit, at
     * most max_sampled minimizers; `r.hits` must then be exact. */
    [[nodiscard]] static bool eligible(unit_result const & r) noexcept
    {
        return !r.known && r.hits >= 1 && r.kmers > 0 && r.kmers <= max_sampled;
    }

    /*! \brief Whether the unit of `r` (of `bases` bases in all) is screened: novel, no hit, at
     * least one minimizer, at most max_screened_bases bases; `r.hits` must then be exact. */
    [[nodiscard]] static bool screened(unit_result const & r, std::size_t const bases) noexcept
    {
        return !r.known && r.hits == 0 && r.kmers > 0 && bases <= max_screened_bases;
    }

    /*! \brief Screen the units that screened() takes, then look up every k-mer of the eligible and
     * the anchored units of results (r1[u], and (*r2)[u] when r2 is non-null and non-empty), then
     * the substitutions at their low-quality bases, and make those that meet `rule` known
     * (unit_result::rescued set; kmers and hits of every k-mer). With `vote` (a labeled filter), a
     * rescued unit's votes are those of every k-mer, replacing its earlier ones. \pre active(); the
     * results' hits are exact for eligible units. \returns the units rescued. \throws
     * std::bad_alloc */
    std::size_t run(io::record_batch const & r1, io::record_batch const * r2,
                    std::span<any_filter const * const> filters, decision_rule const & rule,
                    std::vector<unit_result> & results, label_vote * vote = nullptr);

private:
    /*! \brief The lookups of one substitution: keys [begin, end) of sub_keys_. */
    struct group
    {
        std::uint32_t unit;     //!< index into units_
        std::uint32_t position; //!< the substituted base (numbered across the batch)
        std::uint32_t begin, end;
        bool chosen; //!< the substitution of its base with the most hits (and at least one)
    };

    [[nodiscard]] std::uint32_t dust_threshold() const noexcept;
    void screen(io::record_batch const & r1, io::record_batch const * r2,
                std::span<any_filter const * const> filters, decision_rule const & rule,
                std::vector<unit_result> const & results);
    void add_screen_keys(std::string_view seq, std::string_view qual);
    void add_screen_keys_with_gaps(std::string_view seq);
    void index_read(std::string_view seq);
    //! The k-mers [s_lo, s_hi] over a substituted base; the windows from e_lo that hold one.
    struct screen_site
    {
        std::size_t s_lo, s_hi, e_lo, windows;
    };
    [[nodiscard]] screen_site site_of(std::size_t p);
    void add_screen_substitution(std::string_view seq, std::size_t p, char b,
                                 screen_site const & t);
    void substitute(io::record_batch const & r1, io::record_batch const * r2,
                    std::span<any_filter const * const> filters, decision_rule const & rule);
    void collect_positions(std::string_view seq, std::string_view qual);
    void add_substitutions(std::uint32_t unit, std::string_view seq);
    void revote(label_vote & vote, decision_rule const & rule);

    batch_engine const & engine_;
    std::vector<std::uint32_t> units_, offset_, screen_units_, screen_offset_, rescued_,
        rescued_units_, hits_, substituted_hits_;
    std::vector<std::uint64_t> keys_, values_, sub_keys_, sub_values_, original_, codes_, forward_,
        reverse_, kmer_codes_, kmer_orders_, changed_codes_, changed_orders_, screen_codes_;
    std::vector<std::size_t> unchanged_, prefix_, suffix_;
    std::vector<std::uint32_t> block_of_; //!< i / window for i < k
    std::vector<char> anchored_;          //!< per unit of the batch: the screen found a hit
    std::vector<char> selected_;          //!< per k-mer of the screened read: one of its minimizers
    std::vector<std::pair<int, std::uint32_t>> positions_;
    std::vector<group> groups_;
    std::string buffer_;
    std::uint32_t position_id_ = 0;
    batch_engine_query_scratch q_;
    std::unique_ptr<minimizer_scratch> minimizers_;
};

} // namespace ksieve
