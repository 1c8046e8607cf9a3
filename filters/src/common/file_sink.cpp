// The file writing mechanics of filter files (file_sink: checked writes, O_DIRECT staging,
// writeback as the file grows, flush at close) and the names under which write errors report the
// files written.
#include "file_sink.hpp"
#include "../support/platform.hpp"

#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/support/error.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ksieve
{

namespace
{

// Paths being written under another name than the one the user gave (temporaries): that name.
struct written_names
{
    std::mutex mutex;
    std::map<std::string, std::string> names;
};

written_names & the_written_names()
{
    static written_names n;
    return n;
}

} // namespace

void name_written_file(std::filesystem::path const & path, std::string name)
{
    written_names & n = the_written_names();
    std::lock_guard const lock{n.mutex};
    n.names[path.string()] = std::move(name);
}

void forget_written_file(std::filesystem::path const & path) noexcept
{
    written_names & n = the_written_names();
    std::lock_guard const lock{n.mutex};
    n.names.erase(path.string());
}

namespace detail
{

std::string errno_text()
{
    return std::strerror(errno);
}

std::string written_file_name(std::filesystem::path const & path)
{
    written_names & n = the_written_names();
    std::lock_guard const lock{n.mutex};
    auto const it = n.names.find(path.string());
    return it == n.names.end() ? path.string() : it->second;
}

// put(p, n) until size bytes are written (at most 1 GiB a call), retried on EINTR. \throws io_error
template <typename Put> void file_sink::all(void const * const data, std::uint64_t size, Put && put)
{
    auto const * p = static_cast<unsigned char const *>(data);
    while (size > 0)
    {
        auto const chunk =
            static_cast<std::size_t>(std::min<std::uint64_t>(size, std::uint64_t{1} << 30));
        ssize_t const n = put(p, chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            throw io_error{"cannot write '" + name_ +
                           "': " + (n < 0 ? errno_text() : std::string{"no progress"})};
        p += n;
        size -= static_cast<std::uint64_t>(n);
    }
}

file_sink::file_sink(std::filesystem::path const & path, bool const direct)
    : name_{written_file_name(path)}
{
    if (path == "-")
    {
        fd_ = STDOUT_FILENO;
        return;
    }
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0)
        throw io_error{"cannot create '" + name_ + "': " + errno_text()};
    own_ = true;
    struct stat st
    {
    };
    regular_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
    if (direct && regular_)
        start_direct();
}

file_sink::~file_sink()
{
    if (own_ && fd_ >= 0)
        ::close(fd_);
    std::free(stage_);
}

void file_sink::write_at(std::uint64_t offset, void const * const data, std::uint64_t const size)
{
    end_direct(); // (the bytes are all in the file, not in the staging buffer)
    all(data, size,
        [&](unsigned char const * const p, std::size_t const n)
        {
            ssize_t const done = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
            offset += done > 0 ? static_cast<std::uint64_t>(done) : 0;
            return done;
        });
}

void file_sink::write(void const * const data, std::uint64_t const size)
{
    if (stage_ != nullptr)
    {
        stage(static_cast<unsigned char const *>(data), size);
        return;
    }
    all(data, size,
        [&](unsigned char const * const p, std::size_t const n) { return ::write(fd_, p, n); });
    written_ += size;
    // The disk write of a large file is started as it grows (it runs while the caller computes the
    // next bytes), so that close() waits only for the last part.
    if (regular_ && written_ - writeback_ >= writeback_step)
    {
        platform::start_writeback(fd_, writeback_, written_ - writeback_);
        writeback_ = written_;
    }
}

void file_sink::close()
{
    if (!own_)
        return;
    try
    {
        end_direct();
    }
    catch (...)
    {
        own_ = false;
        ::close(fd_);
        throw;
    }
    own_ = false;
    if (written_ >= huge_mapping_bytes && regular_)
    {
        if (platform::sync_data(fd_) != 0)
        {
            std::string const why = errno_text();
            ::close(fd_);
            throw io_error{"cannot write '" + name_ + "': " + why};
        }
        platform::drop_cached_pages(fd_);
    }
    if (::close(fd_) != 0)
        throw io_error{"cannot write '" + name_ + "': " + errno_text()};
}

// Direct I/O on the open file and a staging buffer, if both can be had (else plain writes).
void file_sink::start_direct() noexcept
{
    if (!platform::set_direct_io(fd_, true))
        return;
    stage_ = static_cast<unsigned char *>(std::aligned_alloc(direct_align, stage_bytes));
    if (stage_ == nullptr)
        platform::set_direct_io(fd_, false);
}

// Bytes into the staging buffer; each full buffer written directly.
void file_sink::stage(unsigned char const * p, std::uint64_t size)
{
    while (size > 0)
    {
        std::size_t const n =
            static_cast<std::size_t>(std::min<std::uint64_t>(size, stage_bytes - staged_));
        std::memcpy(stage_ + staged_, p, n);
        staged_ += n;
        p += n;
        size -= n;
        if (staged_ == stage_bytes)
            flush_stage(stage_bytes);
    }
}

// The first `bytes` (a multiple of direct_align) of the staging buffer into the file; the rest
// moves to its front. A direct write the file system refuses (EINVAL) is made through the page
// cache instead.
void file_sink::flush_stage(std::size_t const bytes)
{
    auto put = [&](unsigned char const * const p, std::size_t const n)
    {
        ssize_t const done = ::write(fd_, p, n);
        if (done < 0 && errno == EINVAL && direct_)
        {
            drop_direct_flag();
            return ::write(fd_, p, n);
        }
        return done;
    };
    all(stage_, bytes, put);
    written_ += bytes;
    std::memmove(stage_, stage_ + bytes, staged_ - bytes);
    staged_ -= bytes;
}

void file_sink::drop_direct_flag() noexcept
{
    platform::set_direct_io(fd_, false);
    direct_ = false;
}

// The staged bytes written (whole blocks directly, the rest through the page cache); plain writes
// from then on.
void file_sink::end_direct()
{
    if (stage_ == nullptr)
        return;
    flush_stage(staged_ / direct_align * direct_align);
    if (direct_)
        drop_direct_flag();
    if (staged_ > 0)
        flush_stage(staged_);
    std::free(stage_);
    stage_ = nullptr;
}

} // namespace detail

} // namespace ksieve
