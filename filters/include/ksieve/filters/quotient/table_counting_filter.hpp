#pragma once
/*! \file
 * \brief table_counting_filter: dedup's counting filter while memory is plentiful: per shard an
 * open-addressing table of (fingerprint, count) words in front of a quotient filter (the main
 * filter), one cache line per addition or lookup where the quotient filter touches two or three.
 * The counts, so every output, are the main filter's; a shard moves into it for good when its table
 * would outgrow `table_cap_bytes`, a count its field, or memory runs out (docs/design.md, "Counting
 * tables").
 *
 * Thread safety: as any_filter: const members concurrently; add_batch / insert_batch / remove and
 * the other per-shard members for different shards concurrently (a shard moves inside its own
 * calls); everything else exclusive.
 */
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>
#include <ksieve/filters/support/zeroed_memory.hpp>

namespace ksieve
{

/*! \brief See the file comment. */
class table_counting_filter final : public any_filter, public growable_forward
{
public:
    /*! \brief Entries per table before the first growth. */
    static constexpr std::uint64_t initial_entries = std::uint64_t{1} << 10;
    /*! \brief A table doubles when its entries would exceed this fraction of its size. */
    static constexpr double max_table_load = 0.8;
    /*! \brief Tables need at least this many bits for a count beside the fingerprint (else every
     * shard starts in the main filter). */
    static constexpr unsigned min_count_bits = 8;

    /*! \brief Wraps `main`, an empty growing sharded_filter<quotient_filter>; each shard's table
     * may take up to `table_cap_bytes`. The growable operations are main's (growable_forward), on a
     * shard moved there first where they would change it. \throws usage_error if main is not a
     * quotient filter; memory_limit_error / std::bad_alloc. */
    table_counting_filter(std::unique_ptr<any_filter> main, std::uint64_t table_cap_bytes);
    ~table_counting_filter() override;

    /*! \brief Move every shard still in a table into the main filter. \throws full_error where the
     * main filter cannot take a shard (no memory to grow). */
    void settle();
    /*! \brief Shards still counted in their tables. */
    [[nodiscard]] std::size_t table_shards() const noexcept;

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
    /*! \brief The shard moves into the main filter first. */
    bool fit_shard(std::size_t shard, double slack) override;
    /*! \brief The shard moves into the main filter first. */
    bool drop_counts_shard(std::size_t shard) override;
    /*! \brief A shard in its table forgets nothing (it has room: beyond its cap it moves). */
    std::uint64_t make_room_shard(std::size_t shard, std::uint64_t cap_bytes,
                                  std::uint64_t incoming) override;
    /*! \brief True for a shard in its table (see make_room_shard). */
    [[nodiscard]] bool has_room_shard(std::size_t shard, std::uint64_t cap_bytes,
                                      std::uint64_t incoming) const noexcept override;
    /*! \brief The shard moves into the main filter first. */
    std::uint64_t keep_sample_shard(std::size_t shard, unsigned level) override;
    /*! \brief The main filter's statistics with the tables' added (a table's slots are its
     * entries, each fingerprint one). */
    [[nodiscard]] filter_stats stats() const noexcept override;
    /*! \brief The main filter's file. \throws error unless settled (settle()). */
    void save(std::filesystem::path const & path) const override;
    void release_shard(std::size_t s) const noexcept override { main_->release_shard(s); }
    /*! \brief Not supported. \throws error */
    [[nodiscard]] std::unique_ptr<any_filter> clone() const override;

protected:
    [[nodiscard]] growable_filter * as_growable() noexcept override { return this; }

private:
    struct table;
    // Move shard s into the main filter. \returns false where the main filter is full.
    bool move_shard(std::size_t s) noexcept;
    // Move shard s into the main filter if it is in its table. \throws full_error where it cannot.
    void settle_shard(std::size_t s);
    template <bool WithOld>
    insert_status add_keys(std::size_t shard, std::span<std::uint64_t const> local_keys,
                           std::uint64_t * old) noexcept;

    std::unique_ptr<any_filter> main_;
    sharded_filter<quotient_filter> * qf_; // main_, as what it is
    std::uint64_t cap_bytes_;
    unsigned count_bits_;
    std::vector<std::unique_ptr<table>> tables_; // null: the shard is in the main filter
};

} // namespace ksieve
