// The one run-time choice of CPU level for every kernel family: cpuid (and xgetbv) asked once, the
// KSIEVE_SIMD environment variable and the tests' switch; and the families' dispatch tables, one
// entry per level, filled with the copies this build compiled (cpu_dispatch.hpp).
#include <ksieve/filters/support/cpu_dispatch.hpp>

#include "../bloom/bloom_blocked_kernels.hpp"
#include "../kmers/minimizers_kernels.hpp"
#include "../quotient/quotient_filter_kernels.hpp"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && __has_include(<cpuid.h>)
#include <cpuid.h>
#define KSIEVE_SIMD_DETECT 1
#else
#define KSIEVE_SIMD_DETECT 0
#endif

namespace ksieve::detail
{

std::atomic<int> simd_choice{simd_unset};

namespace
{

#if KSIEVE_SIMD_DETECT
// Whether every bit of `mask` is set in the cpuid register r.
constexpr bool has(unsigned const r, unsigned const mask) noexcept
{
    return (r & mask) == mask;
}

// The low word of XCR0: the register state the OS saves. \pre cpuid reports OSXSAVE.
unsigned xcr0() noexcept
{
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return lo;
}

// x86-64-v3, as the kernels compiled with -march=x86-64-v3 may use it: AVX2 (with the OS saving the
// YMM registers), BMI1, BMI2, LZCNT, POPCNT, FMA, F16C and MOVBE.
bool cpu_has_v3_uncached() noexcept
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (static_cast<unsigned>(__get_cpuid_max(0, nullptr)) < 7)
        return false;
    __cpuid(1, a, b, c, d);
    // POPCNT (23), FMA (12), MOVBE (22), F16C (29), OSXSAVE (27) and AVX (28), the XMM and YMM
    // state enabled
    if (!has(c, 1u << 23 | 1u << 12 | 1u << 22 | 1u << 29 | 1u << 27 | 1u << 28) || !has(xcr0(), 6))
        return false;
    __cpuid_count(7, 0, a, b, c, d);
    if (!has(b, 1u << 3 | 1u << 5 | 1u << 8)) // BMI1, AVX2, BMI2
        return false;
    if (static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) < 0x80000001u)
        return false;
    __cpuid(0x80000001u, a, b, c, d);
    return has(c, 1u << 5); // LZCNT
}

// x86-64-v4, as the kernels compiled with -march=x86-64-v4 may use it: AVX-512 F, BW, CD, DQ and
// VL, with the OS saving the opmask and ZMM state (XCR0 bits 5 to 7). \pre cpu_has_v3_uncached().
bool cpu_has_v4_uncached() noexcept
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid(1, a, b, c, d);
    if (!has(c, 1u << 27) || !has(xcr0(), 0xe6)) // osxsave
        return false;
    __cpuid_count(7, 0, a, b, c, d);
    return has(b, 1u << 16 | 1u << 17 | 1u << 28 | 1u << 30 | 1u << 31); // F, DQ, CD, BW, VL
}

// AMD family 0x17 (Zen 1, Zen 2) and Hygon family 0x18 microcode pdep/pext (hundreds of cycles).
bool cpu_has_slow_pdep_uncached() noexcept
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid(0, a, b, c, d);
    char vendor[13];
    std::memcpy(vendor, &b, 4);
    std::memcpy(vendor + 4, &d, 4);
    std::memcpy(vendor + 8, &c, 4);
    vendor[12] = 0;
    bool const amd = std::strcmp(vendor, "AuthenticAMD") == 0;
    bool const hygon = std::strcmp(vendor, "HygonGenuine") == 0;
    if (!amd && !hygon)
        return false;
    __cpuid(1, a, b, c, d);
    unsigned family = (a >> 8) & 0xF;
    if (family == 0xF)
        family += (a >> 20) & 0xFF;
    return family == 0x17 || family == 0x18;
}

// cpuid is slow (a VM exit under virtualisation): asked once.
bool cpu_has_slow_pdep() noexcept
{
    static bool const slow = cpu_has_slow_pdep_uncached();
    return slow;
}
#endif

// Whether KSIEVE_SIMD is `value` (x86-64-v3: no AVX-512 kernels; generic: none of the vector ones).
bool simd_environment_is(char const * const value) noexcept
{
    char const * const simd = std::getenv("KSIEVE_SIMD");
    return simd != nullptr && std::strcmp(simd, value) == 0;
}

// The choice for `level`; the automatic one (fast_pdep_only) keeps the portable select of the
// quotient filter on a slow pdep.
int choice_for(simd_level const level, bool const fast_pdep_only) noexcept
{
    if (!simd_level_supported(level))
        return static_cast<int>(simd_level::generic);
    int const c = static_cast<int>(level);
#if KSIEVE_SIMD_DETECT
    if (fast_pdep_only && cpu_has_slow_pdep())
        return c; // (the quotient filter's table index 0: the generic copy)
#else
    (void)fast_pdep_only;
#endif
    return c | (c << simd_qf_shift);
}

int automatic_choice() noexcept
{
    if (simd_environment_is("generic"))
        return static_cast<int>(simd_level::generic);
    simd_level const level = cpu_simd_level();
    return choice_for(level == simd_level::x86_64_v4 && simd_environment_is("x86-64-v3")
                          ? simd_level::x86_64_v3
                          : level,
                      true);
}

// The families' active entries for the choice c (<family>_kernels_active).
void store_entries(int const c) noexcept
{
    int const level = c & simd_level_bits;
    qf_kernels_active.store(&qf_kernel_tables[(c >> simd_qf_shift) & simd_level_bits],
                            std::memory_order_relaxed);
    bloom_kernels_active.store(&bloom_kernel_tables[level], std::memory_order_relaxed);
    minimizer_kernels_active.store(&minimizer_kernel_tables[level], std::memory_order_relaxed);
}

// Stores the choice c and the entries that follow from it.
void store_choice(int const c) noexcept
{
    simd_choice.store(c, std::memory_order_relaxed);
    store_entries(c);
}

} // namespace

int simd_choose() noexcept
{
    int expected = simd_unset;
    int const c = automatic_choice();
    int const chosen =
        simd_choice.compare_exchange_strong(expected, c, std::memory_order_relaxed) ? c : expected;
    store_entries(chosen);
    return chosen;
}

simd_level cpu_simd_level() noexcept
{
#if KSIEVE_SIMD_DETECT
    static simd_level const level = !cpu_has_v3_uncached()  ? simd_level::generic
                                    : cpu_has_v4_uncached() ? simd_level::x86_64_v4
                                                            : simd_level::x86_64_v3;
    return level;
#elif defined(__aarch64__)
    return simd_level::aarch64_neon;
#else
    return simd_level::generic;
#endif
}

bool simd_level_supported(simd_level const level) noexcept
{
    simd_level const cpu = cpu_simd_level();
    switch (level)
    {
    case simd_level::generic:
        return true;
    case simd_level::x86_64_v3:
        return cpu == simd_level::x86_64_v3 || cpu == simd_level::x86_64_v4;
    case simd_level::x86_64_v4:
        return cpu == simd_level::x86_64_v4;
    case simd_level::aarch64_neon:
        return cpu == simd_level::aarch64_neon;
    }
    return false;
}

void force_simd_level(simd_level const level) noexcept
{
    store_choice(choice_for(level, false));
}

void reset_simd_level() noexcept
{
    store_choice(automatic_choice());
}

// ---------------------------------------------------------------------------------------------------------
// The dispatch tables: entry i for simd_level i, a copy this build has
// (KSIEVE_HAVE_<LEVEL>_KERNELS, filters/CMakeLists.txt) or the nearest lower one.

// The quotient filter: generic and x86-64-v3 (pdep select, bzhi masks; the x86-64-v4 level runs it
// too); aarch64 runs the generic copy (broadword select, the CNT popcount).
#define KSIEVE_QF_KERNELS(level)                                                                   \
    qf_kernel_table                                                                                \
    {                                                                                              \
        &level::qf_insert_key, &level::qf_count_key, &level::qf_insert_batch,                      \
            &level::qf_insert_batch_ordered, &level::qf_count_batch,                               \
            &level::qf_count_batch_ordered, &level::qf_count_sharded, &level::qf_select64          \
    }
#if KSIEVE_HAVE_X86_64_V3_KERNELS
#define KSIEVE_QF_V3 KSIEVE_QF_KERNELS(x86_64_v3)
#else
#define KSIEVE_QF_V3 KSIEVE_QF_KERNELS(generic)
#endif
qf_kernel_table const qf_kernel_tables[simd_level_count] = {
    KSIEVE_QF_KERNELS(generic), KSIEVE_QF_V3, KSIEVE_QF_V3, KSIEVE_QF_KERNELS(generic)};
#undef KSIEVE_QF_V3
#undef KSIEVE_QF_KERNELS

std::atomic<qf_kernel_table const *> qf_kernels_active{nullptr};

qf_kernel_table const & qf_kernels_chosen() noexcept
{
    return qf_kernel_tables[(simd_kernels() >> simd_qf_shift) & simd_level_bits];
}

// The blocked Bloom filter: generic and x86-64-v3 (AVX2 lookups; the x86-64-v4 level runs it too).
#define KSIEVE_BLOOM_KERNELS(level)                                                                \
    bloom_kernel_table                                                                             \
    {                                                                                              \
        &level::bloom_insert_batch, &level::bloom_insert_batch_concurrent,                         \
            &level::bloom_set_bits_atomic, &level::bloom_count_batch, &level::bloom_count_sharded  \
    }
#if KSIEVE_HAVE_X86_64_V3_KERNELS
#define KSIEVE_BLOOM_V3 KSIEVE_BLOOM_KERNELS(x86_64_v3)
#else
#define KSIEVE_BLOOM_V3 KSIEVE_BLOOM_KERNELS(generic)
#endif
bloom_kernel_table const bloom_kernel_tables[simd_level_count] = {
    KSIEVE_BLOOM_KERNELS(generic), KSIEVE_BLOOM_V3, KSIEVE_BLOOM_V3, KSIEVE_BLOOM_KERNELS(generic)};
#undef KSIEVE_BLOOM_V3
#undef KSIEVE_BLOOM_KERNELS

std::atomic<bloom_kernel_table const *> bloom_kernels_active{nullptr};

bloom_kernel_table const & bloom_kernels_chosen() noexcept
{
    return bloom_kernel_tables[active_simd_index()];
}

// The minimizers: x86-64-v4 (AVX-512) and aarch64 NEON; the generic and x86-64-v3 levels run the
// generic copy (no vector scan: the inline generic code).
#define KSIEVE_MINIMIZER_KERNELS(level)                                                            \
    minimizer_kernel_table                                                                         \
    {                                                                                              \
        &level::minimizers_scan_acgt, &level::minimizers_select_minima                             \
    }
#if KSIEVE_HAVE_X86_64_V4_KERNELS
#define KSIEVE_MINIMIZERS_V4 KSIEVE_MINIMIZER_KERNELS(x86_64_v4)
#else
#define KSIEVE_MINIMIZERS_V4 KSIEVE_MINIMIZER_KERNELS(generic)
#endif
#if KSIEVE_HAVE_AARCH64_NEON_KERNELS
#define KSIEVE_MINIMIZERS_NEON KSIEVE_MINIMIZER_KERNELS(aarch64_neon)
#else
#define KSIEVE_MINIMIZERS_NEON KSIEVE_MINIMIZER_KERNELS(generic)
#endif
minimizer_kernel_table const minimizer_kernel_tables[simd_level_count] = {
    KSIEVE_MINIMIZER_KERNELS(generic), KSIEVE_MINIMIZER_KERNELS(generic), KSIEVE_MINIMIZERS_V4,
    KSIEVE_MINIMIZERS_NEON};
#undef KSIEVE_MINIMIZERS_NEON
#undef KSIEVE_MINIMIZERS_V4
#undef KSIEVE_MINIMIZER_KERNELS

std::atomic<minimizer_kernel_table const *> minimizer_kernels_active{nullptr};

minimizer_kernel_table const & minimizer_kernels_chosen() noexcept
{
    return minimizer_kernel_tables[active_simd_index()];
}

} // namespace ksieve::detail
