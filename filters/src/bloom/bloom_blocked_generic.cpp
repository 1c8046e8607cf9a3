// The blocked Bloom filter's kernels for the build's own target, detail::generic (the body is
// bloom_blocked_kernels.inc).
#include <ksieve/filters/bloom/bloom.hpp>

#include "bloom_blocked_kernels.hpp"
#include "bloom_common.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <span>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own _mm512_undefined_epi32() (a self-initialised variable inside the
// intrinsics) as "may be used uninitialized" when AVX-512 intrinsics are inlined; the warning is
// spurious (GCC PR 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define KSIEVE_BLOOM_LEVEL 0

namespace ksieve::detail::generic
{

#include "bloom_blocked_kernels.inc"

} // namespace ksieve::detail::generic
