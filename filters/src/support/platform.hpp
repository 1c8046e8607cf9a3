#pragma once
// Internal: the filter library's only calls that differ between operating systems (memory advice,
// the machine's and the cgroup's memory, writeback and direct I/O of files), each with a portable
// fallback. The Linux calls are compiled on Linux unless KSIEVE_NO_LINUX_CALLS is defined (CMake
// option KSIEVE_PORTABLE_FALLBACKS), which compiles the fallbacks everywhere so that Linux tests
// exercise what macOS runs. Advice is a hint: every advice function may do nothing. All functions
// are thread-safe.
#include <cstddef>
#include <cstdint>

#include <ksieve/filters/support/writeback.hpp>

namespace ksieve::detail::platform
{

/*! \brief Whether the Linux calls are compiled in (false: the portable fallbacks are). */
[[nodiscard]] bool uses_linux_calls() noexcept;

/*! \brief Advise transparent huge pages for `bytes` at `p` (Linux MADV_HUGEPAGE; else nothing). */
void advise_huge_pages(void * p, std::size_t bytes) noexcept;

/*! \brief Fault the pages of `bytes` at `p` in for reading in one pass (Linux
 * MADV_POPULATE_READ where the kernel has it; else nothing: pages are read as touched). */
void populate_read(void * p, std::size_t bytes) noexcept;

/*! \brief Fault the pages of `bytes` at `p` in writable at once (Linux MADV_POPULATE_WRITE where
 * the kernel has it; else nothing: pages are faulted in as touched). */
void populate_write(void * p, std::size_t bytes) noexcept;

/*! \brief Give back the pages of a read-only file mapping (whole pages at `p`, `bytes` long): they
 * are read from the file again when touched (Linux MADV_DONTNEED; else POSIX_MADV_DONTNEED, a
 * hint). */
void release_pages(void * p, std::size_t bytes) noexcept;

/*! \brief Advise random access to a mapping: no readahead (POSIX_MADV_RANDOM, everywhere). */
void advise_random(void * p, std::size_t bytes) noexcept;

/*! \brief The machine's physical memory in bytes, 0 if unknown (sysctl hw.memsize on macOS,
 * sysconf elsewhere). */
[[nodiscard]] std::uint64_t physical_memory_bytes() noexcept;

/*! \brief The memory limit of this process's cgroups in bytes (v2 memory.max and memory.high, v1
 * memory.limit_in_bytes and memory.soft_limit_in_bytes, the smallest up the tree), 0 where none is
 * set or the system has no cgroups (every system but Linux). */
[[nodiscard]] std::uint64_t cgroup_memory_limit() noexcept;

/*! \brief See ksieve::start_writeback (public: the pipeline's outputs use it too). */
using ksieve::start_writeback;

/*! \brief Flush the data of the file `fd` to the disk (fdatasync on Linux, fsync elsewhere).
 * \return 0, or -1 with errno set. */
[[nodiscard]] int sync_data(int fd) noexcept;

/*! \brief Drop the cached pages of the file `fd` (Linux POSIX_FADV_DONTNEED; else nothing). */
void drop_cached_pages(int fd) noexcept;

/*! \brief Set or clear direct I/O (writes past the page cache, Linux O_DIRECT) on the open file
 * `fd`. \return whether the flag now has that value (the fallback: never set, always clear). */
bool set_direct_io(int fd, bool on) noexcept;

} // namespace ksieve::detail::platform
