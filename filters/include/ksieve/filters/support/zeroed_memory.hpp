#pragma once
/*! \file
 * \brief zeroed_memory: a move-only block of zero-filled, 64-byte aligned memory for large tables.
 *
 * Blocks of 256 KiB and more come straight from an anonymous mmap (already zero: no memset; the
 * pages faulted in writable at once where the kernel supports MADV_POPULATE_WRITE, so that a read
 * before the first write does not map the zero page and a later write does not flush every thread's
 * TLB) advised to use transparent huge pages (a hint only: fewer page faults and TLB misses on
 * random access where the kernel grants them), and go back to the system when freed: a filter whose
 * shards grow one by one leaves no freed tables behind in the allocator's heaps (dedup of 10 M
 * reads: 963 MB peak against 1.26 GB with a 4 MiB threshold). Smaller blocks come from aligned
 * operator new, zero-filled. Used by the quotient filter's tables, dedup's prefilter and the
 * pipeline's hit_set.
 *
 * Thread safety: a block is owned by one object; its bytes are the owner's to synchronise.
 */
#include <ksieve/filters/support/memory_budget.hpp>

#include <cstddef>
#include <utility>

namespace ksieve
{

/*! \brief Owning, zero-initialised, 64-byte aligned memory block (move-only). */
class zeroed_memory
{
public:
    /*! \brief Blocks of at least this many bytes are mapped (see the file comment). */
    static constexpr std::size_t map_min_bytes = std::size_t{256} << 10;

    zeroed_memory() noexcept = default;
    /*! \brief bytes zeroed bytes (at least one byte is allocated), charged to the memory budget.
     * \throws memory_limit_error over the budget, std::bad_alloc */
    explicit zeroed_memory(std::size_t bytes);
    zeroed_memory(zeroed_memory && other) noexcept
        : ptr_{std::exchange(other.ptr_, nullptr)}, bytes_{std::exchange(other.bytes_, 0)},
          mapped_{std::exchange(other.mapped_, false)}, charge_{std::move(other.charge_)}
    {
    }
    zeroed_memory & operator=(zeroed_memory && other) noexcept
    {
        if (this != &other)
        {
            zeroed_memory gone{std::move(*this)};
            ptr_ = std::exchange(other.ptr_, nullptr);
            bytes_ = std::exchange(other.bytes_, 0);
            mapped_ = std::exchange(other.mapped_, false);
            charge_ = std::move(other.charge_);
        }
        return *this;
    }
    zeroed_memory(zeroed_memory const &) = delete;
    zeroed_memory & operator=(zeroed_memory const &) = delete;
    ~zeroed_memory();

    /*! \brief The block (nullptr when empty), viewed as T. \pre alignof(T) <= 64. */
    template <typename T> [[nodiscard]] T * as() const noexcept
    {
        static_assert(alignof(T) <= 64);
        return static_cast<T *>(ptr_);
    }
    /*! \brief Bytes requested. */
    [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

private:
    void * ptr_{nullptr};
    std::size_t bytes_{0};
    bool mapped_{false};
    memory_charge charge_;
};

} // namespace ksieve
