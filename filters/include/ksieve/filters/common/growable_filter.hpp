#pragma once
/*! \file
 * \brief growable_filter: what the filters that grow, sample and refit can do beyond any_filter
 * (quotient filters, and the dedup wrappers over them): the room and forgetting of dedup's memory
 * budget, the key-space sample, the refit before saving, and the collision keys that let dedup
 * resolve a batch without the filter. any_filter::growable() gives the interface of a filter that
 * has one. growable_forward is the one way a wrapper passes it on to the filter it wraps.
 *
 * Thread safety: as any_filter: const members concurrently from any threads; the per-shard
 * members for different shards concurrently; everything else exclusive.
 */
#include <cstddef>
#include <cstdint>

namespace ksieve
{

/*! \brief See the file comment. */
class growable_filter
{
public:
    /*! \brief Rebuild shard `shard` at the fewest home slots that hold it within its maximal load
     * (quotient_filter::fit), if that saves more than the fraction `slack` of its slots; the result
     * depends only on the shard's contents and size. Exclusive per shard. \returns whether the
     * shard changed. \throws std::bad_alloc */
    virtual bool fit_shard(std::size_t shard, double slack) = 0;
    /*! \brief Set every count of shard `shard` to 1 (quotient_filter::drop_counts). Exclusive per
     * shard. \returns whether the shard changed. \throws std::bad_alloc */
    virtual bool drop_counts_shard(std::size_t shard) = 0;
    /*! \brief Room in shard `shard` for `incoming` more used slots within a table of at most
     * `cap_bytes`, forgetting its entries of the lowest counts where growth cannot make it
     * (quotient_filter::make_room). Exclusive per shard. \returns the fingerprints forgotten.
     * \throws std::bad_alloc */
    virtual std::uint64_t make_room_shard(std::size_t shard, std::uint64_t cap_bytes,
                                          std::uint64_t incoming) = 0;
    /*! \brief Whether shard `shard` has room for `incoming` more used slots within a table of at
     * most `cap_bytes` (grown as far as that allows), without changing it. Thread-safe (const). */
    [[nodiscard]] virtual bool has_room_shard(std::size_t shard, std::uint64_t cap_bytes,
                                              std::uint64_t incoming) const noexcept = 0;
    /*! \brief The position of the key bits that keep_sample_shard() tests. */
    [[nodiscard]] virtual unsigned sample_shift() const noexcept = 0;
    /*! \brief Keep in shard `shard` only the keys whose `level` bits at sample_shift() are zero
     * (quotient_filter::keep_sample). Exclusive per shard. \returns the fingerprints dropped.
     * \throws std::bad_alloc */
    virtual std::uint64_t keep_sample_shard(std::size_t shard, unsigned level) = 0;
    /*! \brief The key's shard and fingerprint: count() depends only on it, and the counts of keys
     * with equal collision keys add up, so that dedup can resolve a batch exactly without touching
     * the filter. \pre key < 2^key_bits(). */
    [[nodiscard]] virtual std::uint64_t collision_key(std::uint64_t key) const noexcept = 0;

protected:
    growable_filter() = default;
    growable_filter(growable_filter const &) = default;
    growable_filter & operator=(growable_filter const &) = default;
    ~growable_filter() = default;
};

/*! \brief A growable_filter that passes every operation on to another one (the filter a wrapper
 * holds); a wrapper derives from it and overrides what it changes. \pre the inner filter outlives
 * this one. */
class growable_forward : public growable_filter
{
public:
    explicit growable_forward(growable_filter & inner) noexcept : inner_{&inner} {}

    bool fit_shard(std::size_t const shard, double const slack) override
    {
        return inner_->fit_shard(shard, slack);
    }
    bool drop_counts_shard(std::size_t const shard) override
    {
        return inner_->drop_counts_shard(shard);
    }
    std::uint64_t make_room_shard(std::size_t const shard, std::uint64_t const cap_bytes,
                                  std::uint64_t const incoming) override
    {
        return inner_->make_room_shard(shard, cap_bytes, incoming);
    }
    [[nodiscard]] bool has_room_shard(std::size_t const shard, std::uint64_t const cap_bytes,
                                      std::uint64_t const incoming) const noexcept override
    {
        return inner_->has_room_shard(shard, cap_bytes, incoming);
    }
    [[nodiscard]] unsigned sample_shift() const noexcept override { return inner_->sample_shift(); }
    std::uint64_t keep_sample_shard(std::size_t const shard, unsigned const level) override
    {
        return inner_->keep_sample_shard(shard, level);
    }
    [[nodiscard]] std::uint64_t collision_key(std::uint64_t const key) const noexcept override
    {
        return inner_->collision_key(key);
    }

protected:
    ~growable_forward() = default;

private:
    growable_filter * inner_;
};

} // namespace ksieve
