// The steps of a set operation over filters that its variants share (any_filter.cpp): the checks
// of the inputs, the key parts of the result and the one layout the inputs are combined in.
#pragma once

#include <ksieve/filters/common/any_filter.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace ksieve::detail
{

// The inputs of a set operation in one layout: as given, except quotient filters of other shard
// counts than the input whose fingerprints keep the fewest bits (the first of those), which are
// moved to its layout.
struct common_layout
{
    filter_config cfg;                              // the result's configuration
    std::vector<std::unique_ptr<any_filter>> moved; // the re-sharded inputs
    std::vector<any_filter const *> inputs;         // every input, in the common layout
};

// The checks of a set operation's inputs that need no layout (see any_filter.cpp). \throws
// usage_error, incompatible_error
void check_combinable(std::span<any_filter const * const> inputs,
                      std::span<std::string const> names, set_operation op,
                      std::uint64_t min_count);

// The key parts of the result. \throws incompatible_error where parts of a split meet whole
// filters or another split.
[[nodiscard]] key_parts result_parts_of(std::span<any_filter const * const> inputs,
                                        std::span<std::string const> names,
                                        std::string const & verb);

// The inputs moved to one layout (see any_filter.cpp). \throws as reshard_quotient
[[nodiscard]] common_layout layout_for(std::span<any_filter const * const> inputs,
                                       std::span<std::string const> names, unsigned threads);

// The remainder width that measures the counters of a result of p-bit fingerprints: the smallest
// among the inputs once cut to p (quotient_filter_combine.cpp).
[[nodiscard]] unsigned counter_remainder_bits(std::span<quotient_filter const * const> inputs,
                                              unsigned p);

// 'a', 'b', 'c' (at most 5 names, then "and N more").
[[nodiscard]] std::string quoted_list(std::span<std::string const> names);

} // namespace ksieve::detail
