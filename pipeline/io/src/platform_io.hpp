#pragma once
// Internal: the io library's only calls that differ between operating systems (sockets that never
// raise SIGPIPE), each with a portable fallback; the writeback of growing outputs is the filter
// library's (ksieve/filters/support/writeback.hpp). All functions are thread-safe.
#include <cstddef>
#include <cstdint>

#include <sys/types.h>

namespace ksieve::io::platform
{

/*! \brief Make writes to the socket `fd` whose reader went away fail with EPIPE rather than raise
 * SIGPIPE, where that is a property of the socket (SO_NOSIGPIPE: macOS); else nothing (see
 * send_without_sigpipe). */
void keep_sigpipe_off(int fd) noexcept;

/*! \brief send() that fails with EPIPE instead of raising SIGPIPE (MSG_NOSIGNAL where the system
 * has it; else the socket must have been given to keep_sigpipe_off()). */
[[nodiscard]] ssize_t send_without_sigpipe(int fd, void const * data, std::size_t bytes) noexcept;

} // namespace ksieve::io::platform
