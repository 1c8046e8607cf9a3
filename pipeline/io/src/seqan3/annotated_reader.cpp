// GenBank and EMBL records through seqan3's sequence_file_input (built only where seqan3 is found).
#include "../file_reader.hpp"

#include <ksieve/filters/support/error.hpp>

#include <seqan3/alphabet/nucleotide/dna5.hpp>
#include <seqan3/io/sequence_file/input.hpp>

#include <istream>
#include <optional>
#include <streambuf>
#include <string>
#include <vector>

namespace ksieve::io::detail
{

namespace
{

// An std::streambuf over a byte_source (seqan3 reads from an std::istream).
class source_streambuf final : public std::streambuf
{
public:
    explicit source_streambuf(std::unique_ptr<byte_source> source)
        : source_{std::move(source)}, buf_(1 << 20)
    {
    }

protected:
    int_type underflow() override
    {
        if (gptr() < egptr())
            return traits_type::to_int_type(*gptr());
        std::size_t const n = source_->read(buf_.data(), buf_.size()); // source_error propagates
        if (n == 0)
            return traits_type::eof();
        setg(buf_.data(), buf_.data(), buf_.data() + n);
        return traits_type::to_int_type(*gptr());
    }

private:
    std::unique_ptr<byte_source> source_;
    std::vector<char> buf_;
};

struct parsed_record
{
    std::string header;
    std::string seq;
};

class annotated_reader final : public file_reader
{
public:
    annotated_reader(std::string path, std::unique_ptr<byte_source> source,
                     annotated_format const format, reader_options const & options)
        : file_reader{std::move(path), options, seq_format::fasta}, kind_{format},
          buf_{std::move(source)}, in_{&buf_}
    {
        in_.exceptions(
            std::ios::badbit); // a source error reaches us instead of looking like the end
        guarded(1,
                [&]
                {
                    if (format == annotated_format::genbank)
                        file_.emplace(in_, seqan3::format_genbank{});
                    else
                        file_.emplace(in_, seqan3::format_embl{});
                    it_ = file_->begin();
                });
    }

    bool fill(record_batch & batch, std::size_t const max_records, std::size_t const max_bases,
              std::size_t const multiple) override
    {
        begin_batch(batch);
        std::vector<parsed_record> got;
        std::size_t bases = 0, bytes = 0;
        while (got.size() < max_records && !(bases >= max_bases && got.size() % multiple == 0))
        {
            std::optional<parsed_record> r;
            guarded(records_ + got.size() + 1,
                    [&]
                    {
                        if (advance_) // seqan3 reads a record when its iterator moves onto it
                            ++it_;
                        advance_ = false;
                        if (it_ == file_->end())
                            return;
                        parsed_record p;
                        p.header = (*it_).id();
                        p.seq.reserve((*it_).sequence().size());
                        for (auto const c : (*it_).sequence())
                            p.seq.push_back(seqan3::to_char(c));
                        r = std::move(p);
                        advance_ = true;
                    });
            if (!r)
                break;
            bases += r->seq.size();
            bytes += r->header.size() + r->seq.size() + 3;
            got.push_back(std::move(*r));
        }
        if (got.empty())
            return false;
        // raw: the record as FASTA text; the views point into storage, reserved once.
        batch.storage_.reserve(bytes);
        for (auto const & p : got)
        {
            std::size_t const at = batch.storage_.size();
            batch.storage_ += '>';
            batch.storage_ += p.header;
            batch.storage_ += '\n';
            batch.storage_ += p.seq;
            batch.storage_ += '\n';
            std::string_view const all{batch.storage_.data() + at, batch.storage_.size() - at};
            std::string_view const header = all.substr(1, p.header.size());
            record_view v;
            v.header = header;
            v.name = header.substr(0, header.find_first_of(" \t"));
            v.seq = all.substr(p.header.size() + 2, p.seq.size());
            v.raw = all;
            batch.records_.push_back(v);
        }
        batch.bases_ = bases;
        records_ += got.size();
        return true;
    }

    [[nodiscard]] std::string const & sam_header() const noexcept override { return no_header_; }

private:
    using file_t =
        seqan3::sequence_file_input<seqan3::sequence_file_input_default_traits_dna,
                                    seqan3::fields<seqan3::field::id, seqan3::field::seq>,
                                    seqan3::type_list<seqan3::format_genbank, seqan3::format_embl>>;

    // fn(), with seqan3's and the source's exceptions as input_error naming the file and record.
    template <typename Fn> void guarded(std::uint64_t const record, Fn && fn)
    {
        try
        {
            fn();
        }
        catch (ksieve::error const &)
        {
            throw;
        }
        catch (std::exception const & e)
        {
            throw input_error{
                record_message(path_, record,
                               std::string{"malformed or truncated "} +
                                   (kind_ == annotated_format::genbank ? "GenBank" : "EMBL") +
                                   " record (" + e.what() + ")")};
        }
    }

    annotated_format kind_;
    source_streambuf buf_;
    std::istream in_;
    std::optional<file_t> file_;
    decltype(std::declval<file_t &>().begin()) it_{};
    bool advance_{false};
    std::string no_header_;
};

} // namespace

bool have_annotated_input() noexcept
{
    return true;
}

std::unique_ptr<reader> make_annotated_reader(std::string path, std::unique_ptr<byte_source> source,
                                              annotated_format const format,
                                              reader_options const & options)
{
    return std::make_unique<annotated_reader>(std::move(path), std::move(source), format, options);
}

} // namespace ksieve::io::detail
