#pragma once
/*! \file
 * \brief sharded_filter<F>: the implementation of any_filter (any_filter.hpp, included here) over
 * 2^s independent shard filters of one type F (see shard_filter in filter.hpp).
 */
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <ksieve/filters/common/any_filter.hpp>
#include <ksieve/filters/common/filter.hpp>
#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/per_thread.hpp>

namespace ksieve
{

/*! \brief Shard filters that grow, sample and refit (quotient filters): sharded_filter<F> is then a
 * growable_filter too. */
template <typename F>
concept growable_shard = requires(F & g, F const & c, std::uint64_t b, double d, unsigned l)
{
    g.fit(d);
    g.drop_counts();
    g.make_room(b, b);
    c.has_room(b, b);
    c.sample_shift();
    g.keep_sample(l);
    c.fingerprint(b);
};

template <shard_filter F> class sharded_filter;

namespace detail
{
/*! \brief growable_filter over the shards of a sharded_filter of growable shards (Self). */
template <typename Self> class sharded_growth : public growable_filter
{
public:
    bool fit_shard(std::size_t const shard, double const slack) override
    {
        return self().shard(shard).fit(slack);
    }
    bool drop_counts_shard(std::size_t const shard) override
    {
        return self().shard(shard).drop_counts();
    }
    std::uint64_t make_room_shard(std::size_t const shard, std::uint64_t const cap_bytes,
                                  std::uint64_t const incoming) override
    {
        return self().shard(shard).make_room(cap_bytes, incoming);
    }
    [[nodiscard]] bool has_room_shard(std::size_t const shard, std::uint64_t const cap_bytes,
                                      std::uint64_t const incoming) const noexcept override
    {
        return self().shard(shard).has_room(cap_bytes, incoming);
    }
    [[nodiscard]] unsigned sample_shift() const noexcept override
    {
        return self().shard(0).sample_shift();
    }
    std::uint64_t keep_sample_shard(std::size_t const shard, unsigned const level) override
    {
        return self().shard(shard).keep_sample(level);
    }
    [[nodiscard]] std::uint64_t collision_key(std::uint64_t const key) const noexcept override
    {
        Self const & f = self();
        std::size_t const s = f.shard_of(key);
        return (f.shard(s).fingerprint(f.local_key(key)) << f.shard_bits()) | s;
    }

protected:
    ~sharded_growth() = default;

private:
    [[nodiscard]] Self & self() noexcept { return static_cast<Self &>(*this); }
    [[nodiscard]] Self const & self() const noexcept { return static_cast<Self const &>(*this); }
};

/*! \brief No growable interface (shards that cannot grow). */
struct no_growth
{
};

template <typename F>
using growth_of =
    std::conditional_t<growable_shard<F>, sharded_growth<sharded_filter<F>>, no_growth>;
} // namespace detail

/*! \brief any_filter over 2^s shards of type F; a growable_filter too if F is a growable_shard. */
template <shard_filter F>
class sharded_filter final : public any_filter, public detail::growth_of<F>
{
public:
    /*! \brief New empty filter. \pre cfg.type == F::type_id, cfg.shard_bits < 2k. */
    explicit sharded_filter(filter_config const & cfg)
        : any_filter{F::type_id, cfg.kmer, cfg.shard_bits, cfg.fpr, cfg.expected}
    {
        std::size_t const n = num_shards();
        std::uint64_t const per_shard = (cfg.expected + n - 1) / n;
        shards_.reserve(n);
        for (std::size_t i = 0; i < n; ++i)
            shards_.push_back(F::create(cfg, key_bits() - shard_bits(), per_shard));
    }

    /*! \brief Read-only view of a mapped file (keeps the mapping alive). \throws format_error */
    explicit sharded_filter(std::shared_ptr<mapped_filter_file const> file)
        : any_filter{file->header().type, file->header().kmer, file->header().shard_bits,
                     file->header().fpr, file->header().expected},
          file_{std::move(file)}
    {
        set_parts(file_->header().parts);
        set_labels(file_->header().labels);
        shards_.reserve(num_shards());
        for (std::size_t i = 0; i < num_shards(); ++i)
        {
            auto const & s = file_->shards()[i];
            try
            {
                shards_.push_back(F::view(s.params, s.words, key_bits() - shard_bits()));
            }
            catch (format_error const & e)
            {
                throw format_error{"'" + file_->name() + "': corrupted filter file (shard " +
                                   std::to_string(i) + ": " + e.what() + ")"};
            }
        }
    }

    /*! \brief From already-built shards (merge). */
    sharded_filter(filter_config const & cfg, std::vector<F> shards)
        : any_filter{F::type_id, cfg.kmer, cfg.shard_bits, cfg.fpr, cfg.expected},
          shards_(std::move(shards))
    {
    }

    void count_batch(std::size_t const shard, std::span<std::uint64_t const> const keys,
                     std::uint64_t * const out) const noexcept override
    {
        shards_[shard].count_batch(keys, out);
    }
    bool count_keys(std::span<std::uint64_t const> const keys,
                    std::uint64_t * const out) const noexcept override
    {
        if constexpr (requires(std::span<F const> s, std::span<std::uint64_t const> k,
                               std::uint64_t * o) { F::count_sharded(s, 1u, 1u, k, o); })
        {
            F::count_sharded(std::span<F const>{shards_}, key_bits(), shard_bits(), keys, out);
            return true;
        }
        else
            return false;
    }
    insert_status insert_batch(std::size_t const shard,
                               std::span<std::uint64_t const> const keys) noexcept override
    {
        if constexpr (requires { typename F::batch_scratch; })
        {
            // Large tables take dense batches in table order (F decides when that pays); one
            // scratch per thread, grown to the largest batch and reused. Without memory for one
            // the keys go in one by one.
            if (auto * const scratch = per_thread<typename F::batch_scratch>())
                return shards_[shard].insert_batch(keys, nullptr, *scratch);
            return shards_[shard].insert_batch(keys);
        }
        else
            return shards_[shard].insert_batch(keys);
    }
    insert_status add_batch(std::size_t const shard, std::span<std::uint64_t const> const keys,
                            std::uint64_t * const old) noexcept override
    {
        F & f = shards_[shard];
        if constexpr (requires(F & g, std::span<std::uint64_t const> k, std::uint64_t * o) {
                          g.insert_batch(k, o);
                      })
            return f.insert_batch(keys, old);
        else
        {
            for (std::size_t i = 0; i < keys.size(); ++i)
            {
                old[i] = f.count(keys[i]);
                if (insert_status const st = f.insert(keys[i]); st != insert_status::ok)
                    return st;
            }
            return insert_status::ok;
        }
    }
    insert_status insert(std::uint64_t const key, std::uint64_t const count = 1) noexcept override
    {
        return shards_[shard_of(key)].insert(local_key(key), count);
    }
    bool remove(std::uint64_t const key, std::uint64_t const count = 1) noexcept override
    {
        if constexpr (requires(F & g, std::uint64_t k) { g.remove(k, k); })
            return shards_[shard_of(key)].remove(local_key(key), count);
        else
            return false;
    }
    [[nodiscard]] std::uint64_t count(std::uint64_t const key) const noexcept override
    {
        return shards_[shard_of(key)].count(local_key(key));
    }
    [[nodiscard]] filter_stats stats() const noexcept override
    {
        filter_stats_sum t;
        for (auto const & s : shards_)
            t.add(s.stats());
        return t.total();
    }

    void save(std::filesystem::path const & path) const override
    {
        std::vector<shard_blob> blobs;
        blobs.reserve(shards_.size());
        for (auto const & s : shards_)
            blobs.push_back(shard_blob{s.params(), s.words()});
        write_filter_file(path, file_header(), blobs);
    }

    /*! \brief release_shard() for the part of shard s's words within `words` (a walk that will
     * not read them again); nothing for a filter that is not mapped from a file. Thread-safe. */
    void release_shard_words(std::size_t const s,
                             std::span<std::uint64_t const> const words) const noexcept
    {
        if (!file_ || s >= file_->shards().size() || words.empty())
            return;
        // (only what lies inside the shard's payload in the mapping)
        auto const all = file_->shards()[s].words;
        std::uint64_t const * const b = std::max(all.data(), words.data());
        std::uint64_t const * const e =
            std::min(all.data() + all.size(), words.data() + words.size());
        if (b < e)
            file_->release({b, static_cast<std::size_t>(e - b)});
    }
    void release_shard(std::size_t const s) const noexcept override
    {
        if (file_ && s < file_->shards().size())
            file_->release(file_->shards()[s].words);
    }

    [[nodiscard]] std::unique_ptr<any_filter> clone() const override
    {
        std::vector<F> copies;
        copies.reserve(shards_.size());
        for (auto const & s : shards_)
            copies.push_back(s.clone());
        filter_config cfg{F::type_id, kmer(), target_fpr(), expected(), shard_bits()};
        auto copy = std::make_unique<sharded_filter>(cfg, std::move(copies));
        copy->set_parts(parts());
        copy->set_labels(labels());
        return copy;
    }

    /*! \brief Direct access to a shard (tests, merge). */
    [[nodiscard]] F & shard(std::size_t const i) noexcept { return shards_[i]; }
    [[nodiscard]] F const & shard(std::size_t const i) const noexcept { return shards_[i]; }

protected:
    [[nodiscard]] growable_filter * as_growable() noexcept override
    {
        if constexpr (growable_shard<F>)
            return this;
        else
            return nullptr;
    }

private:
    std::shared_ptr<mapped_filter_file const> file_; // keeps mmap'd payloads alive for views
    std::vector<F> shards_;
};

} // namespace ksieve
