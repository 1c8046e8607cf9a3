// zeroed_memory: zero-filled, 64-byte aligned blocks (anonymous mappings for large ones, huge pages
// advised and pages populated for writing; aligned operator new for small ones).
#include <ksieve/filters/support/zeroed_memory.hpp>

#include "platform.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#include <sys/mman.h>

namespace ksieve
{

namespace
{
constexpr std::align_val_t block_alignment{64};
} // namespace

zeroed_memory::zeroed_memory(std::size_t const bytes)
    : bytes_{std::max<std::size_t>(bytes, 1)}, charge_{std::max<std::size_t>(bytes, 1)}
{
    if (bytes_ >= map_min_bytes)
    {
        void * const m =
            ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            throw std::bad_alloc{};
        detail::platform::advise_huge_pages(m, bytes_);
        // Pages written from the start: a table read before it is written would first map the
        // shared zero page, and the write would then replace it with a flush of every thread's TLB.
        // (A hint: older kernels refuse it and fault the pages in as they are touched.)
        detail::platform::populate_write(m, bytes_);
        ptr_ = m;
        mapped_ = true;
        return;
    }
    ptr_ = ::operator new(bytes_, block_alignment);
    std::memset(ptr_, 0, bytes_);
}

zeroed_memory::~zeroed_memory()
{
    if (ptr_ == nullptr)
        return;
    if (mapped_)
    {
        ::munmap(ptr_, bytes_);
        return;
    }
    ::operator delete(ptr_, block_alignment);
}

} // namespace ksieve
