// The filter library's portability layer (filters/src/support/platform.hpp): each call on the path
// this build compiled (the Linux calls, or the portable fallbacks with KSIEVE_PORTABLE_FALLBACKS):
// the machine's and the cgroup's memory are plausible, memory advice leaves the bytes as they were,
// writeback, flushing and direct I/O leave a file as written.
#include "../../filters/src/support/platform.hpp"

#include <ksieve/filters/support/memory_budget.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace
{

namespace platform = ksieve::detail::platform;
namespace fs = std::filesystem;

constexpr std::size_t region_bytes = std::size_t{4} << 20;

// A byte pattern that no page of zeros or of another offset matches.
std::vector<unsigned char> pattern(std::size_t const bytes)
{
    std::vector<unsigned char> v(bytes);
    for (std::size_t i = 0; i < bytes; ++i)
        v[i] = static_cast<unsigned char>((i * 131 + i / 4096) & 0xFF);
    return v;
}

// A temporary file holding `bytes`, removed with the object.
class temp_file
{
public:
    explicit temp_file(std::vector<unsigned char> const & bytes)
        : path_{fs::temp_directory_path() /
                ("ksieve-platform-" + std::to_string(::getpid()) + ".bin")}
    {
        fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd_ >= 0 && !bytes.empty())
            written_ = ::write(fd_, bytes.data(), bytes.size());
    }
    ~temp_file()
    {
        if (fd_ >= 0)
            ::close(fd_);
        fs::remove(path_);
    }
    temp_file(temp_file const &) = delete;
    temp_file & operator=(temp_file const &) = delete;

    [[nodiscard]] int fd() const noexcept { return fd_; }
    [[nodiscard]] ssize_t written() const noexcept { return written_; }

private:
    fs::path path_;
    int fd_{-1};
    ssize_t written_{-1};
};

TEST(platform, the_build_compiled_the_path_it_was_asked_for)
{
#if defined(__linux__) && !defined(KSIEVE_NO_LINUX_CALLS)
    EXPECT_TRUE(platform::uses_linux_calls());
#else
    EXPECT_FALSE(platform::uses_linux_calls());
#endif
}

TEST(platform, the_machine_and_cgroup_memory_are_plausible)
{
    std::uint64_t const machine = platform::physical_memory_bytes();
    EXPECT_GE(machine, std::uint64_t{64} << 20);
    EXPECT_LT(machine, std::uint64_t{1} << 60);
    std::uint64_t const group = platform::cgroup_memory_limit();
    if (!platform::uses_linux_calls())
    {
        EXPECT_EQ(group, 0u); // no cgroups: no limit
    }
    else if (group != 0)
    {
        EXPECT_GE(group, std::uint64_t{1} << 20);
    }
    EXPECT_LT(group, std::uint64_t{1} << 60);
    // the default budget is the smaller of the two
    std::uint64_t const expected = group != 0 && group < machine ? group : machine;
    EXPECT_EQ(ksieve::physical_memory(), expected);
    EXPECT_EQ(ksieve::memory_limit_from_cgroup(), group != 0 && group < machine);
}

TEST(platform, advice_leaves_anonymous_memory_as_written)
{
    void * const m =
        ::mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(m, MAP_FAILED);
    auto * const p = static_cast<unsigned char *>(m);
    platform::advise_huge_pages(m, region_bytes);
    platform::populate_write(m, region_bytes);
    for (std::size_t i = 0; i < region_bytes; i += 4096)
        EXPECT_EQ(p[i], 0u) << i;
    std::vector<unsigned char> const bytes = pattern(region_bytes);
    std::memcpy(p, bytes.data(), region_bytes);
    platform::populate_read(m, region_bytes);
    platform::advise_random(m, region_bytes);
    platform::advise_huge_pages(m, region_bytes);
    EXPECT_EQ(std::memcmp(p, bytes.data(), region_bytes), 0);
    ::munmap(m, region_bytes);
}

TEST(platform, pages_given_back_are_read_from_the_file_again)
{
    std::vector<unsigned char> const bytes = pattern(region_bytes);
    temp_file const file{bytes};
    ASSERT_EQ(file.written(), static_cast<ssize_t>(region_bytes));
    void * const m = ::mmap(nullptr, region_bytes, PROT_READ, MAP_SHARED, file.fd(), 0);
    ASSERT_NE(m, MAP_FAILED);
    auto const * const p = static_cast<unsigned char const *>(m);
    platform::populate_read(m, region_bytes);
    EXPECT_EQ(std::memcmp(p, bytes.data(), region_bytes), 0);
    platform::release_pages(m, region_bytes);
    EXPECT_EQ(std::memcmp(p, bytes.data(), region_bytes), 0);
    platform::advise_random(m, region_bytes);
    platform::release_pages(m, region_bytes / 2);
    EXPECT_EQ(std::memcmp(p, bytes.data(), region_bytes), 0);
    ::munmap(m, region_bytes);
}

TEST(platform, writeback_flush_and_direct_io_leave_the_file_as_written)
{
    std::vector<unsigned char> const bytes = pattern(region_bytes);
    temp_file const file{bytes};
    ASSERT_EQ(file.written(), static_cast<ssize_t>(region_bytes));
    platform::start_writeback(file.fd(), 0, region_bytes / 2);
    platform::start_writeback(file.fd(), region_bytes / 2, region_bytes / 2);
    EXPECT_EQ(platform::sync_data(file.fd()), 0);
    platform::drop_cached_pages(file.fd());
    // direct I/O: the fallback never sets it; Linux sets it where the file system allows it
    bool const direct = platform::set_direct_io(file.fd(), true);
    if (!platform::uses_linux_calls())
    {
        EXPECT_FALSE(direct);
    }
    EXPECT_TRUE(platform::set_direct_io(file.fd(), false));
    EXPECT_EQ(::fcntl(file.fd(), F_GETFL) & O_ACCMODE, O_RDWR);
    std::vector<unsigned char> back(region_bytes);
    EXPECT_EQ(::pread(file.fd(), back.data(), back.size(), 0), static_cast<ssize_t>(region_bytes));
    EXPECT_EQ(back, bytes);
    // a flush of a descriptor that is not open fails with errno set
    EXPECT_EQ(platform::sync_data(-1), -1);
    EXPECT_EQ(errno, EBADF);
}

} // namespace
