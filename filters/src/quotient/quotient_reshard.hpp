// Re-sharding of quotient filters: the bits of each key's hash a filter's fingerprints keep, the
// layout a configuration gives, and a filter moved into another layout (for set operations of
// unequal layouts).
#pragma once

#include <ksieve/filters/common/any_filter.hpp>

#include <memory>
#include <string>

namespace ksieve::detail
{

/*! \brief The bits of each key's hash that quotient filter `f`'s fingerprints keep: s + p (s shard
 * bits, p fingerprint bits), or all 2k bits in exact mode. \pre `f` is a quotient filter. */
[[nodiscard]] unsigned kept_bits(any_filter const & f);

/*! \brief The bits a quotient filter of configuration `cfg` (its shard bits, expected keys and FPR)
 * keeps for keys of `key_bits` bits. \throws usage_error for an invalid configuration. */
[[nodiscard]] unsigned layout_kept_bits(filter_config const & cfg, unsigned key_bits);

/*! \brief Quotient filter `in` moved to the layout of `cfg` (its shards; fingerprints of at most as
 * many kept bits), counts kept, on up to `threads` threads. `name` and `target_name` name the
 * filters in errors. \throws incompatible_error where the target keeps more bits than `in`;
 * full_error; interrupted_error on a stop request. Thread safety: reads `in` only. */
[[nodiscard]] std::unique_ptr<any_filter>
reshard_quotient(any_filter const & in, filter_config const & cfg, std::string const & name,
                 std::string const & target_name, unsigned threads);

} // namespace ksieve::detail
