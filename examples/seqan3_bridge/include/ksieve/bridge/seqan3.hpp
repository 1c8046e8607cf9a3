#pragma once
/*! \file
 * \brief seqan3 bridge: ksieve's k-mer scanner and filters over seqan3 nucleotide ranges
 * (seqan3::dna4_vector, dna5, dna15, views over them), for programs that read sequences with seqan3
 * and ask ksieve filters about them. Its own small target (ksieve::seqan3_bridge) so that the
 * filter library stays standard-library only.
 *
 * A range is turned into its characters (seqan3::to_char: A, C, G, T, and N or another IUPAC code,
 * which breaks k-mers as in ksieve's own readers) and handed to the same code as text input, so a
 * seqan3 range gives the k-mers, minimizers and answers that ksieve gives for the same bases read
 * from FASTA. Thread safety: stateless functions; a filter answers const queries from any number of
 * threads.
 */
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/kmers/kmer.hpp>
#include <ksieve/filters/kmers/low_complexity.hpp>
#include <ksieve/filters/kmers/sampling.hpp>

#include <seqan3/alphabet/concept.hpp>
#include <seqan3/alphabet/nucleotide/concept.hpp>

#include <cstdint>
#include <memory>
#include <ranges>
#include <string>

namespace ksieve::bridge
{

/*! \brief The characters of a seqan3 nucleotide range. */
template <std::ranges::input_range R>
requires seqan3::nucleotide_alphabet<std::ranges::range_value_t<R>>
[[nodiscard]] std::string to_text(R && range)
{
    std::string out;
    if constexpr (std::ranges::sized_range<R>)
        out.reserve(std::ranges::size(range));
    for (auto const c : range)
        out.push_back(seqan3::to_char(c));
    return out;
}

/*! \brief fn(position, code) for every valid k-mer of the range (see kmer_scanner::for_each). */
template <std::ranges::input_range R, typename Fn>
requires seqan3::nucleotide_alphabet<std::ranges::range_value_t<R>>
void for_each_kmer(kmer_scanner const & scanner, R && range, Fn && fn)
{
    std::string const text = to_text(std::forward<R>(range));
    scanner.for_each(text, std::forward<Fn>(fn));
}

/*! \brief What a filter says of one sequence: its looked-up k-mers (every valid k-mer, or its
 * minimizers for a sampled filter, as classify counts them) and how many of them the filter holds
 * with a count of at least min_count. */
struct sequence_hits
{
    std::uint64_t kmers{0};
    std::uint64_t hits{0};
};

/*! \brief Ask `filter` about the k-mers of a seqan3 range, as `ksieve classify` does for one read.
 * \pre min_count >= 1. */
template <std::ranges::input_range R>
requires seqan3::nucleotide_alphabet<std::ranges::range_value_t<R>>
[[nodiscard]] sequence_hits query(any_filter const & filter, R && range,
                                  std::uint64_t const min_count = 1)
{
    kmer_params const & km = filter.kmer();
    kmer_scanner const scanner{km.k, km.canonical, km.code_mask()};
    kmer_hasher const hash = km.hasher();
    std::string const text = to_text(std::forward<R>(range));
    sequence_hits r;
    auto ask = [&](std::uint64_t const code)
    {
        ++r.kmers;
        r.hits += filter.count(hash(code)) >= min_count ? 1 : 0;
    };
    if (km.sampled())
    {
        auto scratch = std::make_unique<minimizer_scratch>();
        for_each_record_minimizer(scanner, text, km.window, km.seed, *scratch,
                                  [&](std::uint64_t const code)
                                  {
                                      if (!low_complexity(code, km.k, km.dust_threshold))
                                          ask(code); // a masked minimizer is no k-mer
                                  });
    }
    else
        scanner.for_each(text, [&](std::size_t, std::uint64_t const code) { ask(code); });
    return r;
}

} // namespace ksieve::bridge
