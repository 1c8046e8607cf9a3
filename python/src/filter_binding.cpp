// ksieve.Filter: a filter file opened as `classify -f` opens it, its header and labels, and the
// classification of sequences by the engine's read_classifier (exact hits), the code behind
// `classify --report`: the same k-mers, hits, class and label by construction.
#include "app_detail.hpp"
#include "binding.hpp"

#include <ksieve/engine/read_classifier.hpp>
#include <ksieve/filters/kmers/low_complexity.hpp>
#include <ksieve/filters/support/error.hpp>

#include <pybind11/stl.h>

#include <array>
#include <cstdio>
#include <optional>
#include <sstream>

namespace ksieve::python
{

namespace
{

/*! \brief The class of one unit (a read, or a pair): as a row of `classify --report`. */
struct classification
{
    std::uint32_t kmers{0};
    std::uint32_t hits{0};
    bool known{false};
    std::optional<std::string> label; // labeled filters: the name, "ambiguous", or "-" (novel)
};

/*! \brief The classes of a batch of units, column by column. */
struct classifications
{
    std::vector<std::uint32_t> kmers, hits, label;
    std::vector<bool> known;
    std::shared_ptr<label_table const> labels; // null: an unlabeled filter

    [[nodiscard]] std::size_t size() const noexcept { return kmers.size(); }

    // the report's label column for unit u
    [[nodiscard]] std::string label_name(std::size_t const u) const
    {
        std::uint32_t const l = label[u];
        return l == unit_result::no_label    ? std::string{"-"}
               : l == unit_result::ambiguous ? std::string{"ambiguous"}
                                             : labels->names.at(l);
    }
    [[nodiscard]] classification at(std::size_t const u) const
    {
        classification c{kmers[u], hits[u], known[u], std::nullopt};
        if (labels != nullptr)
            c.label = label_name(u);
        return c;
    }
};

// The rule of classify for these options (None: classify's default), refused as classify refuses
// it for this filter. \throws usage_error, incompatible_error
decision_rule rule_for(any_filter const & filter, std::string const & path,
                       std::optional<double> const fraction,
                       std::optional<std::uint64_t> const hits, std::uint64_t const min_count)
{
    classify_args args;
    args.filters = {path};
    args.out.min_hit_fraction = fraction.value_or(classify_default_fraction);
    args.out.min_hits = hits.value_or(classify_default_min_hits);
    args.out.min_count = min_count;
    detail::check_classify_options(args);
    if (min_count > 1 && filter.type() != filter_type::quotient)
        throw usage_error{"min_count above 1 needs a quotient filter; '" + path + "' is a " +
                          std::string{to_string(filter.type())} + " filter"};
    if (min_count > 1 && filter.labeled())
        throw usage_error{"min_count above 1 with the labeled filter '" + path +
                          "': its counts are label sets"};
    std::array<any_filter const *, 1> const views{&filter};
    check_parts_complete(views, args.filters);
    return detail::classify_rule(args.out);
}

// Qualities given for reads: one string per read, as long as its sequence (none: empty).
void check_qualities(std::vector<std::string> const & quals, std::vector<std::string> const & seqs,
                     char const * const what)
{
    if (quals.empty())
        return;
    if (quals.size() != seqs.size())
        throw usage_error{std::string{what} + ": " + std::to_string(quals.size()) +
                          " quality strings for " + std::to_string(seqs.size()) + " sequences"};
    for (std::size_t i = 0; i < quals.size(); ++i)
        if (quals[i].size() != seqs[i].size())
            throw usage_error{std::string{what} + ": read " + std::to_string(i + 1) + " has " +
                              std::to_string(quals[i].size()) + " qualities for " +
                              std::to_string(seqs[i].size()) + " bases"};
}

// Every unit of seqs (with mates, when given) classified against the filter.
// (With qualities of each mate, or none.) \throws usage_error for lists of other lengths
classifications classify_units(any_filter const & filter, std::vector<std::string> const & seqs,
                               std::vector<std::string> const & mates, decision_rule const & rule,
                               unsigned const threads, std::vector<std::string> const & quals = {},
                               std::vector<std::string> const & quals2 = {})
{
    if (!mates.empty() && mates.size() != seqs.size())
        throw usage_error{"mates: " + std::to_string(mates.size()) + " sequences for " +
                          std::to_string(seqs.size()) + " reads"};
    check_qualities(quals, seqs, "qualities");
    check_qualities(quals2, mates, "qualities2");
    classifications out;
    out.labels = filter.labels();
    std::array<any_filter const *, 1> const views{&filter};
    // (exact hits: the module reports every read's hits)
    read_classifier classifier{views, rule, true, resolve_threads(threads)};
    for_each_batch(
        seqs, mates,
        [&](work_item & item)
        {
            classifier.decide(item);
            for (unit_result const & r : item.results)
            {
                out.kmers.push_back(r.kmers);
                out.hits.push_back(r.hits);
                out.known.push_back(r.known);
                out.label.push_back(r.label);
            }
        },
        quals, quals2);
    return out;
}

// The count of each looked-up key of `seq` in the filter, in sequence order (the sampled keys).
std::vector<std::uint64_t> key_counts(any_filter const & filter, std::string const & seq)
{
    std::vector<std::uint64_t> counts;
    batch_engine engine{filter.kmer(), 1};
    std::array<any_filter const *, 1> const views{&filter};
    std::string const one[] = {seq};
    for_each_batch(one, {},
                   [&](work_item & item)
                   {
                       batch_keys keys;
                       engine.extract(item.r1, nullptr, keys);
                       engine.query(views, keys);
                       auto const first =
                           keys.values.begin() + static_cast<std::ptrdiff_t>(keys.offset.at(0));
                       counts.assign(first, first + keys.count.at(0));
                   });
    return counts;
}

// Sequences of a Python argument that may be None (no mates).
std::vector<std::string> optional_sequences(py::object const & seqs, char const * const what)
{
    return seqs.is_none() ? std::vector<std::string>{} : sequences_of(seqs, what);
}

py_filter open_filter(std::string const & path, unsigned const threads)
{
    py_filter f = [&]
    {
        py::gil_scoped_release release;
        return py_filter::open(path, threads);
    }();
    // a saturated filter calls nearly every read known: classify's warning, as a Python warning
    try
    {
        detail::check_saturation(*f.get(), path, true);
    }
    catch (error const & e)
    {
        if (PyErr_WarnEx(PyExc_RuntimeWarning, e.what(), 1) != 0)
            throw py::error_already_set{};
    }
    return f;
}

py::object filter_info(py_filter const & f)
{
    std::ostringstream text;
    {
        auto const keep = f.get(); // (the file stays open meanwhile)
        py::gil_scoped_release release;
        info_args args;
        args.filter = f.path();
        args.json = true;
        run_info(args, text);
    }
    return py::module_::import("json").attr("loads")(text.str());
}

void register_results(py::module_ & m)
{
    py::class_<classification>(m, "Classification",
                               "The class of one read (or pair): a row of classify --report.")
        .def_readonly("kmers", &classification::kmers, "k-mers looked up (the sampled keys)")
        .def_readonly("hits", &classification::hits,
                      "those found in the filter (count >= min_count)")
        .def_readonly("known", &classification::known, "whether the rule calls it known")
        .def_property_readonly(
            "cls", [](classification const & c) { return c.known ? "known" : "novel"; },
            "'known' or 'novel'")
        .def_readonly("label", &classification::label,
                      "labeled filters: the label, 'ambiguous', or '-' (novel); else None")
        .def("__repr__",
             [](classification const & c)
             {
                 return "Classification(kmers=" + std::to_string(c.kmers) +
                        ", hits=" + std::to_string(c.hits) + ", cls='" +
                        (c.known ? "known" : "novel") + "'" +
                        (c.label ? ", label='" + *c.label + "'" : std::string{}) + ")";
             });
    py::class_<classifications>(m, "Classifications",
                                "The classes of a batch of reads (or pairs), column by column; "
                                "indexing gives a Classification.")
        .def("__len__", &classifications::size)
        .def("__getitem__",
             [](classifications const & c, std::ptrdiff_t i)
             {
                 auto const n = static_cast<std::ptrdiff_t>(c.size());
                 if (i < 0)
                     i += n;
                 if (i < 0 || i >= n)
                     throw py::index_error{"index out of range"};
                 return c.at(static_cast<std::size_t>(i));
             })
        .def_readonly("kmers", &classifications::kmers, "list: k-mers looked up per read")
        .def_readonly("hits", &classifications::hits, "list: hits per read")
        .def_readonly("known", &classifications::known, "list: whether each read is known")
        .def_property_readonly(
            "classes",
            [](classifications const & c)
            {
                std::vector<char const *> v;
                v.reserve(c.size());
                for (bool const k : c.known)
                    v.push_back(k ? "known" : "novel");
                return v;
            },
            "list: 'known' or 'novel' per read")
        .def_property_readonly(
            "labels",
            [](classifications const & c) -> py::object
            {
                if (c.labels == nullptr)
                    return py::none();
                py::list l;
                for (std::size_t u = 0; u < c.size(); ++u)
                    l.append(c.label_name(u));
                return l;
            },
            "labeled filters: list of labels ('ambiguous', '-' for novel); else None");
}

// A read-only property of the filter: fn(the filter). \throws error once closed
template <typename Fn> void filter_property(py::class_<py_filter> & c, char const * name, Fn fn)
{
    c.def_property_readonly(name, [fn](py_filter const & f) { return fn(*f.get()); });
}

// The header of the file and its labels, as `info --json` names them.
void register_header(py::class_<py_filter> & c)
{
    using filter = any_filter const &;
    filter_property(c, "type", [](filter f) { return std::string{to_string(f.type())}; });
    filter_property(c, "k", [](filter f) { return f.kmer().k; });
    filter_property(c, "canonical", [](filter f) { return f.kmer().canonical; });
    filter_property(c, "hash_seed",
                    [](filter f)
                    {
                        char text[32];
                        std::snprintf(text, sizeof text, "0x%016llx",
                                      static_cast<unsigned long long>(f.kmer().seed));
                        return std::string{text};
                    });
    filter_property(c, "sampling",
                    [](filter f)
                    {
                        return f.kmer().sampled() ? "minimizer:" + std::to_string(f.kmer().window)
                                                  : std::string{"all"};
                    });
    filter_property(c, "mask", [](filter f) { return mask_name(f.kmer()); });
    filter_property(c, "shards", [](filter f) { return f.num_shards(); });
    filter_property(c, "key_parts", [](filter f) { return f.parts().describe(); });
    filter_property(c, "target_fpr", [](filter f) { return f.target_fpr(); });
    filter_property(c, "exact",
                    [](filter f)
                    { return f.type() == filter_type::quotient && f.target_fpr() == 0.0; });
    filter_property(c, "expected", [](filter f) { return f.expected(); });
    c.def_property_readonly("format_version",
                            [](py_filter const & f) { return f.file()->header().version; });
    c.def_property_readonly("file_bytes",
                            [](py_filter const & f) { return f.file()->file_size(); });
    filter_property(c, "payload_bytes", [](filter f) { return f.stats().bytes; });
    filter_property(c, "distinct_kmers", [](filter f) { return f.stats().distinct; });
    filter_property(c, "total_count", [](filter f) { return f.stats().total_count; });
    filter_property(c, "estimated_fpr", [](filter f) { return f.stats().estimated_fpr; });
    filter_property(c, "labeled", [](filter f) { return f.labeled(); });
    c.def_property_readonly(
        "labels",
        [](py_filter const & f)
        {
            auto const & t = f.get()->labels();
            return t == nullptr ? std::vector<std::string>{} : t->names;
        },
        "the label names of a labeled filter ([] otherwise)");
}

// The counts of the looked-up keys of the one sequence `seq` (`method` takes it).
std::vector<std::uint64_t> one_sequence_counts(any_filter const & filter, py::object const & seq,
                                               char const * const method)
{
    std::vector<std::string> const s = sequences_of(seq, "seq");
    if (s.size() != 1)
        throw py::type_error{std::string{method} + " takes one sequence"};
    py::gil_scoped_release release;
    return key_counts(filter, s.front());
}

// Filter.kmer_labels: the label set of each looked-up key of the sequence.
std::vector<std::vector<std::string>> kmer_label_sets(py_filter const & f, py::object const & seq)
{
    auto const filter = f.get();
    if (!filter->labeled())
        throw error{"'" + f.path() + "' is not a labeled filter"};
    std::vector<std::uint64_t> const counts = one_sequence_counts(*filter, seq, "kmer_labels");
    label_table const & t = *filter->labels();
    std::vector<std::vector<std::string>> out(counts.size());
    for (std::size_t i = 0; i < counts.size(); ++i)
        if (counts[i] != 0 && counts[i] - 1 < t.classes.size()) // (else: a damaged file)
            for (std::uint32_t const l : t.classes[counts[i] - 1])
                out[i].push_back(t.names[l]);
    return out;
}

using opt_double = std::optional<double>;
using opt_count = std::optional<std::uint64_t>;

// Filter.classify (`one`: a single unit) and Filter.classify_batch.
classifications classify_objects(py_filter const & f, py::object const & seqs,
                                 py::object const & mates, opt_double const fraction,
                                 opt_count const hits, std::uint64_t const min_count,
                                 unsigned const threads, py::object const & quals,
                                 py::object const & quals2, bool const one)
{
    auto const filter = f.get();
    std::vector<std::string> const r1 = sequences_of(seqs, one ? "seq" : "seqs");
    std::vector<std::string> const r2 = optional_sequences(mates, one ? "mate" : "mates");
    if (one && (r1.size() != 1 || r2.size() > 1))
        throw py::type_error{"classify takes one sequence (classify_batch takes many)"};
    std::vector<std::string> const q1 = optional_sequences(quals, "qualities");
    std::vector<std::string> const q2 = optional_sequences(quals2, "qualities2");
    decision_rule const rule = rule_for(*filter, f.path(), fraction, hits, min_count);
    py::gil_scoped_release release;
    return classify_units(*filter, r1, r2, rule, threads, q1, q2);
}

// What a filter answers about sequences.
void register_queries(py::class_<py_filter> & c)
{
    c.def("info", &filter_info, "What `ksieve info --json` says about the file, as a dict.");
    c.def(
        "classify",
        [](py_filter const & f, py::object const & seq, py::object const & mate,
           opt_double fraction, opt_count hits, std::uint64_t min_count, py::object const & qual,
           py::object const & qual2) {
            return classify_objects(f, seq, mate, fraction, hits, min_count, 1, qual, qual2, true)
                .at(0);
        },
        py::arg("seq"), py::arg("mate") = py::none(), py::kw_only(),
        py::arg("min_hit_fraction") = py::none(), py::arg("min_hits") = py::none(),
        py::arg("min_count") = 1, py::arg("qualities") = py::none(),
        py::arg("qualities2") = py::none(),
        "Classify one read (str or bytes), or a pair with `mate`, as classify --report does; "
        "`qualities` (and `qualities2` of the mate): the FASTQ quality string, which the second "
        "look uses.");
    c.def(
        "classify_batch",
        [](py_filter const & f, py::object const & seqs, py::object const & mates,
           opt_double fraction, opt_count hits, std::uint64_t min_count, unsigned threads,
           py::object const & quals, py::object const & quals2)
        {
            return classify_objects(f, seqs, mates, fraction, hits, min_count, threads, quals,
                                    quals2, false);
        },
        py::arg("seqs"), py::arg("mates") = py::none(), py::kw_only(),
        py::arg("min_hit_fraction") = py::none(), py::arg("min_hits") = py::none(),
        py::arg("min_count") = 1, py::arg("threads") = 1, py::arg("qualities") = py::none(),
        py::arg("qualities2") = py::none(),
        "Classify reads (a list of str or bytes; pairs with `mates`), as classify --report does; "
        "threads=0 uses every core; `qualities` (`qualities2`: of the mates), a list of FASTQ "
        "quality strings as long as the reads, which the second look uses.");
    c.def(
        "lookup",
        [](py_filter const & f, py::object const & seq)
        { return one_sequence_counts(*f.get(), seq, "lookup"); },
        py::arg("seq"),
        "The count in the filter of each k-mer of the sequence that a read's classification "
        "looks up (every k-mer, or the minimizers with sampling), in sequence order; 0: absent.");
    c.def("kmer_labels", &kmer_label_sets, py::arg("seq"),
          "Labeled filters: the labels of each looked-up k-mer of the sequence (as lookup orders "
          "them); [] for a k-mer the filter does not hold.");
}

} // namespace

void register_filter(py::module_ & m)
{
    register_results(m);
    py::class_<py_filter> c(m, "Filter",
                            "A filter file opened read-only and memory-mapped, as classify -f "
                            "opens it (Filter.open or ksieve.open_filter).");
    c.def_static("open", &open_filter, py::arg("path"), py::kw_only(), py::arg("threads") = 1,
                 "Open a filter file (every checksum verified, on `threads` threads).");
    c.def_property_readonly("path", &py_filter::path);
    c.def_property_readonly("closed", &py_filter::closed);
    c.def("close", &py_filter::close, "Let go of the file's mapping.");
    c.def(
        "__enter__", [](py_filter & f) -> py_filter & { return f; },
        py::return_value_policy::reference);
    c.def("__exit__", [](py_filter & f, py::args const &) { f.close(); });
    c.def("__repr__", [](py_filter const & f)
          { return "ksieve.Filter('" + f.path() + "'" + (f.closed() ? ", closed)" : ")"); });
    register_header(c);
    register_queries(c);
    m.def("open_filter", &open_filter, py::arg("path"), py::kw_only(), py::arg("threads") = 1,
          "Filter.open(path).");
}

} // namespace ksieve::python
