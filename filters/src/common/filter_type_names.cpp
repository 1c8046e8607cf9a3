// The names of the filter types (`--type`, `info`): to_string() and parse_filter_type().
#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/support/error.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ksieve
{

namespace
{

// The names of the types in the order of their values, from 1.
constexpr std::array<std::string_view, 5> type_names{"qf", "bloom", "cuckoo", "counting-bloom",
                                                     "bloom-classic"};

} // namespace

std::string_view to_string(filter_type const t) noexcept
{
    auto const i = static_cast<std::uint32_t>(t);
    return i >= 1 && i <= type_names.size() ? type_names[i - 1] : "unknown";
}

filter_type parse_filter_type(std::string_view const name)
{
    for (std::uint32_t i = 0; i < type_names.size(); ++i)
        if (name == type_names[i])
            return static_cast<filter_type>(i + 1);
    if (name == "quotient")
        return filter_type::quotient;
    throw usage_error{"unknown filter type '" + std::string{name} +
                      "' (expected qf, bloom, cuckoo, counting-bloom or bloom-classic)"};
}

} // namespace ksieve
