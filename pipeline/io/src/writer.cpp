// Outputs that appear complete or not at all (output_file: temporaries beside the output, renamed
// into place; their registry for signal handlers), compressed text outputs, and record writers.
#include "codecs.hpp"
#include "detail.hpp"
#include "hts_handle.hpp"
#include "platform_io.hpp"

#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/writeback.hpp>

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts.h>
#include <htslib/sam.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <utility>

namespace ksieve::io
{

namespace
{

using detail::errno_text;

// The descriptor an output path stands for ("-" and /dev/stdout: 1, /dev/stderr: 2), else -1. Those
// are written through the descriptor itself: opening /dev/stdout again would truncate a redirected
// file and write at a separate offset.
int standard_fd(std::string const & path) noexcept
{
    if (path == "-" || path == "/dev/stdout")
        return STDOUT_FILENO;
    if (path == "/dev/stderr")
        return STDERR_FILENO;
    return -1;
}

// The codec an output's name asks for (none for stdout). \throws io_error if it is unwritable
detail::codec output_codec(std::string const & path)
{
    check_writable_compression(path);
    return path == "-" ? detail::codec::none : detail::codec_from_extension(path);
}

// -------------------------------------------------------------------------------------------------
// output_file

// The temporaries of the open outputs, for remove_temporary_outputs() in a signal handler: blocks
// of slots that only grow (docs/design.md, "Output commit"); a slot's state is published
// atomically, its path buffer reused while long enough.
constexpr std::size_t slots_per_block = 64;
struct temp_slot
{
    std::atomic<int> state{0}; // 0 free, 1 being written, 2 holds a path
    char * path{nullptr};
    std::size_t capacity{0};
};
struct temp_block
{
    temp_slot slots[slots_per_block];
    std::atomic<temp_block *> next{nullptr};
};
temp_block first_block;

// Takes a free slot for `path` in `block` (-1: none free there).
int take_slot(temp_block & block, std::string const & path) noexcept
{
    for (std::size_t i = 0; i < slots_per_block; ++i)
    {
        temp_slot & s = block.slots[i];
        int expected = 0;
        if (!s.state.compare_exchange_strong(expected, 1))
            continue;
        if (s.capacity <= path.size())
        {
            char * const bigger = new (std::nothrow) char[path.size() + 1];
            if (bigger == nullptr)
            {
                s.state.store(0, std::memory_order_release);
                return -1;
            }
            delete[] std::exchange(s.path, bigger);
            s.capacity = path.size() + 1;
        }
        std::memcpy(s.path, path.c_str(), path.size() + 1);
        s.state.store(2, std::memory_order_release);
        return static_cast<int>(i);
    }
    return -1;
}

// Registers `path`; its number (block index times slots_per_block plus slot), -1 where no memory
// was left for a new block.
int register_temporary(std::string const & path) noexcept
{
    temp_block * block = &first_block;
    for (int base = 0;; base += static_cast<int>(slots_per_block))
    {
        if (int const i = take_slot(*block, path); i >= 0)
            return base + i;
        temp_block * next = block->next.load(std::memory_order_acquire);
        if (next == nullptr)
        {
            auto * const fresh = new (std::nothrow) temp_block;
            if (fresh == nullptr)
                return -1;
            if (block->next.compare_exchange_strong(next, fresh, std::memory_order_acq_rel))
                next = fresh;
            else
                delete fresh; // another thread added one: `next` is it
        }
        block = next;
    }
}

void unregister_temporary(int const number) noexcept
{
    if (number < 0)
        return;
    temp_block * block = &first_block;
    for (int n = number / static_cast<int>(slots_per_block); n > 0 && block != nullptr; --n)
        block = block->next.load(std::memory_order_acquire);
    if (block != nullptr)
        block->slots[number % static_cast<int>(slots_per_block)].state.store(
            0, std::memory_order_release);
}

// Bytes of a file name (one path component) that every file system ksieve writes to accepts.
constexpr std::size_t name_max = NAME_MAX;

// The FNV-1a hash of `text`.
std::uint64_t name_hash(std::string_view const text) noexcept
{
    std::uint64_t h = 0xcbf29ce484222325;
    for (char const c : text)
        h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3;
    return h;
}

// A token of this process among others that may write beside it: processes in other containers or
// on other machines of a shared file system can have the same process id.
std::string const & process_token()
{
    static std::string const token = []
    {
        std::uint64_t bits = 0;
        try
        {
            std::random_device rd;
            bits = (std::uint64_t{rd()} << 32) ^ rd();
        }
        catch (std::exception const &) // no entropy source: the clock and an address
        {
        }
        bits ^=
            static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
        bits ^= reinterpret_cast<std::uintptr_t>(&bits);
        char hex[24];
        std::snprintf(hex, sizeof hex, "%08llx",
                      static_cast<unsigned long long>((bits ^ (bits >> 32)) & 0xffffffffU));
        return std::to_string(::getpid()) + "-" + hex;
    }();
    return token;
}

// The temporary beside `target`: "<target>.ksieve-tmp.<pid>-<token>[.<n>]" (token: 8 random hex
// digits of this process; n: the process's n-th output). A file name that would pass name_max keeps
// the start of the target's and a hash of all of it instead.
std::string temporary_name(std::string const & target, unsigned const n)
{
    std::string suffix = ".ksieve-tmp." + process_token();
    if (n != 0)
    {
        suffix += '.';
        suffix += std::to_string(n);
    }
    std::size_t const slash = target.rfind('/');
    std::size_t const base_at = slash == std::string::npos ? 0 : slash + 1;
    std::string_view const base = std::string_view{target}.substr(base_at);
    if (base.size() + suffix.size() <= name_max)
        return target + suffix;
    char hash[24];
    std::snprintf(hash, sizeof hash, ".%016llx", static_cast<unsigned long long>(name_hash(base)));
    std::size_t const keep = name_max - suffix.size() - std::strlen(hash);
    return target.substr(0, base_at) + std::string{base.substr(0, keep)} + hash + suffix;
}

} // namespace

void check_output_name(std::string const & path)
{
    check_writable_compression(path);
    if (path == "-" || is_kernel_path(path))
        return;
    std::size_t const slash = path.rfind('/');
    std::size_t const name = path.size() - (slash == std::string::npos ? 0 : slash + 1);
    if (name > name_max)
        throw io_error{"'" + path + "': cannot create: " + std::strerror(ENAMETOOLONG) +
                       " (a file name has at most " + std::to_string(name_max) + " bytes)"};
}

// The path a symbolic link finally names (relative targets resolved against the link's directory),
// also when that file does not exist yet; `path` itself if it is not a link.
std::string final_target(std::string path)
{
    for (int depth = 0; depth < 40; ++depth)
    {
        struct stat lst
        {
        };
        if (::lstat(path.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode))
            return path;
        std::string target(PATH_MAX, '\0');
        ssize_t const n = ::readlink(path.c_str(), target.data(), target.size() - 1);
        if (n < 0)
            return path;
        target.resize(static_cast<std::size_t>(n));
        if (!target.starts_with('/'))
        {
            auto const slash = path.rfind('/');
            target =
                (slash == std::string::npos ? std::string{} : path.substr(0, slash + 1)) + target;
        }
        path = std::move(target);
    }
    throw io_error{"'" + path + "': too many levels of symbolic links"};
}

void remove_temporary_outputs() noexcept
{
    for (temp_block const * b = &first_block; b != nullptr;
         b = b->next.load(std::memory_order_acquire))
        for (temp_slot const & slot : b->slots)
            if (slot.state.load(std::memory_order_acquire) == 2)
                ::unlink(slot.path);
}

output_file::output_file(std::string path) : path_{std::move(path)}
{
    in_place_ = true;
    write_path_ = path_;
    target_ = path_;
    if (path_ == "-" || is_kernel_path(path_))
        return;
    struct stat st
    {
    };
    if (::stat(path_.c_str(), &st) == 0) // follows symbolic links: what is finally written
    {
        if (S_ISDIR(st.st_mode))
            throw io_error{"'" + path_ + "': is a directory"};
        if (!S_ISREG(st.st_mode)) // FIFO, character or block device, socket: written in place
            return;
        replaces_ = true;
        replaced_mode_ = static_cast<unsigned>(st.st_mode & 0777);
    }
    // A regular file or a new name: written to a temporary beside the file a symbolic link names
    // (so that the link stays a link) and renamed over it.
    in_place_ = false;
    target_ = final_target(path_);
    static std::atomic<unsigned> counter{0};
    write_path_ = temporary_name(target_, counter.fetch_add(1));
    // filter files written there name the output in their errors
    name_written_file(write_path_, path_);
    slot_ = register_temporary(write_path_);
}

output_file::~output_file()
{
    if (!in_place_)
    {
        if (!committed_)
            ::unlink(write_path_.c_str());
        forget_written_file(write_path_);
    }
    unregister_temporary(slot_);
}

void output_file::commit()
{
    if (committed_)
        return;
    if (!in_place_ && replaces_)
        (void)::chmod(write_path_.c_str(), static_cast<mode_t>(replaced_mode_)); // advice only
    bool const failed = !in_place_ && ::rename(write_path_.c_str(), target_.c_str()) != 0;
    int const e = errno;
    if (failed)
        ::unlink(write_path_.c_str());
    committed_ = true;
    unregister_temporary(std::exchange(slot_, -1));
    if (failed)
        throw io_error{"'" + path_ +
                       "': cannot move the finished output into place: " + errno_text(e)};
}

// ---------------------------------------------------------------------------------------------------
// text outputs

struct text_output::state
{
    output_file out;
    std::unique_ptr<detail::block_compressor> comp;
    bool compressed{false}; // comp has been given bytes
    std::string zbuf;       // compressed bytes of one flush
    bool lean{false};       // writer_options::lean
    int fd{-1};
    bool own_fd{false};
    bool closed{false};
    bool finished{false};       // finish() completed: the stream is whole
    std::uint64_t written{0};   // bytes written to fd
    std::uint64_t writeback{0}; // bytes whose disk write has been started

    explicit state(std::string const & path) : out{path} {}
    ~state()
    {
        if (own_fd)
            ::close(fd);
    }

    void write_all(std::string_view const bytes)
    {
        std::size_t done = 0;
        while (done < bytes.size())
        {
            ssize_t const k = ::write(fd, bytes.data() + done, bytes.size() - done);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                throw io_error{"'" + out.path() + "': write failed: " + errno_text(errno)};
            done += static_cast<std::size_t>(k);
        }
        written += bytes.size();
    }

    // A file that will replace an existing one has its disk writes started as it grows: the rename
    // over the old file (ext4's replace-by-rename safeguard) would write out what is still in the
    // page cache at the end of the run, on one thread (0.13 s for 300 MB here).
    void start_writeback() noexcept
    {
        constexpr std::uint64_t writeback_step = std::uint64_t{32} << 20;
        if (!out.replaces() || !own_fd || written - writeback < writeback_step)
            return;
        ksieve::start_writeback(fd, writeback, written - writeback);
        writeback = written;
    }
};

text_output::text_output(std::string const & path, writer_options const & options)
    : s_{std::make_unique<state>(path)}
{
    if (detail::codec const c = output_codec(path); c != detail::codec::none)
        s_->comp = std::make_unique<detail::block_compressor>(
            c, detail::codec_level(c, options.compression_level), options.threads);
    s_->lean = options.lean;
    std::string const & wp = s_->out.write_path();
    s_->fd = standard_fd(wp);
    if (s_->fd < 0)
    {
        s_->fd = ::open(wp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (s_->fd < 0)
            throw io_error{"'" + path + "': cannot create: " + errno_text(errno)};
        s_->own_fd = true;
    }
    // Compressed output goes to the compressor in pieces of at least 8 MiB, for its threads.
    limit_ = options.buffer_bytes != 0 ? options.buffer_bytes
             : s_->comp != nullptr     ? std::size_t{8} << 20
                                       : std::size_t{1} << 20;
    buf_.reserve(limit_ + (options.buffer_bytes != 0 ? 0 : std::size_t{64} << 10));
}

text_output::~text_output() = default;

void text_output::flush()
{
    if (buf_.empty())
        return;
    if (s_->comp != nullptr)
    {
        s_->zbuf.clear();
        s_->comp->compress(buf_, s_->zbuf);
        s_->write_all(s_->zbuf);
        s_->compressed = true;
        if (s_->lean)
        {
            std::string{}.swap(s_->zbuf);
            s_->comp->release_memory();
        }
    }
    else
        s_->write_all(buf_);
    buf_.clear();
    s_->start_writeback();
}

void text_output::finish()
{
    if (s_->closed)
        return;
    s_->closed = true;
    flush();
    // nothing written: still a valid (empty) stream of the format
    if (s_->comp != nullptr && !s_->compressed)
    {
        s_->zbuf.clear();
        s_->comp->compress_empty(s_->zbuf);
        s_->write_all(s_->zbuf);
    }
    if (s_->comp != nullptr)
        s_->write_all(s_->comp->trailer());
    if (s_->own_fd)
    {
        s_->own_fd = false;
        if (::close(s_->fd) != 0)
            throw io_error{"'" + s_->out.path() + "': write failed: " + errno_text(errno)};
    }
    s_->finished = true;
}

void text_output::commit()
{
    if (!s_->finished)
        throw io_error{"'" + s_->out.path() + "': not finished, not moved into place"};
    s_->out.commit();
}

// ---------------------------------------------------------------------------------------------------
// writers

namespace
{

// FASTA / FASTQ text, plain or compressed (gzip as BGZF, zstd, xz, bzip2) in independent members
// that the -t threads compress in parallel (text_output).
class text_writer final : public writer
{
public:
    text_writer(std::string const & path, seq_format const input, seq_format const output,
                writer_options const & options)
        : out_{path, options}, input_{input}, output_{output}
    {
    }

    void set_input_format(seq_format const format) noexcept override { input_ = format; }

    void write(record_view const & r) override
    {
        std::string & buf = out_.buffer();
        if (input_ == output_)
        {
            buf.append(r.raw);
            if (r.raw.empty() || r.raw.back() != '\n')
                buf.push_back('\n');
        }
        else
        {
            std::string_view const header = hts_format(input_) ? r.name : r.header;
            buf.push_back(output_ == seq_format::fasta ? '>' : '@');
            buf.append(header);
            buf.push_back('\n');
            buf.append(r.seq);
            buf.push_back('\n');
            if (output_ == seq_format::fastq)
            {
                buf.append("+\n");
                if (r.qual.size() == r.seq.size())
                    buf.append(r.qual);
                else
                    buf.append(r.seq.size(), 'I');
                buf.push_back('\n');
            }
        }
        out_.appended(); // pieces end at record ends
    }

    void finish() override { out_.finish(); }
    void commit() override { out_.commit(); }

private:
    text_output out_;
    seq_format input_;
    seq_format output_;
};

// SAM / BAM / CRAM through htslib.
class hts_writer final : public writer
{
public:
    hts_writer(std::string const & path, seq_format const input, seq_format const output,
               bool const gz, writer_options const & options)
        : out_{path}, input_{input}
    {
        detail::quiet_htslib();
        std::string mode = output == seq_format::bam    ? "wb"
                           : output == seq_format::cram ? "wc"
                           : gz                         ? "wz"
                                                        : "w";
        if ((mode == "wb" || mode == "wz") && options.compression_level >= 0)
            mode += static_cast<char>('0' + std::min(options.compression_level, 9));
        std::string const & wp = out_.write_path();
        errno = 0;
        detail::hts_ptr<hFILE> h;
        // Opened under the output's own name: a CRAM file's header holds the name it was opened
        // under (its file id), which must not depend on the process id.
        char const * name = path.c_str();
        if (standard_fd(wp) >= 0)
        {
            int const fd = ::dup(standard_fd(wp));
            h.reset(fd < 0 ? nullptr : hdopen(fd, "w"));
            if (h == nullptr && fd >= 0)
                ::close(fd);
            name = "-";
        }
        else
            h.reset(hopen(wp.c_str(), "w"));
        fp_.reset(h == nullptr ? nullptr : hts_hopen(h.get(), name, mode.c_str()));
        if (fp_ == nullptr)
            throw io_error{"'" + path + "': cannot create: " + errno_text(errno)};
        (void)h.release(); // fp_ owns it
        if (output == seq_format::cram)
            (void)hts_set_opt(fp_.get(), CRAM_OPT_NO_REF, 1);
        if (options.threads > 1)
            if (htsThreadPool * const pool = detail::hts_thread_pool(options.threads);
                pool != nullptr)
                (void)hts_set_thread_pool(fp_.get(), pool);
        std::string const text = options.sam_header.empty()
                                     ? std::string{"@HD\tVN:1.6\tSO:unknown\n"}
                                     : options.sam_header;
        hdr_.reset(sam_hdr_parse(text.size(), text.c_str()));
        if (hdr_ == nullptr)
            throw io_error{"'" + path + "': invalid SAM header for the output"};
        if (sam_hdr_write(fp_.get(), hdr_.get()) < 0)
            throw io_error{"'" + path + "': write failed: " + errno_text(errno)};
        rec_.reset(bam_init1());
        if (rec_ == nullptr)
            throw std::bad_alloc{};
    }

    void set_input_format(seq_format const format) noexcept override { input_ = format; }

    void write(record_view const & r) override
    {
        if (hts_format(input_))
        {
            std::size_t const core = sizeof(bam1_core_t);
            std::size_t const len = r.raw.size() - core;
            if (rec_->m_data < len)
            {
                auto * const d = static_cast<std::uint8_t *>(std::realloc(rec_->data, len));
                if (d == nullptr)
                    throw std::bad_alloc{};
                rec_->data = d;
                rec_->m_data = len;
            }
            std::memcpy(&rec_->core, r.raw.data(), core);
            std::memcpy(rec_->data, r.raw.data() + core, len);
            rec_->l_data = static_cast<int>(len);
        }
        else
        {
            char const * qual = nullptr;
            if (!r.qual.empty() && r.qual.size() == r.seq.size())
            {
                qual_.resize(r.qual.size());
                for (std::size_t i = 0; i < r.qual.size(); ++i)
                    qual_[i] = static_cast<char>(
                        std::max(0, static_cast<int>(static_cast<unsigned char>(r.qual[i])) - 33));
                qual = qual_.data();
            }
            if (bam_set1(rec_.get(), r.name.size(), r.name.data(), BAM_FUNMAP, -1, -1, 0, 0,
                         nullptr, -1, -1, 0, r.seq.size(), r.seq.data(), qual, 0) < 0)
                throw io_error{"'" + out_.path() + "': cannot store record '" +
                               std::string{r.name} +
                               "' as SAM/BAM/CRAM (name longer than 254 characters?)"};
        }
        if (sam_write1(fp_.get(), hdr_.get(), rec_.get()) < 0)
            throw io_error{"'" + out_.path() + "': write failed: " + errno_text(errno)};
    }

    void finish() override
    {
        if (closed_)
            return;
        closed_ = true;
        errno = 0;
        if (fp_ != nullptr && hts_close(fp_.release()) != 0)
            throw io_error{"'" + out_.path() + "': write failed: " + errno_text(errno)};
    }

    void commit() override { out_.commit(); }

private:
    output_file out_;
    seq_format input_;
    // released in reverse: the file first (htslib closes it with its header), header, record
    detail::hts_ptr<bam1_t> rec_;
    detail::hts_ptr<sam_hdr_t> hdr_;
    detail::hts_ptr<htsFile> fp_;
    std::string qual_;
    bool closed_{false};
};

} // namespace

std::unique_ptr<writer> writer::open(std::string const & path, seq_format const input_format,
                                     writer_options const & options)
{
    seq_format const output = format_from_extension(path, input_format);
    detail::codec const c = output_codec(path);
    if (hts_format(output))
    {
        if (c != detail::codec::none && c != detail::codec::gzip)
            throw io_error{"'" + path + "': SAM, BAM and CRAM outputs cannot be " +
                           detail::codec_name(c) + "-compressed (use .sam.gz, .bam or .cram)"};
        return std::make_unique<hts_writer>(path, input_format, output, c == detail::codec::gzip,
                                            options);
    }
    return std::make_unique<text_writer>(path, input_format, output, options);
}

} // namespace ksieve::io
