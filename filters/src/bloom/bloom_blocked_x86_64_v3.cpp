// The blocked Bloom filter's kernels compiled for x86-64-v3 (CMake gives this file
// -march=x86-64-v3): detail::x86_64_v3 (AVX2 lookups); the body is bloom_blocked_kernels.inc.
#if KSIEVE_HAVE_X86_64_V3_KERNELS
#include <ksieve/filters/bloom/bloom.hpp>

#include "bloom_blocked_kernels.hpp"
#include "bloom_common.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <immintrin.h>
#include <span>
#include <utility>

#define KSIEVE_BLOOM_LEVEL 1

namespace ksieve::detail::x86_64_v3
{

#include "bloom_blocked_kernels.inc"

} // namespace ksieve::detail::x86_64_v3
#endif
