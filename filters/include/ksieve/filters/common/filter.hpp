#pragma once
/*! \file
 * \brief Common vocabulary of all filters: types, k-mer parameters, configuration, statistics, and
 * the concept every per-shard filter implements.
 *
 * Keys: every filter stores hashed keys (kmer_hasher) below 2^key_bits. With 2^s shards
 * (sharded_filter.hpp) key x goes to shard x >> (key_bits - s), which sees its low key_bits - s
 * bits: an exact quotient filter stays exact across shards.
 */
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <ksieve/filters/kmers/kmer.hpp>

namespace ksieve
{

/*! \brief Filter type id, stored in filter files. Values are part of the file format: never
 * renumber. */
enum class filter_type : std::uint32_t
{
    quotient = 1,       //!< counting quotient filter (default, mergeable, exact mode with --fpr 0)
    bloom = 2,          //!< cache-line blocked Bloom filter
    cuckoo = 3,         //!< cuckoo filter, buckets of 4
    counting_bloom = 4, //!< 4-bit saturating counting Bloom filter
    bloom_classic = 5   //!< classic (unblocked) Bloom filter, for comparison
};

/*! \brief Name used on the command line and in `info` ("qf", "bloom", ...). */
[[nodiscard]] std::string_view to_string(filter_type t) noexcept;
/*! \brief The type of a name as to_string() writes it (or "quotient"). \throws usage_error */
[[nodiscard]] filter_type parse_filter_type(std::string_view name);

/*! \brief Result of an insert. Hot paths report `full` instead of throwing. */
enum class insert_status : std::uint8_t
{
    ok = 0,
    full = 1 //!< no space (growth disabled, cuckoo evictions failed); nothing stored was lost
};

/*! \brief What a filter's keys are: filters can only be combined when these are all equal. */
struct kmer_params
{
    std::uint32_t k{31};
    bool canonical{true};
    hash_id hash{hash_id::mix2k_v1};
    std::uint64_t seed{default_hash_seed};
    /*! \brief Sampling: 1 = every valid k-mer; W > 1 = the minimizers of windows of W valid k-mers
     * (sampling.hpp). Filters of different sampling are never combined. */
    std::uint32_t window{1};
    /*! \brief Low-complexity mask: 0 = none; T > 0 = sampled k-mers whose DUST score exceeds T /
     * 100 are skipped at build and lookup time (low_complexity.hpp). Only with window > 1. */
    std::uint32_t dust_threshold{0};
    /*! \brief Spaced k-mers: 0 = every position of a k-mer counts; otherwise bit j set = position
     * j is compared, clear = ignored (spaced_code_mask()). Only with window > 1; symmetric
     * (position j and k - 1 - j alike) for canonical k-mers, first and last positions set. */
    std::uint32_t spaced{0};

    [[nodiscard]] unsigned key_bits() const noexcept { return 2 * k; }
    [[nodiscard]] bool is_spaced() const noexcept { return spaced != 0; }
    /*! \brief The mask of the k-mer codes (kmer_mask(k) without spacing). */
    [[nodiscard]] std::uint64_t code_mask() const noexcept { return spaced_code_mask(k, spaced); }
    [[nodiscard]] bool sampled() const noexcept { return window > 1; }
    [[nodiscard]] bool masked() const noexcept { return dust_threshold != 0; }
    [[nodiscard]] kmer_hasher hasher() const noexcept { return kmer_hasher{k, seed}; }
    friend bool operator==(kmer_params const &, kmer_params const &) = default;
};

/*! \brief A spaced pattern as `--spaced` writes it: "none", or k characters, 1 for a compared
 * position and 0 for an ignored one. */
[[nodiscard]] inline std::string spaced_name(kmer_params const & k)
{
    if (!k.is_spaced())
        return "none";
    std::string t(k.k, '0');
    for (unsigned j = 0; j < k.k; ++j)
        if ((k.spaced >> j) & 1u)
            t[j] = '1';
    return t;
}

/*! \brief Whether `pattern` is a usable spaced pattern of k-mers (kmer_params::spaced): 0 (none),
 * or below 2^k with its first and last positions compared, at least half of the positions compared,
 * and symmetric where k-mers are canonical (so that an ignored position of one strand is ignored on
 * the other). */
[[nodiscard]] inline bool valid_spaced(unsigned const k, bool const canonical,
                                       std::uint32_t const pattern) noexcept
{
    if (pattern == 0)
        return true;
    if (k < 2 || k > 32 || (k < 32 && (pattern >> k) != 0) || (pattern & 1u) == 0 ||
        ((pattern >> (k - 1)) & 1u) == 0 || 2 * static_cast<unsigned>(std::popcount(pattern)) < k)
        return false;
    if (canonical)
        for (unsigned j = 0; j < k; ++j)
            if (((pattern >> j) & 1u) != ((pattern >> (k - 1 - j)) & 1u))
                return false;
    return true;
}

/*! \brief Set operations over filters (merge, intersect, subtract). */
enum class set_operation : std::uint8_t
{
    unite = 0,          //!< k-mers of any input; counts added
    intersect = 1,      //!< k-mers of every input; the smallest count
    subtract = 2,       //!< k-mers of the first input that no other input holds
    subtract_counts = 3 //!< the first input's count minus the others' summed counts, where positive
};

/*! \brief Construction parameters of a filter (as given by `build` / `dedup` options). */
struct filter_config
{
    filter_type type{filter_type::quotient};
    kmer_params kmer{};
    double fpr{0.001}; //!< target per-key false-positive rate; 0 = exact (quotient filter only)
    std::uint64_t expected{0}; //!< expected distinct keys in the whole filter (0 = unknown)
    unsigned shard_bits{0};    //!< 2^shard_bits shards
    double max_load{0.9};      //!< quotient filter: grow when the load would exceed this
    bool auto_grow{true};      //!< quotient filter: false -> insert returns full instead of growing
};

/*! \brief Which parts of a split of the key space a filter holds.
 *
 * `build --part I/S` keeps only the keys of part I of S (part_of(), a function of every bit of the
 * hashed key, so that each part fills every shard and every quotient or Bloom block range of its
 * filter evenly; a slice of the key space would crowd the slots of a few shards). A merge holds the
 * union of its inputs' parts; a union that covers every part of its split is stored as the whole
 * key space (split 1), so the merge of all S parts is indistinguishable from the full build.
 * Recorded in the filter file (format version 2; version 1 files hold the whole key space).
 *
 * Thread safety: a value type; const members from any thread. */
struct key_parts
{
    static constexpr std::uint64_t max_split = std::uint64_t{1} << 16; //!< largest S accepted

    std::uint64_t split{1};             //!< S: the key space cut into S ranges (1 = not cut)
    std::vector<std::uint64_t> held{1}; //!< bitmap of the parts held, ceil(S / 64) words

    /*! \brief The whole key space (split 1). */
    [[nodiscard]] static key_parts whole() { return key_parts{}; }
    /*! \brief Part `index` of `split`. \pre index < split <= max_split. */
    [[nodiscard]] static key_parts one(std::uint64_t index, std::uint64_t split);

    /*! \brief Whether part i is held. \pre i < split. */
    [[nodiscard]] bool has(std::uint64_t const i) const noexcept
    {
        return (held[i / 64] >> (i % 64)) & 1;
    }
    /*! \brief Salt of part_of(): its hash differs from the Bloom filters' mix64(key). Fixed by the
     * file format (a part's keys are defined by it). */
    static constexpr std::uint64_t part_salt = 0x6b73706172747321ULL;
    /*! \brief The part of a split of a hashed key: floor(mix64(key ^ part_salt) * split / 2^64). */
    [[nodiscard]] static std::uint64_t part_of(std::uint64_t const key,
                                               std::uint64_t const split) noexcept
    {
        __extension__ using u128 = unsigned __int128; // GCC/Clang extension, silences -Wpedantic
        return static_cast<std::uint64_t>((static_cast<u128>(mix64(key ^ part_salt)) * split) >>
                                          64);
    }
    /*! \brief Whether the part of a hashed key is held (always true for the whole key space). */
    [[nodiscard]] bool holds_key(std::uint64_t const key) const noexcept
    {
        return split == 1 || has(part_of(key, split));
    }
    /*! \brief Whether every part of the split is held (true for split 1). */
    [[nodiscard]] bool complete() const noexcept;
    /*! \brief Add the parts of `other`. \pre other.split == split. The result is normalised
     * (complete -> whole). */
    void add(key_parts const & other);
    /*! \brief The parts held, in increasing order. */
    [[nodiscard]] std::vector<std::uint64_t> list() const;
    /*! \brief "all", "part 2 of 4", "parts 0, 1, 3 of 4" (long lists with ranges: "0-9"). */
    [[nodiscard]] std::string describe() const;
    /*! \brief The parts of the split that are missing, as describe() writes them. */
    [[nodiscard]] std::string describe_missing() const;

    friend bool operator==(key_parts const &, key_parts const &) = default;
};

/*! \brief Coverage of several filters' parts, grouped by split: for each split S > 1 among `parts`,
 * the union of the parts of that split. \returns the index (into parts) of the first filter whose
 * split's union misses a part, or parts.size() when every split is complete. */
[[nodiscard]] std::size_t first_incomplete_split(std::span<key_parts const> parts);

/*! \brief Statistics of one shard or (summed) of a whole filter. */
struct filter_stats
{
    std::uint64_t bytes{0}; //!< payload size
    std::uint64_t slots{0}; //!< capacity unit: bits (Bloom), counters, slots (QF), entries (cuckoo)
    std::uint64_t used{0};  //!< used slots / set bits / entries
    std::uint64_t distinct{0};    //!< distinct keys (exact QF), fingerprints, or estimate (Bloom)
    std::uint64_t total_count{0}; //!< sum of counts (counting filters), else = distinct
    double load{0};               //!< used / slots
    double estimated_fpr{0};      //!< per-key false-positive rate at the current load
};

/*! \brief The statistics of shards summed into those of the filter they make up (counts added; load
 * and estimated FPR weighted by slots). Thread safety: none (one owner). */
class filter_stats_sum
{
public:
    void add(filter_stats const & x) noexcept
    {
        t_.bytes += x.bytes;
        t_.slots += x.slots;
        t_.used += x.used;
        t_.distinct += x.distinct;
        t_.total_count += x.total_count;
        fpr_weighted_ += x.estimated_fpr * static_cast<double>(x.slots);
    }
    [[nodiscard]] filter_stats total() const noexcept
    {
        filter_stats t = t_;
        t.load = t.slots == 0 ? 0.0 : static_cast<double>(t.used) / static_cast<double>(t.slots);
        t.estimated_fpr = t.slots == 0 ? 0.0 : fpr_weighted_ / static_cast<double>(t.slots);
        return t;
    }

private:
    filter_stats t_{};
    double fpr_weighted_{0};
};

/*! \brief The interface every per-shard filter type F provides, so that sharded_filter<F> and the
 * file format can hold it (hot members noexcept). F::create(cfg, key_bits, expected): an empty
 * filter for `expected` keys of `key_bits` bits (expected already divided among shards). count():
 * 0 if absent (membership filters: 0/1). insert_batch(): each key with count 1. params(), words():
 * what the file stores for the shard (little-endian words, aligned). F::view(params, words,
 * key_bits): a read-only filter over words it does not own (mmap); throws format_error (without
 * file name: the caller adds it) if params and words are inconsistent; mutating a view is a
 * precondition violation, clone() gives an owning copy. Thread safety of a single F: const members
 * may run concurrently; a mutating member needs exclusive access unless F documents otherwise
 * (Bloom: concurrent insert; QF: region locks). */
template <typename F>
concept shard_filter = requires(F f, F const cf, std::uint64_t key,
                                std::span<std::uint64_t const> keys, std::uint64_t * out,
                                filter_config const & cfg)
{
    {
        F::type_id
        } -> std::convertible_to<filter_type>;
    {
        F::create(cfg, 62u, key)
        } -> std::same_as<F>;
    {
        f.insert(key, key)
        } -> std::same_as<insert_status>;
    {
        cf.count(key)
        } -> std::same_as<std::uint64_t>;
    {
        f.insert_batch(keys)
        } -> std::same_as<insert_status>;
    {cf.count_batch(keys, out)};
    {
        cf.params()
        } -> std::same_as<std::vector<std::uint64_t>>;
    {
        cf.words()
        } -> std::same_as<std::span<std::uint64_t const>>;
    {
        F::view(keys, keys, 62u)
        } -> std::same_as<F>;
    {
        cf.clone()
        } -> std::same_as<F>;
    {
        cf.stats()
        } -> std::same_as<filter_stats>;
};

} // namespace ksieve
