// Sequences from Python (str, bytes, or an iterable of them) into batches of records, cut as the
// command line's readers cut an input file; sequence files read by the command line's readers
// (ksieve.read_batches); and the filter file opened as classify opens it.
#include "app_detail.hpp"
#include "binding.hpp"

#include <ksieve/filters/error.hpp>

#include <pybind11/stl.h>

#include <algorithm>
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
    std::shared_ptr<mapped_filter_file const> f = file_;
    if (f == nullptr || filter_ == nullptr)
        throw error{"filter '" + path_ + "' is closed"};
    return f;
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
    if (py::isinstance<py::bytes>(item))
        return item.cast<std::string>();
    if (py::isinstance<py::str>(item))
        return item.cast<std::string>();
    throw py::type_error{std::string{what} + ": expected str or bytes sequences, got " +
                         std::string{py::str(py::type::handle_of(item).attr("__name__"))}};
}

} // namespace

std::vector<std::string> sequences_of(py::handle const seqs, char const * const what)
{
    std::vector<std::string> out;
    if (py::isinstance<py::str>(seqs) || py::isinstance<py::bytes>(seqs))
    {
        out.push_back(sequence_of(seqs, what));
        return out;
    }
    if (!py::isinstance<py::iterable>(seqs))
        throw py::type_error{std::string{what} +
                             ": expected a str, bytes, or an iterable of them, got " +
                             std::string{py::str(py::type::handle_of(seqs).attr("__name__"))}};
    if (py::hasattr(seqs, "__len__"))
        out.reserve(py::len(seqs));
    for (py::handle item : seqs)
        out.push_back(sequence_of(item, what));
    return out;
}

namespace
{

// The records seqs[first, last) as one batch (names empty, FASTA).
void fill_batch(io::record_batch & batch, std::span<std::string const> const seqs,
                std::size_t const first, std::size_t const last)
{
    batch.clear();
    batch.format_ = io::seq_format::fasta;
    batch.first_ = first + 1;
    std::size_t bytes = 0;
    for (std::size_t i = first; i < last; ++i)
        bytes += seqs[i].size();
    batch.storage_.clear();
    batch.storage_.reserve(bytes);
    for (std::size_t i = first; i < last; ++i)
        batch.storage_.append(seqs[i]);
    batch.records_.resize(last - first);
    std::size_t at = 0;
    for (std::size_t i = first; i < last; ++i)
    {
        io::record_view & r = batch.records_[i - first];
        r = io::record_view{};
        r.seq = std::string_view{batch.storage_}.substr(at, seqs[i].size());
        r.raw = r.seq;
        at += seqs[i].size();
    }
    batch.bases_ = bytes;
}

} // namespace

void for_each_batch(std::span<std::string const> const seqs,
                    std::span<std::string const> const mates, std::size_t const max_records,
                    std::size_t const max_bases, std::function<void(work_item &)> const & fn)
{
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
        fill_batch(item.r1, seqs, first, last);
        if (mates.empty())
            item.r2.clear();
        else
            fill_batch(item.r2, mates, first, last);
        item.results.clear();
        item.first_unit = first;
        item.sequence = sequence++;
        fn(item);
        first = last;
    }
}

namespace
{

// The batches of a sequence file, as (names, sequences) lists.
class batch_iterator
{
public:
    batch_iterator(std::string const & path, std::size_t const records)
    {
        io::reader_options options = detail::reader_opts(1, false);
        options.batch_records = std::max<std::size_t>(records, 1);
        py::gil_scoped_release release;
        reader_ = io::reader::open(path, options);
    }

    std::pair<std::vector<std::string>, std::vector<std::string>> next()
    {
        if (reader_ == nullptr)
            throw py::stop_iteration{};
        bool got = false;
        {
            py::gil_scoped_release release;
            got = reader_->next(batch_);
        }
        if (!got)
        {
            reader_.reset();
            throw py::stop_iteration{};
        }
        std::pair<std::vector<std::string>, std::vector<std::string>> out;
        out.first.reserve(batch_.size());
        out.second.reserve(batch_.size());
        for (std::size_t i = 0; i < batch_.size(); ++i)
        {
            out.first.emplace_back(batch_[i].name);
            out.second.emplace_back(batch_[i].seq);
        }
        return out;
    }

private:
    std::unique_ptr<io::reader> reader_;
    io::record_batch batch_;
};

} // namespace

void register_reader(py::module_ & m)
{
    py::class_<batch_iterator>(m, "BatchReader",
                               "The batches of a sequence file: (names, sequences) lists.")
        .def("__iter__", [](batch_iterator & it) -> batch_iterator & { return it; })
        .def("__next__", &batch_iterator::next);
    m.def(
        "read_batches",
        [](std::string const & path, std::size_t const records) {
            return batch_iterator{path, records};
        },
        py::arg("path"), py::kw_only(), py::arg("records") = 16384,
        "Read a FASTA, FASTQ, SAM, BAM or CRAM file (compressed or not; '-' is standard input) "
        "with the readers of the command line, in batches of at most `records` records (fewer "
        "where a batch reaches 2 MiB of bases): an iterator of (names, sequences) lists, ready "
        "for Filter.classify_batch.");
}

std::size_t reader_batch_records() noexcept
{
    return detail::reader_opts(1, false).batch_records;
}

std::size_t reader_batch_bases() noexcept
{
    return detail::reader_opts(1, false).batch_bases;
}

} // namespace ksieve::python
