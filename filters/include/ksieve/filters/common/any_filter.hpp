#pragma once
/*! \file
 * \brief any_filter: the type-erased, sharded filter the pipeline works with, and the operations
 * over such filters (make, load, set operations, refit, compatibility checks; defined in
 * any_filter.cpp).
 *
 * Sharding (see filter.hpp): the shard filter of key x sees its low key_bits - s bits (local_key).
 * Shards are independent: one thread may insert into shard i while others insert into shard j != i,
 * with no lock; the pipeline gives every shard of a batch to one thread at a time. The
 * implementation over 2^s shard filters of one type is sharded_filter<F> (sharded_filter.hpp).
 *
 * Virtual calls are made per batch, never per key, on the hot path (count_batch / insert_batch).
 */
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <ksieve/filters/common/filter.hpp>
#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/common/growable_filter.hpp>
#include <ksieve/filters/common/labels.hpp>
#include <ksieve/filters/support/error.hpp>

namespace ksieve
{

/*! \brief Type-erased sharded filter. Thread safety: const members concurrently from any threads;
 * insert_batch(shard, ...) concurrently for *different* shards; everything else exclusive. */
class any_filter
{
public:
    virtual ~any_filter() = default;

    [[nodiscard]] filter_type type() const noexcept { return type_; }
    [[nodiscard]] kmer_params const & kmer() const noexcept { return kmer_; }
    [[nodiscard]] unsigned key_bits() const noexcept { return kmer_.key_bits(); }
    [[nodiscard]] unsigned shard_bits() const noexcept { return shard_bits_; }
    [[nodiscard]] std::size_t num_shards() const noexcept { return std::size_t{1} << shard_bits_; }
    [[nodiscard]] double target_fpr() const noexcept { return fpr_; }
    [[nodiscard]] std::uint64_t expected() const noexcept { return expected_; }
    /*! \brief The parts of the key space this filter holds (`build --part I/S`; see key_parts). */
    [[nodiscard]] key_parts const & parts() const noexcept { return parts_; }
    /*! \brief Record the parts held (saved with the filter). \pre p.split <= max_split. Exclusive.
     */
    void set_parts(key_parts p) { parts_ = std::move(p); }
    /*! \brief A labeled filter's label table (labels.hpp): every count is a class id + 1. Null for
     * an unlabeled filter. */
    [[nodiscard]] std::shared_ptr<label_table const> const & labels() const noexcept
    {
        return labels_;
    }
    /*! \brief Whether the filter is labeled. */
    [[nodiscard]] bool labeled() const noexcept { return labels_ != nullptr; }
    /*! \brief Make the filter labeled by `table` (saved with it). \pre every count is a class id +
     * 1 of the table. Exclusive. */
    void set_labels(std::shared_ptr<label_table const> table) { labels_ = std::move(table); }

    /*! \brief Shard of a hashed key. \pre key < 2^key_bits(). */
    [[nodiscard]] std::size_t shard_of(std::uint64_t const key) const noexcept
    {
        return shard_bits_ == 0 ? 0 : static_cast<std::size_t>(key >> (key_bits() - shard_bits_));
    }
    /*! \brief The bits of a key that the shard filter sees. */
    [[nodiscard]] std::uint64_t local_key(std::uint64_t const key) const noexcept
    {
        return key & local_mask_;
    }

    /*! \brief out[i] = count of local key keys[i] in shard `shard` (0 = absent). Thread-safe
     * (const). */
    virtual void count_batch(std::size_t shard, std::span<std::uint64_t const> local_keys,
                             std::uint64_t * out) const noexcept = 0;
    /*! \brief out[i] = count of the (whole, unsharded) key keys[i], in one pass across shards, for
     * filters that can (quotient filters: quotient_filter::count_sharded). \returns false, having
     * done nothing, for the others: the caller then partitions the keys by shard for count_batch.
     * Thread-safe (const). \pre out has keys.size() elements. */
    virtual bool count_keys(std::span<std::uint64_t const> /*keys*/,
                            std::uint64_t * /*out*/) const noexcept
    {
        return false;
    }
    /*! \brief Insert local keys (count 1 each) into shard `shard`. Exclusive per shard. */
    virtual insert_status insert_batch(std::size_t shard,
                                       std::span<std::uint64_t const> local_keys) noexcept = 0;
    /*! \brief Batched fetch-and-add: insert local keys (count 1 each) into shard `shard` in order,
     * setting old[i] to the count keys[i] had just before its own insertion (earlier copies in the
     * batch included). Exclusive per shard. \pre old has local_keys.size() elements. */
    virtual insert_status add_batch(std::size_t shard, std::span<std::uint64_t const> local_keys,
                                    std::uint64_t * old) noexcept = 0;
    /*! \brief Single-key convenience (routes to the shard). Exclusive per shard. */
    virtual insert_status insert(std::uint64_t key, std::uint64_t count = 1) noexcept = 0;
    /*! \brief Remove `count` occurrences of a key that was inserted (counting filters: quotient).
     * Exclusive per shard. \returns false if the filter cannot remove or does not hold the key. */
    virtual bool remove(std::uint64_t key, std::uint64_t count = 1) noexcept = 0;
    /*! \brief Single-key convenience (routes to the shard). Thread-safe (const). */
    [[nodiscard]] virtual std::uint64_t count(std::uint64_t key) const noexcept = 0;
    /*! \brief The growable interface (growable_filter.hpp: dedup's budget and sample, the refit,
     * collision keys) of a filter that has one: quotient filters and the wrappers over them. Null
     * for the others. */
    [[nodiscard]] growable_filter * growable() noexcept { return as_growable(); }
    [[nodiscard]] growable_filter const * growable() const noexcept
    {
        return const_cast<any_filter &>(*this).as_growable(); // (handed out as const)
    }

    /*! \brief Sum of all shards' statistics (estimated_fpr: key-weighted mean). */
    [[nodiscard]] virtual filter_stats stats() const noexcept = 0;

    /*! \brief Write the filter file to `path` as it is (see write_filter_file). \throws io_error */
    virtual void save(std::filesystem::path const & path) const = 0;
    /*! \brief For a view of a mapped file: let the kernel drop the pages of shard `s` (see
     * mapped_filter_file::release); no effect on owned filters. Thread-safe. */
    virtual void release_shard(std::size_t s) const noexcept = 0;
    /*! \brief An owning, mutable deep copy (e.g. of an mmap'd filter). */
    [[nodiscard]] virtual std::unique_ptr<any_filter> clone() const = 0;

protected:
    any_filter(filter_type const t, kmer_params const & km, unsigned const shard_bits,
               double const fpr, std::uint64_t const expected)
        : type_{t}, kmer_{km}, shard_bits_{shard_bits}, fpr_{fpr}, expected_{expected},
          local_mask_{kmer_mask(km.k) >> shard_bits}
    {
    }
    /*! \brief The filter as a growable_filter, where its class implements one (see growable()). */
    [[nodiscard]] virtual growable_filter * as_growable() noexcept { return nullptr; }
    [[nodiscard]] filter_file_header file_header(std::vector<std::uint64_t> params = {}) const
    {
        return filter_file_header{type_,  kmer_,  fpr_, expected_, shard_bits_, std::move(params),
                                  parts_, labels_};
    }

private:
    filter_type type_;
    kmer_params kmer_;
    unsigned shard_bits_;
    double fpr_;
    std::uint64_t expected_;
    std::uint64_t local_mask_;
    key_parts parts_;
    std::shared_ptr<label_table const> labels_;
};

/*! \brief New empty filter of cfg.type. \throws usage_error for invalid parameters (e.g. fpr 0 on a
 * Bloom filter). */
[[nodiscard]] std::unique_ptr<any_filter> make_filter(filter_config const & cfg);

/*! \brief A read-only filter over an opened file (which it keeps alive). \throws format_error */
[[nodiscard]] std::unique_ptr<any_filter>
view_filter(std::shared_ptr<mapped_filter_file const> file);

/*! \brief Open a filter file as a read-only view over an mmap, checked as `options` say.
 * \throws format_error / io_error naming the file. */
[[nodiscard]] std::unique_ptr<any_filter> load_filter(std::filesystem::path const & path,
                                                      load_options const & options = {});

/*! \brief A set operation over filters, shard by shard on `threads` threads (the same result for
 * any count). Quotient filters: every operation (quotient_filter::combine; a union adds counts),
 * counts below `min_count` as absent; inputs of other shard counts than the narrowest are first
 * moved to its layout (an ordered rebuild: the same contents as per-key insertion). Bloom filters:
 * unite (OR) and intersect (AND; counting Bloom filters unite only), min_count 1. Cuckoo filters:
 * none. Mapped inputs' pages are released shard by shard, so that memory holds the result and the
 * shards in use. The result holds the union of the inputs' key parts (whole if every split among
 * them is complete). \throws incompatible_error naming the input (names[i] belongs to inputs[i])
 * and what differs (k, canonical mode, hash, seed, type, --fpr, Bloom size) or why the operation is
 * impossible, also for incomplete parts of a split (`build --part I/S`) combined with whole filters
 * or another split (the result could not say which keys it lacks); usage_error for min_count > 1
 * on Bloom filters; full_error when the result does not fit; interrupted_error on a stop request
 * (cancel.hpp), checked every few thousand fingerprints. */
[[nodiscard]] std::unique_ptr<any_filter>
combine_filters(std::span<any_filter const * const> inputs, std::span<std::string const> names,
                set_operation op, std::uint64_t min_count = 1, unsigned threads = 1);

/*! \brief combine_filters() with the result written to `path` (a regular or new file; see
 * filter_file_stream) rather than returned: quotient filters shard by shard as the shards are made,
 * each freed once written, so that memory holds the shards in flight rather than the whole result;
 * other types as save() writes them. \returns the result's statistics. \throws as
 * combine_filters(), io_error. */
filter_stats combine_filters_into(std::filesystem::path const & path,
                                  std::span<any_filter const * const> inputs,
                                  std::span<std::string const> names, set_operation op,
                                  std::uint64_t min_count, unsigned threads);

/*! \brief A labeled set operation over quotient filters: the inputs' fingerprints (cut to the
 * narrowest width among them and `max_fingerprint_bits`, in the layout merge would use), each with
 * the union of its label sets. unite: those of any input; intersect: of every input; subtract: of
 * the first input that no other holds, with its labels. A labeled input brings its labels (equal
 * names are one label); an unlabeled input i is one label, `unlabeled_names[i]` (its counts are not
 * kept). `expected` (0: the inputs') is recorded as the result's expected k-mers. Labels are
 * numbered in order of first appearance; classes as labels.hpp says. The result is the same for any
 * thread count and equals one labeled build of all inputs' k-mers. \throws incompatible_error
 * naming the input (check_query_compatible, other types than quotient filters, an unlabeled input
 * without a name, key parts as combine_filters); interrupted_error on a stop request. */
[[nodiscard]] std::unique_ptr<any_filter>
combine_labeled(std::span<any_filter const * const> inputs, std::span<std::string const> names,
                std::span<std::string const> unlabeled_names, set_operation op, unsigned threads,
                unsigned max_fingerprint_bits = 64, std::uint64_t expected = 0);

/*! \brief growable_filter::fit_shard(s, slack) for every shard of a growable filter (others:
 * nothing), on up to `threads` threads: quotient filters at the fewest home slots that hold them
 * (build and dedup call it before saving). The same result for any thread count. \throws
 * std::bad_alloc; interrupted_error on a stop request (cancel.hpp), checked before each shard. */
void fit_filter(any_filter & filter, double slack = 0.0, unsigned threads = 1);

/*! \brief growable_filter::drop_counts_shard(s) for every shard of a growable filter (build
 * --no-counts; follow it with fit_filter()); threads, result and throws as fit_filter(). */
void drop_counts(any_filter & filter, unsigned threads = 1);

/*! \brief The command of an operation: "merge", "intersect" or "subtract" (subtract_counts too). */
[[nodiscard]] char const * operation_name(set_operation op) noexcept;

/*! \brief Check that filters can be queried together (same k, canonical mode, hash, seed).
 * \throws incompatible_error naming names[i] of the first that differs from inputs[0]. */
void check_query_compatible(std::span<any_filter const * const> inputs,
                            std::span<std::string const> names);

/*! \brief Check that every split among the filters (`build --part I/S`) has all its parts: a
 * missing part would turn all its k-mers into misses. \throws incompatible_error naming names[i]
 * of the first filter whose split lacks a part, and the parts missing. */
void check_parts_complete(std::span<any_filter const * const> inputs,
                          std::span<std::string const> names);

} // namespace ksieve
