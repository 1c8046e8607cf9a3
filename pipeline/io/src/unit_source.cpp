// unit_source: the inputs of a run (single files, pairs or interleaved files, one after the other)
// read as units (a read or a pair), with the run's progress through them.
#include <ksieve/filters/support/error.hpp>
#include <ksieve/io/unit_source.hpp>

#include <algorithm>
#include <filesystem>

namespace ksieve
{

unit_source::unit_source(input_args const & args, io::reader_options const & options)
    : args_{args}, options_{options}, paired_{args.paired || args.interleaved}
{
    options_.allow_missing_eof = options_.allow_missing_eof || args.allow_missing_eof;
    for (auto const & in : args.inputs)
    {
        std::error_code ec;
        if (in == "-" || !std::filesystem::is_regular_file(in, ec))
        {
            total_bytes_ = 0;
            break;
        }
        total_bytes_ += std::filesystem::file_size(in, ec);
    }
    if (args_.inputs.empty())
        throw usage_error{"no input given"};
    if (args_.paired && args_.interleaved)
        throw usage_error{"--paired and --interleaved exclude each other"};
    if (args_.paired && args_.inputs.size() % 2 != 0)
        throw usage_error{"--paired needs the inputs in pairs (R1 R2 [R1 R2 ...]); got " +
                          std::to_string(args_.inputs.size()) + " files"};
    if (args_.paired && std::count(args_.inputs.begin(), args_.inputs.end(), "-") > 1)
        throw usage_error{
            "--paired: both mates cannot be read from stdin ('-' given twice); give the mates "
            "as two files, or interleave them and use --interleaved -"};
    open_next();
}

namespace
{
// The reference dictionary (@SQ lines) of a SAM header: records of inputs with different
// dictionaries cannot be written under one output header.
std::string sq_lines(std::string const & header)
{
    std::string out;
    std::size_t pos = 0;
    while (pos < header.size())
    {
        std::size_t end = header.find('\n', pos);
        if (end == std::string::npos)
            end = header.size();
        if (header.compare(pos, 3, "@SQ") == 0)
            out.append(header, pos, end - pos + 1);
        pos = end + 1;
    }
    return out;
}
} // namespace

double unit_source::input_fraction() const noexcept
{
    if (total_bytes_ == 0)
        return -1.0;
    std::lock_guard const lock{position_mutex_};
    std::uint64_t const in_current = single_ != nullptr ? single_->input_position()
                                     : pair_ != nullptr ? pair_->input_position()
                                                        : 0;
    std::uint64_t const done = done_bytes_ + std::min(in_current, current_bytes_);
    return std::min(1.0, static_cast<double>(done) / static_cast<double>(total_bytes_));
}

void unit_source::open_next()
{
    std::lock_guard const lock{position_mutex_};
    single_.reset();
    pair_.reset();
    done_bytes_ += current_bytes_;
    current_bytes_ = 0;
    if (next_input_ >= args_.inputs.size())
        return;
    std::size_t const at = next_input_, count = args_.paired ? 2 : 1;
    for (std::size_t i = at; i < at + count && i < args_.inputs.size(); ++i)
    {
        std::error_code ec;
        auto const size = std::filesystem::file_size(args_.inputs[i], ec);
        current_bytes_ += ec ? 0 : size;
    }
    if (args_.paired)
        pair_ = io::paired_reader::open_pair(args_.inputs[at], args_.inputs[at + 1], options_);
    else if (args_.interleaved)
        pair_ = io::paired_reader::open_interleaved(args_.inputs[at], options_);
    else
        single_ = io::reader::open(args_.inputs[at], options_);
    next_input_ += count;
    if (at == 0)
    {
        format_ = single_ != nullptr ? single_->format() : pair_->format();
        sam_header_ = single_ != nullptr ? single_->sam_header() : pair_->sam_header();
    }
    check_opened(at == 0, at);
}

void unit_source::require_same_dictionary()
{
    same_dictionary_ = true;
    if (pair_ != nullptr && next_input_ > 0)
        check_opened(true, next_input_ - (args_.paired ? 2 : 1)); // mate 2 of the first pair
}

void unit_source::check_opened(bool const first, std::size_t const at) const
{
    io::seq_format const f = single_ != nullptr ? single_->format() : pair_->format();
    auto const family = [](io::seq_format const x)
    { return io::hts_format(x) ? io::seq_format::sam : x; };
    if (!first && !same_format_output_.empty() && family(f) != family(format_))
        throw input_error{
            "'" + args_.inputs[at] + "' is " + io::format_name(f) + " but the first input '" +
            args_.inputs[0] + "' is " + io::format_name(format_) +
            (same_format_output_ == "-"
                 ? std::string{", and standard output takes the first input's format; write to "
                               "files named .fq, .fa, .sam, .bam or .cram, or process the "
                               "inputs separately"}
                 : ", and the output '" + same_format_output_ +
                       "' has no extension naming its format (it would take the first input's); "
                       "name it .fq, .fa, .sam, .bam or .cram")};
    if (!same_dictionary_ || !io::hts_format(f))
        return; // FASTA/FASTQ records are written unaligned: no reference ids
    std::string const want = sq_lines(sam_header_);
    auto const check = [&](std::string const & header, std::string const & path)
    {
        if (sq_lines(header) != want)
            throw input_error{
                "'" + path +
                "': its SAM/BAM/CRAM reference dictionary (@SQ lines) differs from the first "
                "input '" +
                args_.inputs[0] +
                "', so its records cannot be written under one SAM/BAM/CRAM header; process "
                "them separately or write FASTA/FASTQ"};
    };
    if (!first)
        check(single_ != nullptr ? single_->sam_header() : pair_->sam_header(), args_.inputs[at]);
    if (args_.paired)
        check(pair_->mate2_sam_header(), args_.inputs[at + 1]);
}

bool unit_source::next(io::record_batch & r1, io::record_batch & r2)
{
    for (;;)
    {
        if (single_ == nullptr && pair_ == nullptr)
        {
            r1.clear();
            r2.clear();
            return false;
        }
        bool const got = single_ != nullptr ? single_->next(r1) : pair_->next(r1, r2);
        if (single_ != nullptr)
            r2.clear();
        if (got && !r1.empty())
            return true;
        open_next();
    }
}

} // namespace ksieve
