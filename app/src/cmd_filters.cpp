// merge and info: the commands that work on filter files.
#include <ksieve/filters/error.hpp>
#include <ksieve/filters/filter_file.hpp>
#include <ksieve/filters/memory_budget.hpp>
#include <ksieve/io/io.hpp>
#include <ksieve/filters/sharded_filter.hpp>
#include <ksieve/app/commands.hpp>
#include <ksieve/app/runtime.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <ostream>

namespace ksieve
{

shard_range parse_shard_range(std::string const & text)
{
    auto const slash = text.find('/');
    auto bad = [&] {
        return usage_error{"--shard expects I/S with 0 <= I < S (e.g. 0/4), got '" + text + "'"};
    };
    if (slash == std::string::npos || slash == 0 || slash + 1 >= text.size())
        throw bad();
    auto parse = [&](std::string const & s) {
        if (s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9)
            throw bad();
        return std::stoull(s);
    };
    shard_range r{parse(text.substr(0, slash)), parse(text.substr(slash + 1))};
    if (r.count == 0 || r.index >= r.count)
        throw bad();
    if (r.count > key_parts::max_split)
        throw usage_error{"--shard I/S: S is at most " + std::to_string(key_parts::max_split) + ", got '" +
                          text + "'"};
    return r;
}

void parse_expected(std::string const & text, filter_args & f)
{
    f.expected = 0;
    f.expected_auto = false;
    if (text.empty())
        return;
    if (text == "auto")
    {
        f.expected_auto = true;
        return;
    }
    auto const bad = [&] {
        return usage_error{"--expected expects a positive number of distinct k-mers (such as 3000000000 or 3e9) or "
                           "'auto', got '" + text + "'"};
    };
    if (text.find_first_not_of("0123456789") == std::string::npos)
    {
        if (text.size() > 19 || text.find_first_not_of('0') == std::string::npos)
            throw bad();
        f.expected = std::stoull(text);
        return;
    }
    // scientific notation for an integer: 3e9, 3.1e9
    std::size_t const e = text.find_first_of("eE");
    if (e == std::string::npos || e == 0 || text.find_first_not_of("0123456789.", 0) != e ||
        text.find_first_not_of("0123456789", e + 1) != std::string::npos || e + 1 == text.size() ||
        text.size() - e > 3)
        throw bad();
    double const v = std::strtod(text.c_str(), nullptr);
    if (!(v >= 1 && v < 1e19) || v != std::floor(v))
        throw bad();
    f.expected = static_cast<std::uint64_t>(v);
}

void parse_sampling(std::string const & text, filter_args & f)
{
    f.window = 1;
    if (text.empty() || text == "all")
        return;
    std::string const prefix = "minimizer:";
    std::string const w = text.compare(0, prefix.size(), prefix) == 0 ? text.substr(prefix.size()) : std::string{};
    if (w.empty() || w.size() > 4 || w.find_first_not_of("0123456789") != std::string::npos || std::stoul(w) < 1 ||
        std::stoul(w) > max_sampling_window)
        throw usage_error{"--sampling expects 'all' or 'minimizer:W' with 1 <= W <= " +
                          std::to_string(max_sampling_window) + ", got '" + text + "'"};
    f.window = static_cast<std::uint32_t>(std::stoul(w));
}

namespace
{
std::string quoted_names(std::vector<std::string> const & names)
{
    std::string s;
    for (std::size_t i = 0; i < names.size() && i < 4; ++i)
        s += (i == 0 ? "'" : ", '") + names[i] + "'";
    if (names.size() > 4)
        s += " and " + std::to_string(names.size() - 4) + " more";
    return s;
}
} // namespace

combine_summary run_merge(merge_args const & args)
{
    auto const t0 = std::chrono::steady_clock::now();
    std::string const verb = operation_name(args.op);
    if (args.inputs.empty())
        throw usage_error{verb + " needs at least one input filter"};
    if (args.output.empty())
        throw usage_error{verb + " needs -o/--output"};
    // The output may be one of the inputs (an incremental union): it is written to a temporary and renamed
    // over the input only at the end, while the input's mapping keeps the old file readable.
    unsigned const threads = resolve_threads(args.common.threads);
    std::vector<std::unique_ptr<any_filter>> owned;
    std::vector<any_filter const *> inputs;
    for (auto const & path : args.inputs)
    {
        owned.push_back(load_filter(path));
        inputs.push_back(owned.back().get());
        // verified; its pages are read again shard by shard when they are combined
        for (std::size_t s = 0; s < inputs.back()->num_shards(); ++s)
            inputs.back()->release_shard(s);
    }
    io::output_file out{args.output};
    std::unique_ptr<any_filter> merged;
    try
    {
        merged = combine_filters(inputs, args.inputs, args.op, args.min_count, threads);
    }
    catch (memory_limit_error const & e)
    {
        throw error{"cannot " + verb + " " + quoted_names(args.inputs) + " into '" + args.output + "': " + e.what()};
    }
    catch (std::bad_alloc const &)
    {
        throw error{"cannot " + verb + " " + quoted_names(args.inputs) + " into '" + args.output + "': out of memory"};
    }
    throw_if_interrupted();
    merged->save(out.write_path());
    throw_if_interrupted();
    out.commit();
    combine_summary s;
    s.distinct = merged->stats().distinct;
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s;
}

namespace
{

std::string sampling_name(kmer_params const & k)
{
    return k.sampled() ? "minimizer:" + std::to_string(k.window) : std::string{"all"};
}

std::string_view distinct_kind(any_filter const & f)
{
    switch (f.type())
    {
    case filter_type::quotient: return f.target_fpr() == 0.0 ? "exact" : "distinct fingerprints";
    case filter_type::cuckoo: return "stored fingerprints";
    default: return "estimate";
    }
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
    double const bits_per_kmer = s.distinct == 0 ? 0.0 : 8.0 * static_cast<double>(s.bytes) / static_cast<double>(s.distinct);
    if (args.json)
    {
        nlohmann::ordered_json j;
        j["file"] = args.filter;
        j["format_version"] = h.version;
        j["type"] = std::string{to_string(filter->type())};
        j["k"] = h.kmer.k;
        j["canonical"] = h.kmer.canonical;
        j["hash"] = "mix2k_v1";
        j["hash_seed"] = seed;
        j["sampling"] = sampling_name(h.kmer);
        j["shards"] = filter->num_shards();
        j["key_split"] = filter->parts().split;
        j["key_parts"] = filter->parts().describe();
        j["target_fpr"] = h.fpr;
        j["exact"] = filter->type() == filter_type::quotient && h.fpr == 0.0;
        j["expected"] = h.expected;
        j["file_bytes"] = file->file_size();
        j["payload_bytes"] = s.bytes;
        j["slots"] = s.slots;
        j["used"] = s.used;
        j["load"] = s.load;
        j["distinct_kmers"] = s.distinct;
        j["distinct_kind"] = std::string{distinct_kind(*filter)};
        j["total_count"] = s.total_count;
        j["bits_per_kmer"] = bits_per_kmer;
        j["estimated_fpr"] = s.estimated_fpr;
        out << j.dump(2) << '\n';
        return;
    }
    auto row = [&](char const * key, auto const & value) { out << key << '\t' << value << '\n'; };
    row("file", args.filter);
    row("format_version", h.version);
    row("type", to_string(filter->type()));
    row("k", h.kmer.k);
    row("canonical", h.kmer.canonical ? "yes" : "no");
    row("sampling", sampling_name(h.kmer));
    row("hash", std::string{"mix2k_v1 seed "} + seed);
    row("shards", filter->num_shards());
    if (filter->parts().complete())
        row("key_parts", "all");
    else
        row("key_parts", filter->parts().describe() +
                             " (from build --shard; merge it with, or classify it beside, " +
                             filter->parts().describe_missing() + ")");
    row("target_fpr", h.fpr);
    row("exact", filter->type() == filter_type::quotient && h.fpr == 0.0 ? "yes" : "no");
    if (h.expected == 0 && filter->type() == filter_type::quotient)
        row("expected", "0 (not given: fingerprints sized for up to 2^30 k-mers, so that such filters merge exactly)");
    else
        row("expected", h.expected);
    row("file_bytes", file->file_size());
    row("payload_bytes", s.bytes);
    row("slots", s.slots);
    row("used", s.used);
    row("load", s.load);
    row("distinct_kmers", std::to_string(s.distinct) + " (" + std::string{distinct_kind(*filter)} + ")");
    row("total_count", s.total_count);
    row("bits_per_kmer", bits_per_kmer);
    row("estimated_fpr", s.estimated_fpr);
}

} // namespace ksieve
