#pragma once
/*! \file
 * \brief start_writeback: advice to the kernel to start writing a growing file's data to disk
 * (files the filter library and the pipeline's outputs write), so that the dirty pages of a long
 * output do not pile up. Defined with the library's other calls that differ between operating
 * systems (src/support/platform.cpp).
 */
#include <cstdint>

namespace ksieve
{

/*! \brief Start the disk write of `bytes` bytes at `offset` of the file `fd` without waiting for
 * it (Linux sync_file_range; else nothing: the kernel writes them back in its own time). Advice
 * only: errors are ignored. Thread-safe. */
void start_writeback(int fd, std::uint64_t offset, std::uint64_t bytes) noexcept;

} // namespace ksieve
