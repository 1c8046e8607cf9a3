// ksieve build with labels (--label, --label-by, --label-map): one filter per label, built from the
// label's inputs or records, then united with their label sets (combine_labeled), so that a labeled
// build and a labeled merge of per-label filters give the same filter.
#include "app_detail.hpp"
#include "read_run.hpp"

#include <ksieve/filters/common/labels.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>
#include <ksieve/filters/support/cancel.hpp>
#include <ksieve/filters/support/error.hpp>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>

namespace ksieve
{

void parse_label(std::string const & text, build_args & args)
{
    std::size_t const eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        throw usage_error{"--label '" + text + "': expected NAME=FILE[,FILE...]"};
    std::string const name = text.substr(0, eq);
    check_label_name(name);
    std::vector<std::string> files;
    for (std::size_t start = eq + 1;;)
    {
        std::size_t const comma = text.find(',', start);
        std::string const file = text.substr(start, comma - start);
        if (file.empty())
            throw usage_error{"--label '" + text + "': an empty file name"};
        files.push_back(file);
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    for (auto & [n, f] : args.labels)
        if (n == name)
        {
            f.insert(f.end(), files.begin(), files.end()); // one label, given twice
            return;
        }
    args.labels.emplace_back(name, std::move(files));
}

namespace detail
{

namespace
{

// record name -> label, from a TSV of two columns (lines starting with '#' and empty lines
// skipped).
std::map<std::string, std::string, std::less<>> read_label_map(std::string const & path)
{
    std::ifstream in{path};
    if (!in)
        throw io_error{"--label-map '" + path + "': cannot be read"};
    std::map<std::string, std::string, std::less<>> map;
    std::string line;
    for (std::uint64_t n = 1; std::getline(in, line); ++n)
    {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.empty() || line.front() == '#')
            continue;
        std::size_t const tab = line.find('\t');
        if (tab == std::string::npos || tab == 0 || tab + 1 == line.size() ||
            line.find('\t', tab + 1) != std::string::npos)
            throw input_error{"--label-map '" + path + "', line " + std::to_string(n) +
                              ": expected 'record<TAB>label'"};
        std::string const record = line.substr(0, tab);
        std::string const label = line.substr(tab + 1);
        if (!is_label_name(label))
            throw input_error{"--label-map '" + path + "', line " + std::to_string(n) +
                              ": label '" + printable_label(label) + "': " + label_name_rule()};
        auto const [it, fresh] = map.emplace(record, label);
        if (!fresh && it->second != label)
            throw input_error{"--label-map '" + path + "', line " + std::to_string(n) +
                              ": record '" + record + "' has two labels"};
    }
    if (in.bad())
        throw io_error{"--label-map '" + path + "': read error"};
    return map;
}

// The label filters being built: one per label, in order of first appearance.
class label_filters
{
public:
    label_filters(filter_config const & cfg, key_part_range const * range)
        : cfg_{cfg}, range_{range}
    {
    }
    std::size_t index(std::string const & name)
    {
        auto const [it, fresh] = index_.try_emplace(name, names_.size());
        if (fresh)
        {
            names_.push_back(name);
            filters_.push_back(make_filter_within_memory(cfg_, cfg_.expected != 0));
            if (range_ != nullptr)
                filters_.back()->set_parts(key_parts::one(range_->index, range_->count));
        }
        return it->second;
    }
    [[nodiscard]] any_filter & filter(std::size_t const i) { return *filters_[i]; }
    [[nodiscard]] std::vector<std::string> const & names() const noexcept { return names_; }
    [[nodiscard]] std::vector<any_filter const *> views() const
    {
        std::vector<any_filter const *> v;
        for (auto const & f : filters_)
            v.push_back(f.get());
        return v;
    }

private:
    filter_config cfg_;
    key_part_range const * range_;
    std::map<std::string, std::size_t, std::less<>> index_;
    std::vector<std::string> names_;
    std::vector<std::unique_ptr<any_filter>> filters_;
};

// Streams `input` into the label filters as the next input of `run`: each unit (read or pair) into
// the filter of label_of(item, u).
template <typename LabelOf>
void stream_labeled(input_args const & input, unsigned const threads, batch_engine & engine,
                    label_filters & filters, std::string const & output, read_run & run,
                    LabelOf && label_of)
{
    run.open_input(input, reader_opts(threads, false), threads);
    batch_keys keys;
    std::vector<std::uint64_t> kmers;
    std::vector<std::size_t> unit_label;
    std::vector<unit_result> others; // known: a unit of another label (not inserted)
    run.stream(
        [&](work_item & item)
        {
            std::size_t const n = item.r1.size();
            unit_label.resize(n);
            for (std::size_t u = 0; u < n; ++u)
                unit_label[u] = label_of(item, u);
            for_each_key_piece(
                engine, item, keys, kmers,
                [&](batch_keys const & piece, std::span<std::size_t const> const owner)
                {
                    std::vector<std::size_t> labels_here;
                    for (std::size_t w = 0; w < piece.units(); ++w)
                        labels_here.push_back(unit_label[owner.empty() ? w : owner[w]]);
                    std::vector<std::size_t> distinct = labels_here;
                    std::sort(distinct.begin(), distinct.end());
                    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
                    for (std::size_t const l : distinct)
                    {
                        others.assign(piece.units(), unit_result{});
                        for (std::size_t w = 0; w < piece.units(); ++w)
                            others[w].known = labels_here[w] != l;
                        engine.insert(filters.filter(l), piece,
                                      distinct.size() == 1 ? nullptr : &others, output);
                    }
                },
                current_memory_plan().piece_bases);
            set_kmer_counts(item, kmers);
        });
}

// The fingerprint width of a quotient filter of `cfg` sized for cfg.expected k-mers (64 where
// nothing is expected: the per-label filters' width is kept).
unsigned sized_fingerprint_bits(filter_config const & cfg)
{
    if (cfg.type != filter_type::quotient || cfg.expected == 0)
        return 64;
    std::size_t const shards = std::size_t{1} << cfg.shard_bits;
    return quotient_filter::create(cfg, cfg.kmer.key_bits() - cfg.shard_bits,
                                   (cfg.expected + shards - 1) / shards)
        .fingerprint_bits();
}

} // namespace

void set_kmer_counts(work_item & item, std::span<std::uint64_t const> const kmers)
{
    item.results.assign(item.r1.size(), unit_result{});
    for (std::size_t u = 0; u < item.r1.size(); ++u)
        item.results[u].kmers = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(kmers[u], std::numeric_limits<std::uint32_t>::max()));
}

void check_label_options(build_args const & args)
{
    if (!args.label_by.empty() && args.label_by != "file" && args.label_by != "record")
        throw usage_error{"--label-by '" + args.label_by + "': expected file or record"};
    if (!args.label_map.empty() && args.label_by != "record")
        throw usage_error{"--label-map needs --label-by record"};
    if (!args.labeled())
        return;
    if (args.filter.type != filter_type::quotient)
        throw usage_error{"labels need --type qf"};
    if (args.no_counts)
        throw usage_error{"--no-counts with labels: a labeled filter keeps label sets, not counts"};
    if (!args.input.inputs.empty() && args.label_by.empty())
        throw usage_error{"inputs besides --label need --label-by file or record to be labeled"};
    if (args.label_by == "file")
        for (std::string const & file : args.input.inputs)
            if (!is_label_name(label_of_path(file)))
                throw usage_error{"--label-by file: input '" + file + "' gives the label '" +
                                  printable_label(label_of_path(file)) +
                                  "' (its file name without extensions): " + label_name_rule()};
    if (args.input.inputs.empty() && args.labels.empty())
        throw usage_error{"--label-by needs inputs"};
}

run_summary run_labeled_build(build_args const & args, filter_config const & cfg,
                              unsigned const threads, read_run & run)
{
    key_part_range const * const range = args.part ? &*args.part : nullptr;
    // Per-label filters share the layout and fingerprint width of an unsized filter (the widest),
    // and grow from small tables; the union is then cut to the width of one sized for all inputs.
    filter_config label_cfg = cfg;
    label_cfg.expected = 0;
    label_filters filters{label_cfg, range};
    batch_engine engine{cfg.kmer, threads, range};
    // the files, all under one label
    auto stream_under = [&](std::string const & name, std::vector<std::string> const & files)
    {
        std::size_t const l = filters.index(name);
        input_args in = args.input;
        in.inputs = files;
        stream_labeled(in, threads, engine, filters, args.output, run,
                       [l](work_item const &, std::size_t) { return l; });
    };
    for (auto const & [name, files] : args.labels)
        stream_under(name, files);
    if (args.label_by == "file")
        for (std::string const & file : args.input.inputs)
            stream_under(label_of_path(file), {file});
    else if (args.label_by == "record")
    {
        auto const map = args.label_map.empty() ? std::map<std::string, std::string, std::less<>>{}
                                                : read_label_map(args.label_map);
        std::uint64_t record = 0;
        stream_labeled(args.input, threads, engine, filters, args.output, run,
                       [&](work_item const & item, std::size_t const u)
                       {
                           std::string_view const name = item.r1[u].name;
                           ++record;
                           if (map.empty())
                           {
                               if (!is_label_name(name))
                                   throw input_error{"record " + std::to_string(record) + " of " +
                                                     quoted_names(args.input.inputs) +
                                                     ": the record name '" + printable_label(name) +
                                                     "' is not a label name (" + label_name_rule() +
                                                     "); give labels with --label-map"};
                               return filters.index(std::string{name});
                           }
                           auto const it = map.find(name);
                           if (it == map.end())
                               throw input_error{
                                   "record " + std::to_string(record) + " ('" + std::string{name} +
                                   "') has no label in --label-map '" + args.label_map + "'"};
                           return filters.index(it->second);
                       });
    }
    auto const views = filters.views();
    auto filter = combine_labeled(views, filters.names(), filters.names(), set_operation::unite,
                                  threads, sized_fingerprint_bits(cfg), cfg.expected);
    fit_filter(*filter, 0.0, threads);
    return run.finish(*filter, args.output);
}

} // namespace detail

} // namespace ksieve
