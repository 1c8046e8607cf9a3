#pragma once
// Internal: the io library's only calls that differ between operating systems (writeback of growing
// outputs, sockets that never raise SIGPIPE), each with a portable fallback. The Linux calls are
// compiled on Linux unless KSIEVE_NO_LINUX_CALLS is defined (CMake option
// KSIEVE_PORTABLE_FALLBACKS). All functions are thread-safe.
#include <cstddef>
#include <cstdint>

#include <sys/types.h>

namespace ksieve::io::platform
{

/*! \brief Start the disk write of `bytes` bytes at `offset` of the file `fd` without waiting for
 * it (Linux sync_file_range; else nothing: the kernel writes them back in its own time). */
void start_writeback(int fd, std::uint64_t offset, std::uint64_t bytes) noexcept;

/*! \brief Make writes to the socket `fd` whose reader went away fail with EPIPE rather than raise
 * SIGPIPE, where that is a property of the socket (SO_NOSIGPIPE: macOS); else nothing (see
 * send_without_sigpipe). */
void keep_sigpipe_off(int fd) noexcept;

/*! \brief send() that fails with EPIPE instead of raising SIGPIPE (MSG_NOSIGNAL where the system
 * has it; else the socket must have been given to keep_sigpipe_off()). */
[[nodiscard]] ssize_t send_without_sigpipe(int fd, void const * data, std::size_t bytes) noexcept;

} // namespace ksieve::io::platform
