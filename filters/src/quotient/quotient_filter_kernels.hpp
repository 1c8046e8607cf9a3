// The quotient filter's kernel family (private header of its sources, cpu_dispatch.cpp and the
// tests): the entries each CPU level's copy exports, their dispatch table and the test hook of the
// portable select. The body is quotient_filter_kernels.inc.
#pragma once

#include <ksieve/filters/quotient/quotient_filter.hpp>
#include <ksieve/filters/support/cpu_dispatch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

namespace ksieve::detail
{

/*! \brief quotient_filter::insert(key, count). */
using qf_insert_key_fn = insert_status(quotient_filter & f, std::uint64_t key,
                                       std::uint64_t count) noexcept;
/*! \brief quotient_filter::count(key). */
using qf_count_key_fn = std::uint64_t(quotient_filter const & f, std::uint64_t key) noexcept;
/*! \brief quotient_filter::insert_batch in input order; old (if not null): each key's count just
 * before its own insertion. */
using qf_insert_batch_fn = insert_status(quotient_filter & f, std::span<std::uint64_t const> keys,
                                         std::uint64_t * old) noexcept;
/*! \brief The same on a batch in table order: fps holds n fingerprints, pos their batch indices. */
using qf_insert_batch_ordered_fn = insert_status(quotient_filter & f, std::uint64_t * fps,
                                                 std::size_t n, std::uint32_t const * pos,
                                                 std::uint64_t * old) noexcept;
/*! \brief quotient_filter::count_batch in input order. */
using qf_count_batch_fn = void(quotient_filter const & f, std::span<std::uint64_t const> keys,
                               std::uint64_t * out) noexcept;
/*! \brief The same on a batch in table order (the counts replace the fingerprints, then go to
 * out[pos[j]]). */
using qf_count_batch_ordered_fn = void(quotient_filter const & f, std::uint64_t * fps,
                                       std::size_t n, std::uint32_t const * pos,
                                       std::uint64_t * out) noexcept;
/*! \brief quotient_filter::count_sharded over n keys (the shard of a key: (key >> shift) &
 * shard_mask; its local key: key & local_mask); large: the tables exceed a last-level cache. */
using qf_count_sharded_fn = void(quotient_filter const * shards, unsigned shift,
                                 std::uint64_t shard_mask, std::uint64_t local_mask,
                                 std::uint64_t const * keys, std::size_t n, std::uint64_t * out,
                                 bool large) noexcept;
/*! \brief The copy's select: position of the k-th (0-based) set bit of w, 64 if w has at most k
 * set bits. \pre k < 64. */
using qf_select64_fn = unsigned(std::uint64_t w, unsigned k) noexcept;

/*! \brief The quotient filter's dispatch table: one CPU level's entries. */
struct qf_kernel_table
{
    qf_insert_key_fn * insert_key;                     //!< insert(key, count)
    qf_count_key_fn * count_key;                       //!< count(key)
    qf_insert_batch_fn * insert_batch;                 //!< insert_batch, input order
    qf_insert_batch_ordered_fn * insert_batch_ordered; //!< insert_batch, table order
    qf_count_batch_fn * count_batch;                   //!< count_batch, input order
    qf_count_batch_ordered_fn * count_batch_ordered;   //!< count_batch, table order
    qf_count_sharded_fn * count_sharded;               //!< count_sharded
    qf_select64_fn * select64;                         //!< the select (tests)
};

namespace generic
{
// The build's target (quotient_filter_generic.cpp): the broadword select unless the target
// has BMI2.
qf_insert_key_fn qf_insert_key;
qf_count_key_fn qf_count_key;
qf_insert_batch_fn qf_insert_batch;
qf_insert_batch_ordered_fn qf_insert_batch_ordered;
qf_count_batch_fn qf_count_batch;
qf_count_batch_ordered_fn qf_count_batch_ordered;
qf_count_sharded_fn qf_count_sharded;
qf_select64_fn qf_select64;
} // namespace generic

namespace x86_64_v3
{
// x86-64-v3 (quotient_filter_x86_64_v3.cpp, where the build's target lacks it): pdep
// select, bzhi masks.
qf_insert_key_fn qf_insert_key;
qf_count_key_fn qf_count_key;
qf_insert_batch_fn qf_insert_batch;
qf_insert_batch_ordered_fn qf_insert_batch_ordered;
qf_count_batch_fn qf_count_batch;
qf_count_batch_ordered_fn qf_count_batch_ordered;
qf_count_sharded_fn qf_count_sharded;
qf_select64_fn qf_select64;
} // namespace x86_64_v3

/*! \brief The quotient filter's table per simd_level (filled by cpu_dispatch.cpp). */
extern qf_kernel_table const qf_kernel_tables[simd_level_count];

/*! \brief The active level's entry of qf_kernel_tables (the generic one where the CPU's pdep is
 * slow), null until the level is chosen; set by cpu_dispatch.cpp with the choice
 * (cpu_dispatch.hpp), so that a call needs one load to find its entries. */
extern std::atomic<qf_kernel_table const *> qf_kernels_active;

/*! \brief qf_kernels() before the first choice: makes it (simd_choose), returns the entries. */
[[nodiscard, gnu::noinline]] qf_kernel_table const & qf_kernels_chosen() noexcept;

/*! \brief The quotient filter's active entries: those of the active level, the generic ones where
 * the CPU's pdep is slow. */
[[nodiscard, gnu::always_inline]] inline qf_kernel_table const & qf_kernels() noexcept
{
    qf_kernel_table const * const t = qf_kernels_active.load(std::memory_order_relaxed);
    if (t == nullptr) [[unlikely]]
        return qf_kernels_chosen();
    return *t;
}

/*! \brief The portable branch-free select (test hook): position of the k-th (0-based) set bit of w,
 * 64 if w has at most k set bits. \pre k < 128. Thread-safe. */
[[nodiscard]] unsigned qf_select64_portable(std::uint64_t w, unsigned k) noexcept;

} // namespace ksieve::detail
