// The SAM/BAM/CRAM reader through htslib: htslib's log kept for ksieve's error lines, the thread
// that feeds inputs in extra gzip layers to htslib through a socket, and the batch reader.
#include "file_reader.hpp"
#include "platform_io.hpp"

#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

#include <htslib/bgzf.h>
#include <htslib/hts_log.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace ksieve::io::detail
{
namespace
{
std::mutex htslib_error_mutex;
// the first errors htslib logged since the last take, for the next error line
std::string htslib_error;
} // namespace

std::string take_htslib_error()
{
    std::lock_guard const lock{htslib_error_mutex};
    return std::exchange(htslib_error, std::string{});
}
} // namespace ksieve::io::detail

// htslib's log, replaced: its errors are kept for the error line of the input or output that failed
// (a CRAM reference that cannot be found, a malformed header) instead of being printed as lines of
// their own before it; its warnings and notes are dropped (ksieve reports what it detects itself,
// for example a missing end-of-file marker).
extern "C" void hts_log(enum htsLogLevel const severity, char const * const context,
                        char const * const format, ...)
{
    if (severity > HTS_LOG_ERROR || format == nullptr)
        return;
    char text[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(text, sizeof text, format, args);
    va_end(args);
    std::string message{text};
    while (!message.empty() && (message.back() == '\n' || message.back() == '.'))
        message.pop_back();
    std::lock_guard const lock{ksieve::io::detail::htslib_error_mutex};
    // the first errors of a failure say why (a reference not found), later ones what failed then
    std::string & all = ksieve::io::detail::htslib_error;
    if (std::count(all.begin(), all.end(), ';') < 2)
        all += (all.empty() ? "" : "; ") +
               (context != nullptr ? std::string{context} + ": " + message : message);
}

namespace ksieve::io::detail
{

void quiet_htslib()
{
    static std::once_flag once;
    // errors reach hts_log above (then ksieve's error line); warnings are not even formatted
    std::call_once(once, [] { hts_set_log_level(HTS_LOG_ERROR); });
}

namespace
{

// Pushes the bytes of a source into a socket that htslib reads (inputs in extra gzip layers).
class socket_feeder
{
public:
    explicit socket_feeder(std::unique_ptr<byte_source> source) : source_{std::move(source)}
    {
        int fds[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
            throw io_error{std::string{"cannot create socket pair: "} + std::strerror(errno)};
        read_fd_ = fds[0];
        write_fd_ = fds[1];
        platform::keep_sigpipe_off(write_fd_);
        thread_ = std::thread{[this] { run(); }};
    }
    ~socket_feeder() { join(); }
    socket_feeder(socket_feeder const &) = delete;
    socket_feeder & operator=(socket_feeder const &) = delete;

    // The read end (ownership passes to the caller, who must close it before join()).
    [[nodiscard]] int read_fd() const noexcept { return read_fd_; }
    void join()
    {
        if (thread_.joinable())
            thread_.join();
    }
    // Error of the source, valid after join().
    [[nodiscard]] std::string const & error() const noexcept { return error_; }

private:
    void run()
    {
        std::vector<char> buf(std::size_t{256} << 10);
        try
        {
            // until the end of the source, or until the reader goes away
            for (std::size_t n = 0; (n = source_->read(buf.data(), buf.size())) != 0;)
                if (!send_all(buf.data(), n))
                    break;
        }
        catch (source_error const & e)
        {
            error_ = e.what();
        }
        ::close(write_fd_);
    }

    // false if the reader went away
    bool send_all(char const * const data, std::size_t const n) const noexcept
    {
        for (std::size_t sent = 0; sent < n;)
        {
            ssize_t const k = platform::send_without_sigpipe(write_fd_, data + sent, n - sent);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                return false;
            sent += static_cast<std::size_t>(k);
        }
        return true;
    }

    std::unique_ptr<byte_source> source_;
    int read_fd_{-1};
    int write_fd_{-1};
    std::string error_;
    std::thread thread_;
};

constexpr char const * cram_failure = "cannot decode CRAM record: the reference it was compressed "
                                      "against is not available (htslib looks it up "
                                      "through the UR: field of the @SQ lines, REF_PATH and "
                                      "REF_CACHE), or the file is corrupted or truncated";

// " (htslib: ...)" with the last error htslib logged, or nothing.
std::string htslib_said()
{
    std::string const said = take_htslib_error();
    return said.empty() ? std::string{} : " (htslib: " + said + ")";
}

// htslib 1.16 allocates a BAM header's text and reference arrays by the sizes the header declares
// before reading them: refuse sizes that the input cannot hold (regular files) or that exceed the
// memory limit. Only the first decompressed block is looked at (it is loaded, not consumed).
void check_bam_header_sizes(BGZF * const bg, std::string const & path)
{
    std::uint64_t bound = memory_limit();
    struct stat st
    {
    };
    // at most what a BGZF file of st_size bytes decompresses to (a 64 KiB block compresses to at
    // least about 90 bytes: deflate expands at most 1032-fold, plus the block's header and footer)
    if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
        bound = std::min(bound, static_cast<std::uint64_t>(st.st_size) * 1100 + 65536);
    if (bg == nullptr || (bg->block_offset == bg->block_length && bgzf_read_block(bg) != 0))
        return; // sam_hdr_read reports the error
    auto const * const block =
        static_cast<unsigned char const *>(bg->uncompressed_block) + bg->block_offset;
    std::uint64_t const avail = static_cast<std::uint64_t>(bg->block_length - bg->block_offset);
    auto u32 = [&](std::uint64_t const at)
    {
        return std::uint64_t{block[at]} | std::uint64_t{block[at + 1]} << 8 |
               std::uint64_t{block[at + 2]} << 16 | std::uint64_t{block[at + 3]} << 24;
    };
    if (avail < 8 || std::memcmp(block, "BAM\1", 4) != 0)
        return;
    std::uint64_t const l_text = u32(4);
    auto refuse = [&](char const * const what, std::uint64_t const n)
    {
        throw input_error{
            "'" + display_name(path) + "': the BAM header declares " + std::to_string(n) + " " +
            what +
            ", more than the input can hold or the memory limit allows: the file is corrupted"};
    };
    if (l_text > bound)
        refuse("bytes of header text", l_text);
    if (avail >= 12 + l_text &&
        u32(8 + l_text) > bound / 9) // each reference takes at least 9 bytes
        refuse("reference sequences", u32(8 + l_text));
}

class sam_reader final : public file_reader
{
public:
    // The hFILE `hf` (taken) opened by htslib; `feeder`, if any, writes the bytes that `hf` reads.
    sam_reader(std::string path, hts_ptr<hFILE> hf, reader_options const & options,
               std::unique_ptr<socket_feeder> feeder = nullptr)
        : file_reader{std::move(path), options, seq_format::bam}, feeder_{std::move(feeder)}
    {
        (void)take_htslib_error(); // a message of an earlier input is not this one's
        fp_.reset(hts_hopen(hf.get(), path_.c_str(), "r"));
        if (fp_ == nullptr)
        {
            hf.reset(); // before the feeder is joined: it may be waiting for a reader
            throw input_error{"'" + display_name(path_) + "': cannot open as SAM/BAM/CRAM" +
                              htslib_said()};
        }
        (void)hf.release(); // fp_ owns it now
        format_ = hts_seq_format();
        if (format_ == seq_format::bam)
            check_bam_header_sizes(fp_->fp.bgzf, path_);
        hdr_.reset(sam_hdr_read(fp_.get()));
        if (hdr_ == nullptr)
            throw input_error{"'" + display_name(path_) + "': cannot read the SAM/BAM/CRAM header" +
                              htslib_said()};
        start_reading();
        header_.assign(sam_hdr_str(hdr_.get()), sam_hdr_length(hdr_.get()));
        rec_.reset(bam_init1());
        if (rec_ == nullptr)
            throw std::bad_alloc{};
    }

    bool fill(record_batch & batch, std::size_t max_records, std::size_t const max_bases,
              std::size_t const multiple) override
    {
        max_records = std::max<std::size_t>(max_records, 1);
        begin_batch(batch);
        std::string & s = batch.storage_;
        s.reserve(64);
        offsets_.clear();
        std::size_t n = 0;
        std::size_t bases = 0;
        while (!eof_ && n < max_records)
        {
            int const r = sam_read1(fp_.get(), hdr_.get(), rec_.get());
            if (r < -1)
                fail(records_ + n + 1, format_ == seq_format::cram
                                           ? cram_failure
                                           : "malformed or truncated SAM/BAM/CRAM record");
            if (r == -1)
            {
                end_of_data(records_ + n + 1);
                break;
            }
            bases += append_record(s, *rec_);
            ++n;
            if (bases >= max_bases && n % std::max<std::size_t>(multiple, 1) == 0)
                break;
        }
        make_views(batch, offsets_, s.size());
        records_ += n;
        return n > 0;
    }

    [[nodiscard]] std::string const & sam_header() const noexcept override { return header_; }

private:
    // The end of the records (before record number `record`): a pipe's missing end-of-file marker
    // and the feeder's error reported.
    void end_of_data(std::uint64_t const record)
    {
        eof_ = true;
        if (check_eof_at_end_)
        {
            BGZF const * const bg = fp_->is_bgzf ? fp_->fp.bgzf : nullptr;
            if (bg != nullptr && bg->no_eof_block != 0)
                fail(record, missing_eof_message);
        }
        if (feeder_ != nullptr)
        {
            feeder_->join();
            if (!feeder_->error().empty())
                fail(record, feeder_->error());
        }
    }

    // Append `b` to s (raw: its core and data; then its sequence and qualities as text) and its
    // offsets to offsets_. \returns its bases.
    std::size_t append_record(std::string & s, bam1_t const & b)
    {
        std::size_t const core = sizeof(bam1_core_t);
        record_offsets o{};
        o.raw_off = s.size();
        o.raw_len = core + static_cast<std::size_t>(b.l_data);
        s.append(reinterpret_cast<char const *>(&b.core), core);
        s.append(reinterpret_cast<char const *>(b.data), static_cast<std::size_t>(b.l_data));
        o.header_off = o.raw_off + core;
        o.header_len = std::strlen(bam_get_qname(&b));
        o.name_len = o.header_len;
        auto const len = static_cast<std::size_t>(std::max(b.core.l_qseq, 0));
        o.seq_off = s.size();
        o.seq_len = len;
        std::size_t const at = s.size();
        s.resize(at + len);
        std::uint8_t const * const seq = bam_get_seq(&b);
        for (std::size_t i = 0; i < len; ++i)
            s[at + i] = seq_nt16_str[bam_seqi(seq, i)];
        std::uint8_t const * const qual = bam_get_qual(&b);
        o.qual_off = s.size();
        if (len > 0 && qual[0] != 0xff)
        {
            o.qual_len = len;
            std::size_t const qa = s.size();
            s.resize(qa + len);
            for (std::size_t i = 0; i < len; ++i)
                s[qa + i] = static_cast<char>(qual[i] + 33);
        }
        offsets_.push_back(o);
        return len;
    }

    // The error of a record, with what htslib said about it.
    [[noreturn]] void fail(std::uint64_t const record, std::string const & what)
    {
        throw input_error{record_message(path_, record, what + htslib_said())};
    }

    // The format htslib detected. \throws input_error for one ksieve does not read.
    [[nodiscard]] seq_format hts_seq_format() const
    {
        htsExactFormat const f = hts_get_format(fp_.get())->format;
        if (f != bam && f != cram && f != sam)
            throw input_error{record_message(path_, 1, unsupported_message({}))};
        return f == bam ? seq_format::bam : f == cram ? seq_format::cram : seq_format::sam;
    }

    // After the header: the end-of-file marker checked, decompression threads started.
    void start_reading()
    {
        // A BGZF (BAM, bgzipped SAM) or CRAM file cut short at a block boundary reads as complete:
        // only its missing end-of-file marker shows the truncation. Checked here for files that can
        // seek, at the end of the data for pipes.
        int const eof = hts_check_EOF(
            fp_.get()); // 0: marker missing, 1: present, 2: cannot seek, 3: none in the format
        if (eof == 0 && !options_.allow_missing_eof)
            throw input_error{"'" + display_name(path_) + "': " + missing_eof_message};
        check_eof_at_end_ = eof == 2 && !options_.allow_missing_eof &&
                            hts_get_format(fp_.get())->compression == bgzf;
        // Decompression threads only after the header, and only for a file that ends with its EOF
        // marker: with threads, htslib 1.16 waits forever in sam_hdr_read() on a truncated BAM, or
        // reports the truncated end as a clean end of file. Single-threaded reading reports
        // truncation as an error (and is used for pipes, whose end cannot be checked beforehand).
        if (options_.threads > 1 && (eof == 1 || eof == 3))
            if (htsThreadPool * const pool = detail::hts_thread_pool(options_.threads);
                pool != nullptr)
                (void)hts_set_thread_pool(fp_.get(), pool);
    }

    // released in reverse: the record, the header, the file (which closes the socket's read end),
    // then the feeder (joined)
    std::unique_ptr<socket_feeder> feeder_;
    hts_ptr<htsFile> fp_;
    hts_ptr<sam_hdr_t> hdr_;
    hts_ptr<bam1_t> rec_;
    std::string header_;
    std::vector<record_offsets> offsets_;
    bool eof_{false};
    bool check_eof_at_end_{false}; // a BGZF pipe: the last block must be the end-of-file marker
};

} // namespace

std::unique_ptr<reader> make_hts_reader(std::string path, hts_ptr<hFILE> hf,
                                        reader_options const & options)
{
    return std::make_unique<sam_reader>(std::move(path), std::move(hf), options);
}

std::unique_ptr<reader> make_fed_hts_reader(std::string path, std::unique_ptr<byte_source> source,
                                            reader_options const & options)
{
    auto feeder = std::make_unique<socket_feeder>(std::move(source));
    hts_ptr<hFILE> fed{hdopen(feeder->read_fd(), "r")};
    if (fed == nullptr)
    {
        ::close(feeder->read_fd());
        throw io_error{"'" + display_name(path) + "': cannot open: " + std::strerror(errno)};
    }
    return std::make_unique<sam_reader>(std::move(path), std::move(fed), options,
                                        std::move(feeder));
}

} // namespace ksieve::io::detail
