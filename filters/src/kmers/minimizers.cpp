// The dispatching entries of sampling.hpp's short-record minimizers (detail::scan_short_record,
// detail::select_short_record_minima): the active CPU level's copy (minimizers_kernels.hpp).
#include <ksieve/filters/kmers/sampling.hpp>

#include "minimizers_kernels.hpp"

namespace ksieve::detail
{

bool scan_short_record(std::string_view const seq, unsigned const k, bool const canonical,
                       std::uint64_t const code_mask, std::uint64_t const salt,
                       minimizer_scratch & s) noexcept
{
    return minimizer_kernels().scan_acgt(seq, k, canonical, code_mask, salt, s);
}

std::size_t select_short_record_minima(minimizer_scratch & s, std::size_t const n,
                                       std::size_t const w, std::size_t & prev) noexcept
{
    return minimizer_kernels().select_minima(s, n, w, prev);
}

} // namespace ksieve::detail
