// ksieve info: what a filter file holds, as rows or as JSON.
#include "app_detail.hpp"

#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/kmers/low_complexity.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace ksieve
{

namespace
{

std::string sampling_name(kmer_params const & k)
{
    return k.sampled() ? "minimizer:" + std::to_string(k.window) : std::string{"all"};
}

// What a million reads of 150 bases make a lookup touch: a filter larger than the memory left to
// it is read from its file as it is used (the kernel keeps what fits in the page cache), in pages
// of 4 KiB, one per lookup.
struct page_reads
{
    double lookups{0}; // per million reads: every k-mer, or every distinct minimizer
    double bytes{0};   // distinct 4 KiB pages of the tables those lookups touch, in bytes
};

page_reads reads_per_million(kmer_params const & k, std::uint64_t const payload_bytes)
{
    constexpr double read_length = 150;
    constexpr double reads = 1e6;
    constexpr double page = 4096;
    double const kmers = std::max(0.0, read_length - k.k + 1);
    // a random sequence has about 2 / (W + 1) distinct minimizers per k-mer, and one at least
    double const per_read =
        k.sampled() ? std::min(kmers, 1.0 + 2.0 * kmers / (k.window + 1.0)) : kmers;
    page_reads r;
    r.lookups = reads * per_read;
    double const pages = std::max(1.0, std::ceil(static_cast<double>(payload_bytes) / page));
    // distinct pages hit by n uniform lookups into P pages: P (1 - e^(-n / P))
    r.bytes = std::min(static_cast<double>(payload_bytes),
                       page * pages * -std::expm1(-r.lookups / pages));
    return r;
}

std::string_view distinct_kind(any_filter const & f)
{
    switch (f.type())
    {
    case filter_type::quotient:
        return f.target_fpr() == 0.0 ? "exact" : "distinct fingerprints";
    case filter_type::cuckoo:
        return "stored fingerprints";
    default:
        return "estimate";
    }
}

// Labels whose pairs info lists (the matrix grows with the square of the labels).
constexpr std::size_t max_shared_labels = 256;

nlohmann::ordered_json labels_json(label_table const & t)
{
    nlohmann::ordered_json labels = nlohmann::ordered_json::array();
    auto const kmers = t.label_kmers();
    for (std::size_t l = 0; l < t.names.size(); ++l)
        labels.push_back({{"name", t.names[l]}, {"kmers", kmers[l]}});
    return labels;
}

// shared[a][b]: k-mers holding both labels (null where there are too many labels).
nlohmann::ordered_json shared_json(label_table const & t)
{
    if (t.names.size() > max_shared_labels)
        return nullptr;
    auto const m = t.shared_kmers();
    std::size_t const n = t.names.size();
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (std::size_t a = 0; a < n; ++a)
        rows.push_back(
            std::vector<std::uint64_t>(m.begin() + static_cast<std::ptrdiff_t>(a * n),
                                       m.begin() + static_cast<std::ptrdiff_t>(a * n + n)));
    return rows;
}

void label_rows(label_table const & t, std::ostream & out)
{
    out << "labels\t" << t.names.size() << '\n' << "label_classes\t" << t.classes.size() << '\n';
    auto const kmers = t.label_kmers();
    for (std::size_t l = 0; l < t.names.size(); ++l)
        out << "label\t" << t.names[l] << '\t' << kmers[l] << '\n';
    if (t.names.size() > max_shared_labels)
        return;
    auto const m = t.shared_kmers();
    std::size_t const n = t.names.size();
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = a + 1; b < n; ++b)
            out << "shared\t" << t.names[a] << '\t' << t.names[b] << '\t' << m[a * n + b] << '\n';
}

// info --json: the filter's parameters and statistics as one JSON object.
void info_json(info_args const & args, mapped_filter_file const & file, any_filter const & filter,
               char const * const seed, double const bits_per_kmer, std::ostream & out)
{
    filter_stats const s = filter.stats();
    auto const & h = file.header();
    nlohmann::ordered_json j;
    j["file"] = args.filter;
    j["format_version"] = h.version;
    j["type"] = std::string{to_string(filter.type())};
    j["k"] = h.kmer.k;
    j["canonical"] = h.kmer.canonical;
    j["hash"] = "mix2k_v1";
    j["hash_seed"] = seed;
    j["sampling"] = sampling_name(h.kmer);
    j["mask"] = mask_name(h.kmer);
    if (h.kmer.is_spaced())
        j["spaced"] = spaced_name(h.kmer);
    j["shards"] = filter.num_shards();
    j["key_split"] = filter.parts().split;
    j["key_parts"] = filter.parts().describe();
    j["target_fpr"] = h.fpr;
    j["exact"] = filter.type() == filter_type::quotient && h.fpr == 0.0;
    j["expected"] = h.expected;
    j["file_bytes"] = file.file_size();
    j["payload_bytes"] = s.bytes;
    j["slots"] = s.slots;
    j["used"] = s.used;
    j["load"] = s.load;
    j["distinct_kmers"] = s.distinct;
    j["distinct_kind"] = std::string{distinct_kind(filter)};
    j["total_count"] = s.total_count;
    j["bits_per_kmer"] = bits_per_kmer;
    j["estimated_fpr"] = s.estimated_fpr;
    page_reads const pr = reads_per_million(h.kmer, s.bytes);
    j["lookups_per_million_reads"] = static_cast<std::uint64_t>(pr.lookups);
    j["bytes_read_per_million_reads"] = static_cast<std::uint64_t>(pr.bytes);
    if (auto const & t = filter.labels())
    {
        j["labels"] = labels_json(*t);
        j["label_classes"] = t->classes.size();
        j["shared_kmers"] = shared_json(*t);
    }
    // bytes of the file name that are not UTF-8 become U+FFFD
    out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

} // namespace

void run_info(info_args const & args, std::ostream & out)
{
    auto const file = mapped_filter_file::open(args.filter); // once: it may be a pipe
    auto const filter = view_filter(file);
    filter_stats const s = filter->stats();
    auto const & h = file->header();
    char seed[32];
    std::snprintf(seed, sizeof seed, "0x%016llx", static_cast<unsigned long long>(h.kmer.seed));
    double const bits_per_kmer =
        s.distinct == 0 ? 0.0
                        : 8.0 * static_cast<double>(s.bytes) / static_cast<double>(s.distinct);
    if (args.json)
    {
        info_json(args, *file, *filter, seed, bits_per_kmer, out);
        return;
    }
    auto row = [&](char const * key, auto const & value) { out << key << '\t' << value << '\n'; };
    row("file", args.filter);
    row("format_version", h.version);
    row("type", to_string(filter->type()));
    row("k", h.kmer.k);
    row("canonical", h.kmer.canonical ? "yes" : "no");
    row("sampling", sampling_name(h.kmer));
    row("mask", mask_name(h.kmer));
    if (h.kmer.is_spaced())
        row("spaced", spaced_name(h.kmer));
    row("hash", std::string{"mix2k_v1 seed "} + seed);
    row("shards", filter->num_shards());
    if (filter->parts().complete())
        row("key_parts", "all");
    else
        row("key_parts", filter->parts().describe() +
                             " (from build --part; merge it with, or classify it beside, " +
                             filter->parts().describe_missing() + ")");
    row("target_fpr", h.fpr);
    row("exact", filter->type() == filter_type::quotient && h.fpr == 0.0 ? "yes" : "no");
    if (h.expected == 0 && filter->type() == filter_type::quotient)
        row("expected", "0 (not given: fingerprints sized for up to 2^30 k-mers, so that such "
                        "filters merge exactly)");
    else
        row("expected", h.expected);
    row("file_bytes", file->file_size());
    row("payload_bytes", s.bytes);
    row("slots", s.slots);
    row("used", s.used);
    row("load", s.load);
    row("distinct_kmers",
        std::to_string(s.distinct) + " (" + std::string{distinct_kind(*filter)} + ")");
    row("total_count", s.total_count);
    row("bits_per_kmer", bits_per_kmer);
    row("estimated_fpr", s.estimated_fpr);
    page_reads const pr = reads_per_million(h.kmer, s.bytes);
    row("lookups_per_million_reads", static_cast<std::uint64_t>(pr.lookups));
    row("bytes_read_per_million_reads",
        std::to_string(static_cast<std::uint64_t>(pr.bytes)) + " (" +
            format_bytes(static_cast<std::uint64_t>(pr.bytes)) +
            " of its tables, in 4 KiB pages, for 150-base reads: read from the file where the "
            "filter is larger than the memory left to it)");
    if (auto const & t = filter->labels())
        label_rows(*t, out);
}

} // namespace ksieve
