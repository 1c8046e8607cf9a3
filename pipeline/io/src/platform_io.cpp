// The io library's calls that differ between operating systems (platform_io.hpp): SIGPIPE-free
// sends (MSG_NOSIGNAL, or SO_NOSIGPIPE on macOS), and which output paths name files of the kernel
// (/dev, /proc), each with its portable fallback beside it.
#include "platform_io.hpp"

#include <ksieve/io/io.hpp>

#include <sys/socket.h>

namespace ksieve::io
{

bool is_kernel_path(std::string const & path) noexcept
{
    return path.starts_with("/dev/") || path.starts_with("/proc/");
}

namespace platform
{

void keep_sigpipe_off(int const fd) noexcept
{
#if !defined(MSG_NOSIGNAL) && defined(SO_NOSIGPIPE)
    int const on = 1;
    (void)::setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, sizeof on);
#else
    (void)fd;
#endif
}

ssize_t send_without_sigpipe(int const fd, void const * const data,
                             std::size_t const bytes) noexcept
{
#if defined(MSG_NOSIGNAL)
    return ::send(fd, data, bytes, MSG_NOSIGNAL);
#else
    return ::send(fd, data, bytes, 0);
#endif
}

} // namespace platform

} // namespace ksieve::io
