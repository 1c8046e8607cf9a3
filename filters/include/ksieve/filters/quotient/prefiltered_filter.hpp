#pragma once
/*! \file
 * \brief prefiltered_filter: a counting filter for dedup that admits a k-mer to its main quotient
 * filter on the second sighting; a small Bloom filter (the prefilter) of collision keys (shard and
 * fingerprint of the main filter) remembers the first (docs/design.md, "The prefilter"). Per
 * collision key c: count(c) = main(c) + 1 if the prefilter holds c or c has a pending sighting,
 * else 0.
 *
 * Within a round (a batch of reads) the first sighting of a c the prefilter does not hold is
 * pending (one entry in a small table); every other sighting goes to the main filter, which holds a
 * key only after its first sighting. commit_shard() of every shard ends a round: the pending
 * sightings enter the prefilter. The prefilter changes only there, so a round's routing does not
 * depend on the order of its operations, and removals inside a round are exact (copies in the main
 * filter first, the pending sighting last). A key the prefilter wrongly holds (a Bloom false
 * positive, at its rate, which grows as it fills) counts one more from its first sighting on:
 * counts are never lower, so a hit is never lost.
 *
 * Thread safety: as any_filter: const members concurrently; add_batch / insert_batch / remove for
 * different shards concurrently; commit_shard() for different shards concurrently, with nothing
 * else running.
 */
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <ksieve/filters/common/sharded_filter.hpp>

namespace ksieve
{

/*! \brief See the file comment. */
class prefiltered_filter final : public any_filter, public growable_forward
{
public:
    /*! \brief Wraps `main` with a prefilter of about `prefilter_bytes` bytes (at least 1 KiB per
     * shard; rounded to a power of two per shard); the growable operations are main's (growable_
     * forward), but for drop_counts_shard. \pre main->growable() (a quotient filter) and it is
     * empty. \throws usage_error if main is not growable; memory_limit_error / std::bad_alloc. */
    prefiltered_filter(std::unique_ptr<any_filter> main, std::uint64_t prefilter_bytes);
    ~prefiltered_filter() override;

    /*! \brief Ends a round for shard `shard`: its pending sightings enter the prefilter. Shards may
     * be committed concurrently (each by one thread); a round ends when every shard was committed.
     * The main filter is not touched. */
    void commit_shard(std::size_t shard) noexcept;

    /*! \brief The main filter (holds each admitted key with its count minus one). */
    [[nodiscard]] any_filter const & main() const noexcept { return *main_; }
    /*! \brief Bytes of the prefilter. */
    [[nodiscard]] std::uint64_t prefilter_bytes() const noexcept;
    /*! \brief Collision keys the prefilter was given so far. */
    [[nodiscard]] std::uint64_t prefiltered() const noexcept;
    /*! \brief Whether the prefilter holds the collision key of `key` (a whole key). */
    [[nodiscard]] bool prefilter_holds(std::uint64_t key) const noexcept;

    void count_batch(std::size_t shard, std::span<std::uint64_t const> local_keys,
                     std::uint64_t * out) const noexcept override;
    bool count_keys(std::span<std::uint64_t const> keys,
                    std::uint64_t * out) const noexcept override;
    insert_status insert_batch(std::size_t shard,
                               std::span<std::uint64_t const> local_keys) noexcept override;
    insert_status add_batch(std::size_t shard, std::span<std::uint64_t const> local_keys,
                            std::uint64_t * old) noexcept override;
    insert_status insert(std::uint64_t key, std::uint64_t count = 1) noexcept override;
    bool remove(std::uint64_t key, std::uint64_t count = 1) noexcept override;
    [[nodiscard]] std::uint64_t count(std::uint64_t key) const noexcept override;
    /*! \brief Nothing (the counts of the keys seen once live in the prefilter). \returns false */
    bool drop_counts_shard(std::size_t /*shard*/) override { return false; }
    /*! \brief The main filter's statistics, with the prefilter's and the pending tables' bytes
     * added. */
    [[nodiscard]] filter_stats stats() const noexcept override;
    /*! \brief Not supported (the main filter alone would lack the keys seen once). \throws error */
    void save(std::filesystem::path const & path) const override;
    void release_shard(std::size_t s) const noexcept override { main_->release_shard(s); }
    /*! \brief Not supported. \throws error */
    [[nodiscard]] std::unique_ptr<any_filter> clone() const override;

protected:
    [[nodiscard]] growable_filter * as_growable() noexcept override { return this; }

private:
    struct shard_state;
    // The count of a key whose main-filter count is m (see the file comment).
    [[nodiscard]] std::uint64_t combine(std::size_t shard, std::uint64_t ck,
                                        std::uint64_t m) const noexcept;
    [[nodiscard]] std::uint64_t whole_key(std::size_t shard, std::uint64_t local) const noexcept;
    template <typename Old>
    insert_status route(std::size_t shard, std::span<std::uint64_t const> local_keys,
                        Old && old) noexcept;

    std::unique_ptr<any_filter> main_;
    std::vector<shard_state> shards_;
};

} // namespace ksieve
