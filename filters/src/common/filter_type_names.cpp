// The names of the filter types (`--type`, `info`): to_string() and parse_filter_type().
#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/support/error.hpp>

#include <string>
#include <string_view>

namespace ksieve
{

std::string_view to_string(filter_type const t) noexcept
{
    switch (t)
    {
    case filter_type::quotient:
        return "qf";
    case filter_type::bloom:
        return "bloom";
    case filter_type::cuckoo:
        return "cuckoo";
    case filter_type::counting_bloom:
        return "counting-bloom";
    case filter_type::bloom_classic:
        return "bloom-classic";
    }
    return "unknown";
}

filter_type parse_filter_type(std::string_view const name)
{
    for (auto const t : {filter_type::quotient, filter_type::bloom, filter_type::cuckoo,
                         filter_type::counting_bloom, filter_type::bloom_classic})
        if (name == to_string(t))
            return t;
    if (name == "quotient")
        return filter_type::quotient;
    throw usage_error{"unknown filter type '" + std::string{name} +
                      "' (expected qf, bloom, cuckoo, counting-bloom or bloom-classic)"};
}

} // namespace ksieve
