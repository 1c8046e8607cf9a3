// The AVX-512 (x86-64-v4) scan of for_each_record_minimizer: the canonical codes and order values
// of every k-mer of a short record of A/C/G/T only, eight positions at a time; and the selection of
// its windows' minima (select_minima_v4).
//
// Bases become 2-bit codes 64 at a time (compares against the four letters, either case). For
// positions j0 .. j0 + 7 in the eight lanes, the last eight bases ending at each lane are gathered
// in three steps of lane shifts (1, 2 and 4 lanes back, valignq), once newest-lowest for the
// forward code and once newest-highest (complemented) for the reverse complement; each lane then
// extends the code of the position eight back: fw_j = (fw_{j-8} << 16 | last8_j) & mask, rc_j =
// rc_{j-8} >> 16 | last8rc_j << 2 (k - 8). The results equal detail::scan_record's, position for
// position.
#include <ksieve/filters/sampling.hpp>

#include <cstdint>

#if KSIEVE_HAVE_X86_64_V4_KERNELS
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 headers initialize their undefined vectors from themselves
// (-Wmaybe-uninitialized).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#endif

namespace ksieve::detail
{

#if KSIEVE_HAVE_X86_64_V4_KERNELS

namespace
{

// 2-bit codes of p[0, n) into out[0, n) (A 0, C 1, G 2, T 3, either case), zeros from n to the next
// multiple of 64. \returns false if some byte is none of these. \pre out holds n rounded up to 64
// bytes.
bool encode_acgt(char const * const p, std::size_t const n, std::uint8_t * const out) noexcept
{
    __m512i const case_bit =
        _mm512_set1_epi8(0x20); // 'A' | 0x20 == 'a'; no other byte becomes a letter
    __m512i const a = _mm512_set1_epi8('a');
    __m512i const c = _mm512_set1_epi8('c');
    __m512i const g = _mm512_set1_epi8('g');
    __m512i const t = _mm512_set1_epi8('t');
    for (std::size_t i = 0; i < n; i += 64)
    {
        std::size_t const m = n - i;
        __mmask64 const live = m >= 64 ? ~__mmask64{0} : (__mmask64{1} << m) - 1;
        __m512i const x = _mm512_or_si512(_mm512_maskz_loadu_epi8(live, p + i), case_bit);
        __mmask64 const mc = _mm512_cmpeq_epi8_mask(x, c);
        __mmask64 const mg = _mm512_cmpeq_epi8_mask(x, g);
        __mmask64 const mt = _mm512_cmpeq_epi8_mask(x, t);
        __mmask64 const ma = _mm512_cmpeq_epi8_mask(x, a);
        if (((ma | mc | mg | mt) & live) != live)
            return false;
        __m512i v = _mm512_maskz_mov_epi8(mc, _mm512_set1_epi8(1));
        v = _mm512_mask_mov_epi8(v, mg, _mm512_set1_epi8(2));
        v = _mm512_mask_mov_epi8(v, mt, _mm512_set1_epi8(3));
        _mm512_storeu_si512(out + i, v);
    }
    return true;
}

// Codes and order values of the k-mers of the n_bases 2-bit codes b (entry j - (k - 1) for the
// k-mer ending at base j). \pre 8 <= k <= 32, k <= n_bases; b readable up to n_bases rounded up
// to 8.
template <bool canonical>
void kmers_v4(std::uint8_t const * const b, std::size_t const n_bases, unsigned const k,
              std::uint64_t const salt, std::uint64_t * const codes,
              std::uint64_t * const orders) noexcept
{
    __m512i const mask = _mm512_set1_epi64(static_cast<long long>(kmer_mask(k)));
    __m512i const three = _mm512_set1_epi64(3);
    __m512i const salt_v = _mm512_set1_epi64(static_cast<long long>(salt));
    __m512i const mult = _mm512_set1_epi64(static_cast<long long>(0x9e3779b97f4a7c15ULL));
    __m128i const rc_shift = _mm_cvtsi32_si128(static_cast<int>(2 * (k - 8)));
    __m512i const zero = _mm512_setzero_si512();
    __m512i x_prev = zero, y_prev = zero,
            z_prev = zero; // forward: 1, 2 and 4 newest bases of each lane
    __m512i c_prev = zero, u_prev = zero,
            v_prev = zero;           // reverse complement: the same, complemented
    __m512i fw = zero, rc = zero;    // the codes of the positions 8 back
    std::size_t const first = k - 1; // the base that ends the first k-mer
    for (std::size_t j0 = 0; j0 < n_bases; j0 += 8)
    {
        __m512i const x =
            _mm512_cvtepu8_epi64(_mm_loadl_epi64(reinterpret_cast<__m128i const *>(b + j0)));
        __m512i const y =
            _mm512_or_si512(_mm512_slli_epi64(_mm512_alignr_epi64(x, x_prev, 7), 2), x);
        __m512i const z =
            _mm512_or_si512(_mm512_slli_epi64(_mm512_alignr_epi64(y, y_prev, 6), 4), y);
        __m512i const last8 =
            _mm512_or_si512(_mm512_slli_epi64(_mm512_alignr_epi64(z, z_prev, 4), 8), z);
        fw = _mm512_and_si512(_mm512_or_si512(_mm512_slli_epi64(fw, 16), last8), mask);
        __m512i const c = _mm512_sub_epi64(three, x);
        __m512i const u =
            _mm512_or_si512(_mm512_slli_epi64(c, 2), _mm512_alignr_epi64(c, c_prev, 7));
        __m512i const v =
            _mm512_or_si512(_mm512_slli_epi64(u, 4), _mm512_alignr_epi64(u, u_prev, 6));
        __m512i const last8rc =
            _mm512_or_si512(_mm512_slli_epi64(v, 8), _mm512_alignr_epi64(v, v_prev, 4));
        rc = _mm512_or_si512(_mm512_srli_epi64(rc, 16), _mm512_sll_epi64(last8rc, rc_shift));
        x_prev = x, y_prev = y, z_prev = z, c_prev = c, u_prev = u, v_prev = v;
        if (j0 + 8 <= first)
            continue; // no k-mer ends in these lanes yet
        __m512i const code = canonical ? _mm512_min_epu64(fw, rc) : fw;
        __m512i const order = _mm512_mullo_epi64(_mm512_xor_si512(code, salt_v), mult);
        std::size_t const end = n_bases - j0 < 8 ? n_bases - j0 : 8; // lanes [0, end) hold bases
        if (j0 >= first)
        {
            __mmask8 const live = static_cast<__mmask8>((1u << end) - 1);
            _mm512_mask_storeu_epi64(codes + (j0 - first), live, code);
            _mm512_mask_storeu_epi64(orders + (j0 - first), live, order);
        }
        else // the first k-mers end in lanes [first - j0, end): to entries 0, 1, ...
        {
            auto const from = static_cast<unsigned>(first - j0);
            __mmask8 const live = static_cast<__mmask8>(((1u << end) - 1) & ~((1u << from) - 1));
            __mmask8 const out = static_cast<__mmask8>((1u << (end - from)) - 1);
            _mm512_mask_storeu_epi64(codes, out, _mm512_maskz_compress_epi64(live, code));
            _mm512_mask_storeu_epi64(orders, out, _mm512_maskz_compress_epi64(live, order));
        }
    }
}

// The windows of w entries from level p (p <= w < 2p): window i is the smaller of level entries i
// and i + w - p (the left one on ties); its position is reported unless the window before had it
// (prev).
std::size_t select_windows_v4(minimizer_scratch & s, std::uint64_t const * const lo,
                              std::uint32_t const * const li, std::size_t const p,
                              std::size_t const n, std::size_t const w, std::size_t & prev) noexcept
{
    std::size_t const windows = n - w + 1;
    std::size_t const shift = w - p;
    std::size_t m = 0;
    auto last = static_cast<std::uint32_t>(prev); // (-1: none; positions are below 2^32 - 1)
    for (std::size_t i = 0; i < windows; i += 8)
    {
        std::size_t const count = windows - i >= 8 ? 8 : windows - i;
        auto const live = static_cast<__mmask8>((1u << count) - 1);
        __m512i const a = _mm512_maskz_loadu_epi64(live, lo + i);
        __m512i const b = _mm512_maskz_loadu_epi64(live, lo + i + shift);
        __m256i const ai = _mm256_maskz_loadu_epi32(live, li + i);
        __m256i const bi = _mm256_maskz_loadu_epi32(live, li + i + shift);
        __m256i const sel = _mm256_mask_blend_epi32(_mm512_cmplt_epu64_mask(b, a), ai, bi);
        // each lane against the lane before it (lane 0: the last position of the windows before)
        __m256i const before =
            _mm256_alignr_epi32(sel, _mm256_set1_epi32(static_cast<int>(last)), 7);
        __mmask8 const fresh = _mm256_mask_cmpneq_epu32_mask(live, sel, before);
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(s.positions + m),
                            _mm256_maskz_compress_epi32(fresh, sel));
        m += static_cast<std::size_t>(__builtin_popcount(fresh));
        last = static_cast<std::uint32_t>(_mm256_cvtsi256_si32(
            _mm256_permutexvar_epi32(_mm256_set1_epi32(static_cast<int>(count - 1)), sel)));
    }
    for (std::size_t t = 0; t < m; ++t)
        s.selected[t] = s.codes[s.positions[t]];
    prev = last;
    return m;
}

// Level 2p of the window minima from level p (order values src_o, positions src_i; null: the
// positions are the indices): entries [0, count), each the smaller of entries i and i + p, the left
// one on ties.
void double_minima(std::uint64_t const * const src_o, std::uint32_t const * const src_i,
                   std::size_t const p, std::size_t const count, std::uint64_t * const dst_o,
                   std::uint32_t * const dst_i) noexcept
{
    __m256i const lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (std::size_t i = 0; i < count; i += 8)
    {
        auto const live = static_cast<__mmask8>(count - i >= 8 ? 0xff : (1u << (count - i)) - 1);
        __m512i const a = _mm512_maskz_loadu_epi64(live, src_o + i);
        __m512i const b = _mm512_maskz_loadu_epi64(live, src_o + i + p);
        __m256i const ai = src_i != nullptr
                               ? _mm256_maskz_loadu_epi32(live, src_i + i)
                               : _mm256_add_epi32(lanes, _mm256_set1_epi32(static_cast<int>(i)));
        __m256i const bi =
            src_i != nullptr ? _mm256_maskz_loadu_epi32(live, src_i + i + p)
                             : _mm256_add_epi32(lanes, _mm256_set1_epi32(static_cast<int>(i + p)));
        __mmask8 const right = _mm512_cmplt_epu64_mask(b, a);
        _mm512_mask_storeu_epi64(dst_o + i, live, _mm512_mask_blend_epi64(right, a, b));
        _mm256_mask_storeu_epi32(dst_i + i, live, _mm256_mask_blend_epi32(right, ai, bi));
    }
}

} // namespace

std::size_t select_minima_v4(minimizer_scratch & s, std::size_t const n, std::size_t const w,
                             std::size_t & prev) noexcept
{
    // levels p = 2, 4, ... <= w; level p is needed at [0, n - p]
    std::uint64_t const * src_o = s.orders;
    std::uint32_t const * src_i = nullptr;
    std::size_t p = 1;
    for (unsigned cur = 0; 2 * p <= w; cur ^= 1, p *= 2)
    {
        double_minima(src_o, src_i, p, n - 2 * p + 1, s.level_order[cur], s.level_index[cur]);
        src_o = s.level_order[cur];
        src_i = s.level_index[cur];
    }
    return select_windows_v4(s, src_o, src_i, p, n, w, prev);
}

bool scan_acgt_v4(std::string_view const seq, unsigned const k, bool const canonical,
                  std::uint64_t const salt, minimizer_scratch & s) noexcept
{
    if (!encode_acgt(seq.data(), seq.size(), s.bases))
        return false;
    if (canonical)
        kmers_v4<true>(s.bases, seq.size(), k, salt, s.codes, s.orders);
    else
        kmers_v4<false>(s.bases, seq.size(), k, salt, s.codes, s.orders);
    return true;
}

#else

bool scan_acgt_v4(std::string_view, unsigned, bool, std::uint64_t, minimizer_scratch &) noexcept
{
    return false;
}

std::size_t select_minima_v4(minimizer_scratch &, std::size_t, std::size_t, std::size_t &) noexcept
{
    return 0;
}

#endif

} // namespace ksieve::detail
