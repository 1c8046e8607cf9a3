// The blocked Bloom filter's kernel family (private header of bloom.cpp, the wrapper sources and
// cpu_dispatch.cpp): the batch entries each CPU level's copy exports and their dispatch table. The
// body is bloom_blocked_kernels.inc.
#pragma once
#include "bloom_common.hpp"

#include <ksieve/filters/support/cpu_dispatch.hpp>

#include <atomic>
#include <cstdint>
#include <span>

namespace ksieve::detail
{

// words: the table of `blocks` blocks; k: the bits per key. Thread safety: insert_batch needs
// exclusive access, the others may run concurrently with each other.

/*! \brief Sets the keys' bits. */
using bloom_insert_batch_fn = void(std::uint64_t * words, std::uint64_t blocks, unsigned k,
                                   std::span<std::uint64_t const> keys) noexcept;
/*! \brief Sets the keys' bits with atomic ORs. */
using bloom_insert_batch_concurrent_fn = void(std::uint64_t * words, std::uint64_t blocks,
                                              unsigned k,
                                              std::span<std::uint64_t const> keys) noexcept;
/*! \brief Sets the k bits of block for the key's low hash word lo, atomically. */
using bloom_set_bits_atomic_fn = void(std::uint64_t * block, std::uint32_t lo, unsigned k) noexcept;
/*! \brief out[i] = 1 if keys[i] may be in the filter, else 0. */
using bloom_count_batch_fn = void(std::uint64_t const * words, std::uint64_t blocks, unsigned k,
                                  std::span<std::uint64_t const> keys,
                                  std::uint64_t * out) noexcept;
/*! \brief count_batch over the shards of a sharded filter whose shards have k bits each. */
using bloom_count_sharded_fn = void(bloom_shard_tables const & t, unsigned k,
                                    std::span<std::uint64_t const> keys,
                                    std::uint64_t * out) noexcept;

/*! \brief The blocked Bloom filter's dispatch table: one CPU level's entries. */
struct bloom_kernel_table
{
    bloom_insert_batch_fn * insert_batch;                       //!< insert_batch
    bloom_insert_batch_concurrent_fn * insert_batch_concurrent; //!< insert_batch_concurrent
    bloom_set_bits_atomic_fn * set_bits_atomic;                 //!< one key, atomically
    bloom_count_batch_fn * count_batch;                         //!< count_batch
    bloom_count_sharded_fn * count_sharded;                     //!< count_sharded
};

namespace generic
{
// The build's target (bloom_blocked_generic.cpp).
bloom_insert_batch_fn bloom_insert_batch;
bloom_insert_batch_concurrent_fn bloom_insert_batch_concurrent;
bloom_set_bits_atomic_fn bloom_set_bits_atomic;
bloom_count_batch_fn bloom_count_batch;
bloom_count_sharded_fn bloom_count_sharded;
} // namespace generic

namespace x86_64_v3
{
// x86-64-v3 (bloom_blocked_x86_64_v3.cpp, where the build's target lacks it): AVX2 lookups.
bloom_insert_batch_fn bloom_insert_batch;
bloom_insert_batch_concurrent_fn bloom_insert_batch_concurrent;
bloom_set_bits_atomic_fn bloom_set_bits_atomic;
bloom_count_batch_fn bloom_count_batch;
bloom_count_sharded_fn bloom_count_sharded;
} // namespace x86_64_v3

/*! \brief The blocked Bloom filter's table per simd_level (filled by cpu_dispatch.cpp). */
extern bloom_kernel_table const bloom_kernel_tables[simd_level_count];

/*! \brief The active level's entry of bloom_kernel_tables, null until the level is chosen (set by
 * cpu_dispatch.cpp with the choice). */
extern std::atomic<bloom_kernel_table const *> bloom_kernels_active;

/*! \brief bloom_kernels() before the first choice: makes it, returns the entries. */
[[nodiscard, gnu::noinline]] bloom_kernel_table const & bloom_kernels_chosen() noexcept;

/*! \brief The blocked Bloom filter's active entries. */
[[nodiscard, gnu::always_inline]] inline bloom_kernel_table const & bloom_kernels() noexcept
{
    bloom_kernel_table const * const t = bloom_kernels_active.load(std::memory_order_relaxed);
    if (t == nullptr) [[unlikely]]
        return bloom_kernels_chosen();
    return *t;
}

} // namespace ksieve::detail
