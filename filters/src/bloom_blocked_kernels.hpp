// The exported entry points of the blocked Bloom filter's batch kernels, one set per CPU level
// (private header of bloom.cpp and the kernels' wrapper sources).
#pragma once
#include "bloom_common.hpp"

#include <cstdint>
#include <span>

namespace ksieve::detail
{

/* The blocked filter's batch kernels of one CPU level: level 0 is compiled for the build's target
 * (bloom_blocked_kernels_generic.cpp), level 1 for x86-64-v3 (bloom_blocked_kernels_x86_64_v3.cpp,
 * built where the build's target lacks it). The body is bloom_blocked_kernels.inc. words: the table
 * of `blocks` blocks; k: the bits per key. Thread safety: insert_batch needs exclusive access, the
 * others may run concurrently with each other. */
template <int Level> struct bloom_blocked_entry
{
    static void insert_batch(std::uint64_t * words, std::uint64_t blocks, unsigned k,
                             std::span<std::uint64_t const> keys) noexcept;
    static void insert_batch_concurrent(std::uint64_t * words, std::uint64_t blocks, unsigned k,
                                        std::span<std::uint64_t const> keys) noexcept;
    /*! Sets the k bits of block for the key's low hash word lo, atomically. */
    static void set_bits_atomic(std::uint64_t * block, std::uint32_t lo, unsigned k) noexcept;
    /*! out[i] = 1 if keys[i] may be in the filter, else 0. */
    static void count_batch(std::uint64_t const * words, std::uint64_t blocks, unsigned k,
                            std::span<std::uint64_t const> keys, std::uint64_t * out) noexcept;
    /*! count_batch over the shards of a sharded filter whose shards have k bits each. */
    static void count_sharded(bloom_shard_tables const & t, unsigned k,
                              std::span<std::uint64_t const> keys, std::uint64_t * out) noexcept;
};

} // namespace ksieve::detail
