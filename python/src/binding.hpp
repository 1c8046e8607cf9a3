#pragma once
// What the sources of the Python module share: the opened filter (py_filter), sequences taken from
// Python into batches of records as the readers cut them, and the registration of each part.
#include <ksieve/engine/stream.hpp>
#include <ksieve/filters/common/any_filter.hpp>
#include <ksieve/filters/common/filter_file.hpp>

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace ksieve::python
{

namespace py = pybind11;

/*! \brief A filter file opened read-only, memory-mapped and checked as `classify -f` opens it. The
 * filter is shared with every call in progress, so that close() never pulls it from under a call
 * that runs without the interpreter lock. Thread safety: const members from any thread. */
class py_filter
{
public:
    /*! \brief Open `path` (every payload checksum verified, on `threads` threads). \throws
     * format_error / io_error naming the file. */
    static py_filter open(std::string const & path, unsigned threads);

    /*! \brief The filter; \throws error if close() was called. */
    [[nodiscard]] std::shared_ptr<any_filter const> get() const;
    /*! \brief The mapped file (its header, size); \throws error if closed. */
    [[nodiscard]] std::shared_ptr<mapped_filter_file const> file() const;
    /*! \brief The path as given. */
    [[nodiscard]] std::string const & path() const noexcept { return path_; }
    /*! \brief Let go of the mapping (calls in progress keep it until they end). */
    void close() noexcept;
    [[nodiscard]] bool closed() const noexcept { return filter_ == nullptr; }

private:
    std::string path_;
    std::shared_ptr<mapped_filter_file const> file_;
    std::shared_ptr<any_filter const> filter_;
};

/*! \brief The sequences of a Python str, bytes, or iterable of them (`what` names the argument in
 * the TypeError). Needs the interpreter lock. \throws py::type_error */
[[nodiscard]] std::vector<std::string> sequences_of(py::handle seqs, char const * what);

/*! \brief fn(item) for consecutive batches of `seqs` (and `mates[i]` as the mate of seqs[i] when
 * mates is non-empty), cut as the readers of the command line cut a file (detail::reader_opts): at
 * most their batch_records records, a batch ending at the first record that brings it to their
 * batch_bases bases. Each record's name is empty. With `quals` (`quals2`: of the mates), the
 * records are FASTQ records with those qualities. \pre mates, quals and quals2 are empty or as long
 * as seqs, each quality string as long as its sequence. */
void for_each_batch(std::span<std::string const> seqs, std::span<std::string const> mates,
                    std::function<void(work_item &)> const & fn,
                    std::span<std::string const> quals = {},
                    std::span<std::string const> quals2 = {});

void register_reader(py::module_ & m);
void register_filter(py::module_ & m);
void register_build(py::module_ & m);
void register_files(py::module_ & m);

} // namespace ksieve::python
