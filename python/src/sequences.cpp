// Sequences from Python (str, bytes, or an iterable of them) into batches of records, cut as the
// command line's readers cut an input file; sequence files read by the command line's readers
// (ksieve.read_batches: qualities and pairs too); and the filter file opened as classify opens it.
#include "app_detail.hpp"
#include "binding.hpp"

#include <ksieve/filters/support/error.hpp>
#include <ksieve/io/unit_source.hpp>

#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <utility>

namespace ksieve::python
{

py_filter py_filter::open(std::string const & path, unsigned const threads)
{
    py_filter f;
    f.path_ = path;
    f.file_ = mapped_filter_file::open(
        path, load_options{.verify_payload = true, .threads = std::max(1u, threads)});
    f.filter_ = view_filter(f.file_);
    return f;
}

std::shared_ptr<any_filter const> py_filter::get() const
{
    std::shared_ptr<any_filter const> f = filter_;
    if (f == nullptr)
        throw error{"filter '" + path_ + "' is closed"};
    return f;
}

std::shared_ptr<mapped_filter_file const> py_filter::file() const
{
    (void)get(); // \throws error if closed
    return file_;
}

void py_filter::close() noexcept
{
    filter_.reset();
    file_.reset();
}

namespace
{

std::string sequence_of(py::handle item, char const * const what)
{
    if (py::isinstance<py::bytes>(item) || py::isinstance<py::str>(item))
        return item.cast<std::string>();
    throw py::type_error{std::string{what} + ": expected str or bytes sequences, got " +
                         std::string{py::str(py::type::handle_of(item).attr("__name__"))}};
}

} // namespace

std::vector<std::string> sequences_of(py::handle const seqs, char const * const what)
{
    if (py::isinstance<py::str>(seqs) || py::isinstance<py::bytes>(seqs))
        return {sequence_of(seqs, what)};
    if (!py::isinstance<py::iterable>(seqs))
        throw py::type_error{std::string{what} +
                             ": expected a str, bytes, or an iterable of them, got " +
                             std::string{py::str(py::type::handle_of(seqs).attr("__name__"))}};
    std::vector<std::string> out;
    if (py::hasattr(seqs, "__len__"))
        out.reserve(py::len(seqs));
    for (py::handle item : seqs)
        out.push_back(sequence_of(item, what));
    return out;
}

namespace
{

// The records seqs[first, last) as one batch (names empty; FASTA, or FASTQ with quals).
void fill_batch(io::record_batch & batch, std::span<std::string const> const seqs,
                std::span<std::string const> const quals, std::size_t const first,
                std::size_t const last)
{
    batch.clear();
    batch.format_ = quals.empty() ? io::seq_format::fasta : io::seq_format::fastq;
    batch.first_ = first + 1;
    std::size_t bytes = 0;
    for (std::size_t i = first; i < last; ++i)
        bytes += seqs[i].size();
    batch.storage_.reserve(quals.empty() ? bytes : 2 * bytes);
    for (std::size_t i = first; i < last; ++i)
    {
        batch.storage_.append(seqs[i]);
        if (!quals.empty())
            batch.storage_.append(quals[i]);
    }
    batch.records_.resize(last - first);
    std::size_t at = 0;
    for (std::size_t i = first; i < last; ++i)
    {
        io::record_view & r = batch.records_[i - first];
        r.seq = std::string_view{batch.storage_}.substr(at, seqs[i].size());
        r.raw = r.seq;
        at += seqs[i].size();
        if (!quals.empty())
        {
            r.qual = std::string_view{batch.storage_}.substr(at, quals[i].size());
            at += quals[i].size();
        }
    }
    batch.bases_ = bytes;
}

} // namespace

void for_each_batch(std::span<std::string const> const seqs,
                    std::span<std::string const> const mates,
                    std::function<void(work_item &)> const & fn,
                    std::span<std::string const> const quals,
                    std::span<std::string const> const quals2)
{
    io::reader_options const options = detail::reader_opts(1, false);
    std::size_t const max_records = options.batch_records, max_bases = options.batch_bases;
    work_item item;
    std::size_t first = 0;
    std::uint64_t sequence = 0;
    while (first < seqs.size())
    {
        // as the reader's fill(): up to max_records records, or up to the record that brings the
        // batch to max_bases bases (of mate 1, as a paired reader counts them)
        std::size_t last = first, bases = 0;
        while (last < seqs.size() && last - first < std::max<std::size_t>(max_records, 1))
        {
            bases += seqs[last].size();
            ++last;
            if (bases >= max_bases)
                break;
        }
        fill_batch(item.r1, seqs, quals, first, last);
        if (mates.empty())
            item.r2.clear();
        else
            fill_batch(item.r2, mates, quals2, first, last);
        item.results.clear();
        item.sequence = sequence++;
        fn(item);
        first = last;
    }
}

namespace
{

// The batches of a sequence file (or of a pair of files, mate 1 and mate 2, read as the command
// line's --paired reads them: mate names checked), as tuples of lists: names and sequences, the
// qualities after each mate's sequences where asked for, mate 2's sequences after mate 1's.
class batch_iterator
{
public:
    batch_iterator(std::string const & path, std::string const & path2, std::size_t const records,
                   bool const qualities)
        : qualities_{qualities}
    {
        io::reader_options options = detail::reader_opts(1, false);
        options.batch_records = std::max<std::size_t>(records, 1);
        input_args in;
        in.inputs = path2.empty() ? std::vector{path} : std::vector{path, path2};
        in.paired = !path2.empty();
        py::gil_scoped_release release;
        source_ = std::make_unique<unit_source>(in, options);
    }

    py::tuple next()
    {
        if (source_ == nullptr)
            throw py::stop_iteration{};
        bool got = false;
        {
            py::gil_scoped_release release;
            got = source_->next(r1_, r2_);
        }
        if (!got)
        {
            source_.reset();
            throw py::stop_iteration{};
        }
        std::vector<std::string> names;
        names.reserve(r1_.size());
        for (std::size_t i = 0; i < r1_.size(); ++i)
            names.emplace_back(r1_[i].name);
        py::list parts;
        parts.append(py::cast(std::move(names)));
        add_mate(parts, r1_);
        if (source_->paired())
            add_mate(parts, r2_);
        return py::tuple{parts};
    }

private:
    // The sequences of a mate's batch (and its qualities where asked for) onto parts.
    void add_mate(py::list & parts, io::record_batch const & batch) const
    {
        std::vector<std::string> seqs;
        std::vector<std::string> quals;
        seqs.reserve(batch.size());
        for (std::size_t i = 0; i < batch.size(); ++i)
        {
            seqs.emplace_back(batch[i].seq);
            if (qualities_)
                quals.emplace_back(batch[i].qual);
        }
        parts.append(py::cast(std::move(seqs)));
        if (qualities_)
            parts.append(py::cast(std::move(quals)));
    }

    bool qualities_{false};
    std::unique_ptr<unit_source> source_;
    io::record_batch r1_, r2_;
};

} // namespace

void register_reader(py::module_ & m)
{
    py::class_<batch_iterator>(m, "BatchReader",
                               "The batches of a sequence file, or of a pair of files: tuples of "
                               "lists (see read_batches).")
        .def("__iter__", [](batch_iterator & it) -> batch_iterator & { return it; })
        .def("__next__", &batch_iterator::next);
    m.def(
        "read_batches",
        [](std::string const & path, std::optional<std::string> const & path2,
           std::size_t const records, bool const qualities) {
            return batch_iterator{path, path2.value_or(std::string{}), records, qualities};
        },
        py::arg("path"), py::arg("path2") = py::none(), py::kw_only(), py::arg("records") = 16384,
        py::arg("qualities") = false,
        "Read a FASTA, FASTQ, SAM, BAM or CRAM file (compressed or not; '-' is standard input) "
        "with the readers of the command line, in batches of at most `records` records (fewer "
        "where a batch reaches 2 MiB of bases): an iterator of (names, sequences) lists, ready "
        "for Filter.classify_batch. qualities=True adds each mate's qualities after its "
        "sequences (empty strings for FASTA): (names, sequences, qualities). With `path2`, mate "
        "2 of each record of `path` (read as classify --paired reads them: the mates' names must "
        "match): (names, sequences, sequences2), or (names, sequences, qualities, sequences2, "
        "qualities2).");
}

} // namespace ksieve::python
