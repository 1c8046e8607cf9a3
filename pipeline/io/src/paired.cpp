// Paired input: two mate files read in lock step, or one interleaved file split; names checked.
#include "detail.hpp"

#include <ksieve/filters/support/error.hpp>

#include <limits>

namespace ksieve::io
{

namespace
{

using namespace detail;

std::string quoted(std::string const & path)
{
    // appended piecewise: GCC 12 warns (-Wrestrict, a false positive) on "'" + std::string
    std::string s{"'"};
    s += display_name(path);
    s += '\'';
    return s;
}

class two_file_reader final : public paired_reader
{
public:
    two_file_reader(std::string const & r1, std::string const & r2, reader_options const & options)
        : a_{reader::open(r1, options)}, b_{reader::open(r2, options)}
    {
    }

    bool next(record_batch & r1, record_batch & r2) override
    {
        bool const more = a_->next(r1);
        std::uint64_t const done = r1.first_record_number() - 1; // the records read before r1
        if (!more)
        {
            if (b_->fill(r2, 1, std::numeric_limits<std::size_t>::max(), 1))
                throw input_error{out_of_step(a_->name(), b_->name(), done)};
            return false;
        }
        if (!b_->fill(r2, r1.size(), std::numeric_limits<std::size_t>::max(), 1) ||
            r2.size() < r1.size())
            throw input_error{out_of_step(b_->name(), a_->name(), done + r2.size())};
        if (r1.format() != r2.format())
            throw input_error{quoted(a_->name()) + " is " + format_name(r1.format()) + " but " +
                              quoted(b_->name()) + " is " + format_name(r2.format()) +
                              "; paired files must have the same format"};
        for (std::size_t i = 0; i < r1.size(); ++i)
            if (!mate_names_match(r1[i].name, r2[i].name))
                throw input_error{quoted(a_->name()) + " and " + quoted(b_->name()) + ": record " +
                                  std::to_string(done + i + 1) + ": mate names differ ('" +
                                  std::string{r1[i].name} + "' and '" + std::string{r2[i].name} +
                                  "'); the files are out of step or not mates"};
        return true;
    }

    [[nodiscard]] seq_format format() const noexcept override { return a_->format(); }
    [[nodiscard]] std::string const & sam_header() const noexcept override
    {
        return a_->sam_header();
    }
    [[nodiscard]] std::string const & mate2_sam_header() const noexcept override
    {
        return b_->sam_header();
    }
    [[nodiscard]] std::uint64_t input_position() const noexcept override
    {
        return a_->input_position() + b_->input_position();
    }

private:
    // `shorter` ended after `count` records while `longer` has more.
    std::string out_of_step(std::string const & shorter, std::string const & longer,
                            std::uint64_t const count) const
    {
        return quoted(a_->name()) + " and " + quoted(b_->name()) +
               " are out of step: " + quoted(shorter) + " ends after record " +
               std::to_string(count) + " but " + quoted(longer) + " has a record " +
               std::to_string(count + 1);
    }

    std::unique_ptr<reader> a_, b_;
};

class interleaved_reader final : public paired_reader
{
public:
    interleaved_reader(std::string const & path, reader_options const & options)
        : in_{reader::open(path, options)}, options_{options}
    {
    }

    bool next(record_batch & r1, record_batch & r2) override
    {
        std::size_t const half = std::max<std::size_t>(options_.batch_records, 1);
        std::size_t const bases = options_.batch_bases > std::numeric_limits<std::size_t>::max() / 2
                                      ? options_.batch_bases
                                      : 2 * options_.batch_bases;
        r1.clear();
        r2.clear();
        if (!in_->fill(both_, 2 * half, bases, 2))
            return false;
        std::uint64_t const first = both_.first_record_number();
        if (both_.size() % 2 != 0)
            throw input_error{
                quoted(in_->name()) + ": record " + std::to_string(first + both_.size() - 1) +
                ": interleaved input has an odd number of records (" +
                std::to_string(first + both_.size() - 1) + "); the last record has no mate"};
        for (std::size_t i = 0; i < both_.size(); i += 2)
            if (!mate_names_match(both_[i].name, both_[i + 1].name))
                throw input_error{quoted(in_->name()) + ": record " + std::to_string(first + i) +
                                  ": mate names differ ('" + std::string{both_[i].name} +
                                  "' and '" + std::string{both_[i + 1].name} +
                                  "'); is the input really interleaved?"};
        split(r1, 0, (first + 1) / 2);
        split(r2, 1, (first + 1) / 2);
        return true;
    }

    [[nodiscard]] seq_format format() const noexcept override { return in_->format(); }
    [[nodiscard]] std::string const & sam_header() const noexcept override
    {
        return in_->sam_header();
    }
    [[nodiscard]] std::uint64_t input_position() const noexcept override
    {
        return in_->input_position();
    }

private:
    // Copy records parity, parity + 2, ... of both_ into out.
    void split(record_batch & out, std::size_t const parity, std::uint64_t const first_pair)
    {
        out.clear();
        out.format_ = both_.format();
        out.first_ = first_pair;
        out.storage_.reserve(std::max<std::size_t>(both_.storage_.size() / 2 + 64, 64));
        offsets_.clear();
        for (std::size_t i = parity; i < both_.size(); i += 2)
            append_copy(out.storage_, offsets_, both_[i]);
        make_views(out, offsets_, 0);
    }

    std::unique_ptr<reader> in_;
    reader_options options_;
    record_batch both_;
    std::vector<record_offsets> offsets_;
};

} // namespace

std::unique_ptr<paired_reader> paired_reader::open_pair(std::string const & r1,
                                                        std::string const & r2,
                                                        reader_options const & options)
{
    return std::make_unique<two_file_reader>(r1, r2, options);
}

std::unique_ptr<paired_reader> paired_reader::open_interleaved(std::string const & path,
                                                               reader_options const & options)
{
    return std::make_unique<interleaved_reader>(path, options);
}

} // namespace ksieve::io
