#include "CResampleKernel.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

#define CIMAGO_AVX2 __attribute__((target("avx2")))
#define CIMAGO_AVX512 __attribute__((target("avx2,avx512f,avx512bw,avx512vl")))
#define CIMAGO_INLINE static inline __attribute__((always_inline))
// The per-row steps stay functions of their own: inlined into the row loop they ran slower (BENCHMARKS.md).
#define CIMAGO_NOINLINE __attribute__((noinline))

/// Pass 1's scalar tail, from output pixel `x` on: the same sums, one channel at a time.
CIMAGO_INLINE void horizontal_tail(
    const uint8_t *src, const long *starts, const uint32_t *weights, long taps, long x, long width, uint16_t *row) {
    for (; x < width; x++) {
        const uint8_t *p = src + starts[x] * 4;
        const uint32_t *w = weights + x * taps;
        uint32_t r = 0, g = 0, b = 0;
        for (long k = 0; k < taps; k++) {
            r += (uint32_t)p[4 * k] * w[k];
            g += (uint32_t)p[4 * k + 1] * w[k];
            b += (uint32_t)p[4 * k + 2] * w[k];
        }
        row[x * 4] = (uint16_t)((r + (1u << 13)) >> 14);
        row[x * 4 + 1] = (uint16_t)((g + (1u << 13)) >> 14);
        row[x * 4 + 2] = (uint16_t)((b + (1u << 13)) >> 14);
        row[x * 4 + 3] = 255 << 8;
    }
}

/// `n` (1…4) consecutive 32-bit values at `p` (four pixels, or four weights) into the low lanes of a vector, the
/// rest zero. Never reads past the `n`th value: an output's taps end at most at the end of its source row, and
/// its weights at the end of the table.
CIMAGO_INLINE CIMAGO_AVX2 __m128i load_dwords(const void *p, long n) {
    int32_t v[4];
    switch (n) {
    case 1: memcpy(v, p, 4); return _mm_cvtsi32_si128(v[0]);
    case 2: return _mm_loadl_epi64((const __m128i *)p);
    case 3: memcpy(v, (const uint8_t *)p + 8, 4); return _mm_insert_epi32(_mm_loadl_epi64((const __m128i *)p), v[0], 2);
    default: return _mm_loadu_si128((const __m128i *)p);
    }
}

/// `load_dwords` with AVX-512 VL's masked load for three values (one instruction; the masked-off fourth is
/// neither read nor able to fault).
CIMAGO_INLINE CIMAGO_AVX512 __m128i load_dwords512(const void *p, long n) {
    if (n == 3) return _mm_maskz_loadu_epi32(0x7, p);
    return load_dwords(p, n);
}

/// Byte shuffle (per 128-bit lane) that widens pixel `k` of a lane's four RGBA pixels to four 32-bit channels.
#define CIMAGO_TAP_BYTES(k)                                                                                         \
    _mm_setr_epi8(4 * (k), -1, -1, -1, 4 * (k) + 1, -1, -1, -1, 4 * (k) + 2, -1, -1, -1, 4 * (k) + 3, -1, -1, -1)

/// Pass 1 for one source row, two output pixels (eight 32-bit sums) per step, their taps loaded one by one; `TAPS`
/// a constant where it is known, so the tap loop unrolls. (The AVX-512 kernel's scheme, a lane per output loading
/// four taps at once, was slower here at this width: more inserts than it saves.)
CIMAGO_INLINE CIMAGO_AVX2 void
horizontal(const uint8_t *src, const long *starts, const uint32_t *weights, long taps, long width, uint16_t *row) {
    const __m256i half = _mm256_set1_epi32(1 << 13);
    // Alpha: 255 in 8.8 fixed point, as the Swift loop writes it (lanes 3 and 7).
    const __m256i keep = _mm256_setr_epi32(-1, -1, -1, 0, -1, -1, -1, 0);
    const __m256i alpha = _mm256_setr_epi32(0, 0, 0, 255 << 8, 0, 0, 0, 255 << 8);
    long x = 0;
    for (; x + 2 <= width; x += 2) {
        const uint8_t *p0 = src + starts[x] * 4;
        const uint8_t *p1 = src + starts[x + 1] * 4;
        const uint32_t *w0 = weights + x * taps;
        const uint32_t *w1 = w0 + taps;
        __m256i sum = _mm256_setzero_si256();
        for (long k = 0; k < taps; k++) {
            uint32_t a, b;
            memcpy(&a, p0 + 4 * k, 4);
            memcpy(&b, p1 + 4 * k, 4);
            const __m256i pixels = _mm256_cvtepu8_epi32(_mm_unpacklo_epi32(_mm_cvtsi32_si128((int)a), _mm_cvtsi32_si128((int)b)));
            const __m256i w = _mm256_setr_m128i(_mm_set1_epi32((int)w0[k]), _mm_set1_epi32((int)w1[k]));
            sum = _mm256_add_epi32(sum, _mm256_mullo_epi32(pixels, w));
        }
        sum = _mm256_srli_epi32(_mm256_add_epi32(sum, half), 14);
        sum = _mm256_or_si256(_mm256_and_si256(sum, keep), alpha);
        // Values ≤ 65,280: the unsigned saturating pack keeps them as they are.
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(sum, sum), 0x08);
        _mm_storeu_si128((__m128i *)(row + x * 4), _mm256_castsi256_si128(packed));
    }
    horizontal_tail(src, starts, weights, taps, x, width, row);
}

CIMAGO_AVX2 CIMAGO_NOINLINE static void horizontal_any(
    const uint8_t *src, const long *starts, const uint32_t *weights, long taps, long width, uint16_t *row) {
    switch (taps) {
    case 1: horizontal(src, starts, weights, 1, width, row); break;
    case 2: horizontal(src, starts, weights, 2, width, row); break;
    case 3: horizontal(src, starts, weights, 3, width, row); break;
    case 4: horizontal(src, starts, weights, 4, width, row); break;
    default: horizontal(src, starts, weights, taps, width, row); break;
    }
}

/// Pass 1 for one source row, four output pixels per step, one per 128-bit lane: each lane loads four consecutive
/// source pixels and the output's four weights at once (a group of taps), then, per tap, widens that tap's pixel
/// to 32-bit channels with one byte shuffle and broadcasts its weight with one dword shuffle. `TAPS` a constant
/// where it is known, so the groups and taps unroll.
CIMAGO_INLINE CIMAGO_AVX512 void horizontal512(
    const uint8_t *src, const long *starts, const uint32_t *weights, long taps, long width, uint16_t *row) {
    const __m512i half = _mm512_set1_epi32(1 << 13);
    const __m512i alpha = _mm512_set1_epi32(255 << 8);
    const __m512i t0 = _mm512_broadcast_i32x4(CIMAGO_TAP_BYTES(0));
    const __m512i t1 = _mm512_broadcast_i32x4(CIMAGO_TAP_BYTES(1));
    const __m512i t2 = _mm512_broadcast_i32x4(CIMAGO_TAP_BYTES(2));
    const __m512i t3 = _mm512_broadcast_i32x4(CIMAGO_TAP_BYTES(3));
    long x = 0;
    for (; x + 4 <= width; x += 4) {
        const uint8_t *p0 = src + starts[x] * 4;
        const uint8_t *p1 = src + starts[x + 1] * 4;
        const uint8_t *p2 = src + starts[x + 2] * 4;
        const uint8_t *p3 = src + starts[x + 3] * 4;
        const uint32_t *w0 = weights + x * taps;
        __m512i sum = _mm512_setzero_si512();
        for (long g = 0; g < taps; g += 4) {
            const long n = taps - g < 4 ? taps - g : 4;
            __m512i pixels = _mm512_castsi128_si512(load_dwords512(p0 + 4 * g, n));
            pixels = _mm512_inserti32x4(pixels, load_dwords512(p1 + 4 * g, n), 1);
            pixels = _mm512_inserti32x4(pixels, load_dwords512(p2 + 4 * g, n), 2);
            pixels = _mm512_inserti32x4(pixels, load_dwords512(p3 + 4 * g, n), 3);
            __m512i w = _mm512_castsi128_si512(load_dwords512(w0 + g, n));
            w = _mm512_inserti32x4(w, load_dwords512(w0 + taps + g, n), 1);
            w = _mm512_inserti32x4(w, load_dwords512(w0 + 2 * taps + g, n), 2);
            w = _mm512_inserti32x4(w, load_dwords512(w0 + 3 * taps + g, n), 3);
            sum = _mm512_add_epi32(
                sum, _mm512_mullo_epi32(_mm512_shuffle_epi8(pixels, t0), _mm512_shuffle_epi32(w, _MM_PERM_AAAA)));
            if (n > 1)
                sum = _mm512_add_epi32(
                    sum, _mm512_mullo_epi32(_mm512_shuffle_epi8(pixels, t1), _mm512_shuffle_epi32(w, _MM_PERM_BBBB)));
            if (n > 2)
                sum = _mm512_add_epi32(
                    sum, _mm512_mullo_epi32(_mm512_shuffle_epi8(pixels, t2), _mm512_shuffle_epi32(w, _MM_PERM_CCCC)));
            if (n > 3)
                sum = _mm512_add_epi32(
                    sum, _mm512_mullo_epi32(_mm512_shuffle_epi8(pixels, t3), _mm512_shuffle_epi32(w, _MM_PERM_DDDD)));
        }
        sum = _mm512_srli_epi32(_mm512_add_epi32(sum, half), 14);
        sum = _mm512_mask_blend_epi32(0x8888, sum, alpha);
        // Values ≤ 65,280: truncating to 16 bits keeps them as they are.
        _mm256_storeu_si256((__m256i *)(row + x * 4), _mm512_cvtepi32_epi16(sum));
    }
    horizontal_tail(src, starts, weights, taps, x, width, row);
}

/// `horizontal512` for two taps (every shrink by less than 2, and enlargements): eight output pixels per step, two
/// per 128-bit lane. One 8-byte load reads each output's two source pixels, one 64-byte load the eight outputs' two
/// weights each (in the same order); the even and odd outputs of a lane are summed apart and one pack puts them
/// back in order. (A 64-bit gather of the eight pairs, indexed by the starts themselves, was slower on Zen 5.)
CIMAGO_AVX512 CIMAGO_NOINLINE static void horizontal512_two(
    const uint8_t *src, const long *starts, const uint32_t *weights, long width, uint16_t *row) {
    const __m512i half = _mm512_set1_epi32(1 << 13);
    const __m512i alpha = _mm512_set1_epi32(255 << 8);
    // Per lane: output 2m's first and second pixel (bytes 0-3, 4-7), output 2m+1's (bytes 8-11, 12-15).
    const __m512i e0 = _mm512_broadcast_i32x4(CIMAGO_TAP_BYTES(0));
    const __m512i e1 = _mm512_broadcast_i32x4(CIMAGO_TAP_BYTES(1));
    const __m512i o0 = _mm512_broadcast_i32x4(CIMAGO_TAP_BYTES(2));
    const __m512i o1 = _mm512_broadcast_i32x4(CIMAGO_TAP_BYTES(3));
    long x = 0;
    for (; x + 8 <= width; x += 8) {
#define CIMAGO_PAIR(i) _mm_loadl_epi64((const __m128i *)(src + starts[x + (i)] * 4))
        __m512i pixels = _mm512_castsi128_si512(_mm_unpacklo_epi64(CIMAGO_PAIR(0), CIMAGO_PAIR(1)));
        pixels = _mm512_inserti32x4(pixels, _mm_unpacklo_epi64(CIMAGO_PAIR(2), CIMAGO_PAIR(3)), 1);
        pixels = _mm512_inserti32x4(pixels, _mm_unpacklo_epi64(CIMAGO_PAIR(4), CIMAGO_PAIR(5)), 2);
        pixels = _mm512_inserti32x4(pixels, _mm_unpacklo_epi64(CIMAGO_PAIR(6), CIMAGO_PAIR(7)), 3);
#undef CIMAGO_PAIR
        const __m512i w = _mm512_loadu_si512((const void *)(weights + x * 2));
        __m512i even = _mm512_mullo_epi32(_mm512_shuffle_epi8(pixels, e0), _mm512_shuffle_epi32(w, _MM_PERM_AAAA));
        even = _mm512_add_epi32(
            even, _mm512_mullo_epi32(_mm512_shuffle_epi8(pixels, e1), _mm512_shuffle_epi32(w, _MM_PERM_BBBB)));
        __m512i odd = _mm512_mullo_epi32(_mm512_shuffle_epi8(pixels, o0), _mm512_shuffle_epi32(w, _MM_PERM_CCCC));
        odd = _mm512_add_epi32(
            odd, _mm512_mullo_epi32(_mm512_shuffle_epi8(pixels, o1), _mm512_shuffle_epi32(w, _MM_PERM_DDDD)));
        even = _mm512_mask_blend_epi32(0x8888, _mm512_srli_epi32(_mm512_add_epi32(even, half), 14), alpha);
        odd = _mm512_mask_blend_epi32(0x8888, _mm512_srli_epi32(_mm512_add_epi32(odd, half), 14), alpha);
        // Values ≤ 65,280: the unsigned saturating pack keeps them; per lane output 2m's channels, then 2m+1's.
        _mm512_storeu_si512((void *)(row + x * 4), _mm512_packus_epi32(even, odd));
    }
    horizontal512(src, starts + x, weights + x * 2, 2, width - x, row + x * 4);
}

CIMAGO_AVX512 CIMAGO_NOINLINE static void horizontal512_any(
    const uint8_t *src, const long *starts, const uint32_t *weights, long taps, long width, uint16_t *row) {
    switch (taps) {
    case 1: horizontal512(src, starts, weights, 1, width, row); break;
    case 2: horizontal512_two(src, starts, weights, width, row); break;
    case 3: horizontal512(src, starts, weights, 3, width, row); break;
    case 4: horizontal512(src, starts, weights, 4, width, row); break;
    default: horizontal512(src, starts, weights, taps, width, row); break;
    }
}

/// A gray row's pass-1 layout, made once a resample: each output's first tap as a 32-bit byte offset, and the
/// weights tap-major (`weights[k × width + x]`), so that eight outputs' weights of one tap are one load.
typedef struct {
    int32_t *starts;
    uint32_t *weights;
    /// Outputs before this one take the vector step: their four gathered bytes end inside the source row.
    long vector_end;
} gray_layout;

/// Pass 1 for one gray source row from output pixel `x` on, one output at a time (the vector step's tail, and
/// every output of a table with more than four taps).
CIMAGO_INLINE void horizontal_gray_tail(
    const uint8_t *src, const long *starts, const uint32_t *weights, long taps, long x, long width, uint16_t *row) {
    for (; x < width; x++) {
        const uint8_t *p = src + starts[x];
        const uint32_t *w = weights + x * taps;
        uint32_t sum = 0;
        for (long k = 0; k < taps; k++) sum += (uint32_t)p[k] * w[k];
        row[x] = (uint16_t)((sum + (1u << 13)) >> 14);
    }
}

/// Pass 1 for one gray source row, eight output pixels a step: one gather brings the four bytes from each output's
/// first tap, and tap `k`'s byte is that word shifted right by 8k; `TAPS` (1…4) a constant, so the loop unrolls.
CIMAGO_INLINE CIMAGO_AVX2 void horizontal_gray(
    const uint8_t *src, const long *starts, const uint32_t *weights, long taps, long width, const gray_layout *layout,
    uint16_t *row) {
    const __m256i half = _mm256_set1_epi32(1 << 13);
    const __m256i byte = _mm256_set1_epi32(0xFF);
    long x = 0;
    for (; x + 8 <= layout->vector_end; x += 8) {
        const __m256i at = _mm256_loadu_si256((const __m256i *)(layout->starts + x));
        const __m256i bytes = _mm256_i32gather_epi32((const int *)src, at, 1);
        __m256i sum = _mm256_setzero_si256();
        for (long k = 0; k < taps; k++) {
            const __m256i v = _mm256_and_si256(_mm256_srli_epi32(bytes, 8 * (int)k), byte);
            const __m256i w = _mm256_loadu_si256((const __m256i *)(layout->weights + k * width + x));
            sum = _mm256_add_epi32(sum, _mm256_mullo_epi32(v, w));
        }
        sum = _mm256_srli_epi32(_mm256_add_epi32(sum, half), 14);
        // Values ≤ 255 << 8: the unsigned saturating pack keeps them as they are.
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(sum, sum), 0x08);
        _mm_storeu_si128((__m128i *)(row + x), _mm256_castsi256_si128(packed));
    }
    horizontal_gray_tail(src, starts, weights, taps, x, width, row);
}

CIMAGO_AVX2 CIMAGO_NOINLINE static void horizontal_gray_any(
    const uint8_t *src, const long *starts, const uint32_t *weights, long taps, long width, const gray_layout *layout,
    uint16_t *row) {
    switch (layout->starts ? taps : 0) {
    case 1: horizontal_gray(src, starts, weights, 1, width, layout, row); break;
    case 2: horizontal_gray(src, starts, weights, 2, width, layout, row); break;
    case 3: horizontal_gray(src, starts, weights, 3, width, layout, row); break;
    case 4: horizontal_gray(src, starts, weights, 4, width, layout, row); break;
    default: horizontal_gray_tail(src, starts, weights, taps, 0, width, row); break;
    }
}

/// The layout of `horizontal_gray` for a table of at most four taps, in `block` (room for `width × (1 + taps)`
/// 32-bit values); with more taps, or a row too wide for 32-bit offsets, `starts` is NULL (one output at a time).
static gray_layout make_gray_layout(
    const long *starts, const uint32_t *weights, long taps, long width, uint32_t *block) {
    gray_layout layout = {NULL, NULL, 0};
    if (block == NULL || taps > 4 || width < 1 || starts[width - 1] + taps > INT32_MAX) return layout;
    layout.starts = (int32_t *)block;
    layout.weights = block + width;
    for (long x = 0; x < width; x++) {
        layout.starts[x] = (int32_t)starts[x];
        for (long k = 0; k < taps; k++) layout.weights[k * width + x] = weights[x * taps + k];
    }
    // The row is at least as long as the last output's taps reach; a gather reads four bytes from each start.
    const long row_end = starts[width - 1] + taps;
    while (layout.vector_end < width && starts[layout.vector_end] + 4 <= row_end) layout.vector_end++;
    return layout;
}

/// Pass 2 and the rounding to bytes for one output row, from value `i` on: 16 values a step.
CIMAGO_AVX2 CIMAGO_NOINLINE static void vertical(
    uint16_t *const *rows, const uint32_t *weights, long count, long i, long values, uint8_t *out) {
    const __m256i half = _mm256_set1_epi32(1 << 22);
    for (; i + 16 <= values; i += 16) {
        __m256i lo = _mm256_setzero_si256();
        __m256i hi = _mm256_setzero_si256();
        for (long k = 0; k < count; k++) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)(rows[k] + i));
            const __m256i w = _mm256_set1_epi32((int)weights[k]);
            lo = _mm256_add_epi32(lo, _mm256_mullo_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(v)), w));
            hi = _mm256_add_epi32(hi, _mm256_mullo_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1)), w));
        }
        lo = _mm256_srli_epi32(_mm256_add_epi32(lo, half), 23);
        hi = _mm256_srli_epi32(_mm256_add_epi32(hi, half), 23);
        // Both saturating packs clamp at 255 exactly as min(…, 255) does for these non-negative values.
        const __m256i words = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
        const __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
        _mm_storeu_si128((__m128i *)(out + i), bytes);
    }
    for (; i < values; i++) {
        uint32_t sum = 0;
        for (long k = 0; k < count; k++) sum += (uint32_t)rows[k][i] * weights[k];
        sum = (sum + (1u << 22)) >> 23;
        out[i] = (uint8_t)(sum > 255 ? 255 : sum);
    }
}

/// `vertical` 32 values a step (the rest by `vertical`).
CIMAGO_AVX512 CIMAGO_NOINLINE static void vertical512(
    uint16_t *const *rows, const uint32_t *weights, long count, long values, uint8_t *out) {
    const __m512i half = _mm512_set1_epi32(1 << 22);
    long i = 0;
    for (; i + 32 <= values; i += 32) {
        __m512i lo = _mm512_setzero_si512();
        __m512i hi = _mm512_setzero_si512();
        for (long k = 0; k < count; k++) {
            const __m512i v = _mm512_loadu_si512((const void *)(rows[k] + i));
            const __m512i w = _mm512_set1_epi32((int)weights[k]);
            lo = _mm512_add_epi32(lo, _mm512_mullo_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(v)), w));
            hi = _mm512_add_epi32(hi, _mm512_mullo_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(v, 1)), w));
        }
        lo = _mm512_srli_epi32(_mm512_add_epi32(lo, half), 23);
        hi = _mm512_srli_epi32(_mm512_add_epi32(hi, half), 23);
        // The unsigned saturating narrowing clamps at 255 exactly as min(…, 255) does.
        _mm_storeu_si128((__m128i *)(out + i), _mm512_cvtusepi32_epi8(lo));
        _mm_storeu_si128((__m128i *)(out + i + 16), _mm512_cvtusepi32_epi8(hi));
    }
    vertical(rows, weights, count, i, values, out);
}

/// `sums` (+)= `row` × `weight` for values `i` to `values` (pass 2 one source row at a time, for rows of more
/// than two taps, whose rows would not all fit in the two slots at once).
CIMAGO_AVX2 CIMAGO_NOINLINE static void accumulate(
    uint32_t *sums, const uint16_t *row, uint32_t weight, long i, long values, int first) {
    const __m256i w = _mm256_set1_epi32((int)weight);
    for (; i + 8 <= values; i += 8) {
        __m256i v = _mm256_mullo_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(row + i))), w);
        if (!first) v = _mm256_add_epi32(v, _mm256_loadu_si256((const __m256i *)(sums + i)));
        _mm256_storeu_si256((__m256i *)(sums + i), v);
    }
    for (; i < values; i++) sums[i] = (first ? 0 : sums[i]) + (uint32_t)row[i] * weight;
}

/// `accumulate` 16 values a step.
CIMAGO_AVX512 CIMAGO_NOINLINE static void accumulate512(uint32_t *sums, const uint16_t *row, uint32_t weight, long values, int first) {
    const __m512i w = _mm512_set1_epi32((int)weight);
    long i = 0;
    for (; i + 16 <= values; i += 16) {
        __m512i v = _mm512_mullo_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(row + i))), w);
        if (!first) v = _mm512_add_epi32(v, _mm512_loadu_si512((const void *)(sums + i)));
        _mm512_storeu_si512((void *)(sums + i), v);
    }
    accumulate(sums, row, weight, i, values, first);
}

/// The sums of pass 2 to bytes from value `i` on, rounded to nearest: `min((sum + 2²²) >> 23, 255)`.
CIMAGO_AVX2 CIMAGO_NOINLINE static void finish(const uint32_t *sums, long i, long values, uint8_t *out) {
    const __m256i half = _mm256_set1_epi32(1 << 22);
    for (; i + 16 <= values; i += 16) {
        const __m256i lo = _mm256_srli_epi32(_mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(sums + i)), half), 23);
        const __m256i hi =
            _mm256_srli_epi32(_mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(sums + i + 8)), half), 23);
        const __m256i words = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
        _mm_storeu_si128(
            (__m128i *)(out + i), _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1)));
    }
    for (; i < values; i++) {
        const uint32_t v = (sums[i] + (1u << 22)) >> 23;
        out[i] = (uint8_t)(v > 255 ? 255 : v);
    }
}

/// `finish` 16 values a step with one narrowing store.
CIMAGO_AVX512 CIMAGO_NOINLINE static void finish512(const uint32_t *sums, long values, uint8_t *out) {
    const __m512i half = _mm512_set1_epi32(1 << 22);
    long i = 0;
    for (; i + 16 <= values; i += 16) {
        const __m512i v = _mm512_srli_epi32(_mm512_add_epi32(_mm512_loadu_si512((const void *)(sums + i)), half), 23);
        _mm_storeu_si128((__m128i *)(out + i), _mm512_cvtusepi32_epi8(v));
    }
    finish(sums, i, values, out);
}

/// The rows of both passes; `wide` (a constant) picks the AVX-512 steps, `channels` 4 (opaque RGBA) or 1 (gray).
CIMAGO_INLINE void resample_rows(
    int wide, long channels, const uint8_t *src, size_t src_stride, uint8_t *dst, long width, long height,
    const long *h_starts, const uint32_t *h_weights, long h_taps, const long *v_starts, const long *v_counts,
    const long *v_offsets, const uint32_t *v_weights, uint16_t *scratch, uint32_t *sums) {
    const long values = width * channels;
    gray_layout layout = {NULL, NULL, 0};
    uint32_t *block = NULL;
    if (channels == 1) {
        // Bounded by the output width and the table's taps (at most 4 here): (1 + 4) × width 32-bit values.
        if (h_taps <= 4) block = malloc((size_t)width * (size_t)(1 + h_taps) * sizeof(uint32_t));
        layout = make_gray_layout(h_starts, h_weights, h_taps, width, block);
    }
    long held[2] = {-1, -1};  // the source row each slot holds (slot = row parity)
    for (long y = 0; y < height; y++) {
        const long first = v_starts[y];
        const long count = v_counts[y];
        const uint32_t *weights = v_weights + v_offsets[y];
        uint8_t *out = dst + (size_t)y * (size_t)values;
        uint16_t *rows[2];
        for (long k = 0; k < count; k++) {
            const long source = first + k;
            const long slot = source & 1;
            uint16_t *row = scratch + slot * values;
            if (held[slot] != source) {
                const uint8_t *line = src + (size_t)source * src_stride;
                if (channels == 1) horizontal_gray_any(line, h_starts, h_weights, h_taps, width, &layout, row);
                else if (wide) horizontal512_any(line, h_starts, h_weights, h_taps, width, row);
                else horizontal_any(line, h_starts, h_weights, h_taps, width, row);
                held[slot] = source;
            }
            // One or two taps (every enlargement, and shrinks by less than 2): both rows are held at once
            // (consecutive rows, different slots), so the sums never leave registers. More: one row at a time.
            if (count <= 2) rows[k] = row;
            else if (wide) accumulate512(sums, row, weights[k], values, k == 0);
            else accumulate(sums, row, weights[k], 0, values, k == 0);
        }
        if (count <= 2) {
            if (wide) vertical512(rows, weights, count, values, out);
            else vertical(rows, weights, count, 0, values, out);
        } else {
            if (wide) finish512(sums, values, out);
            else finish(sums, 0, values, out);
        }
    }
    free(block);
}

CIMAGO_AVX2 CIMAGO_NOINLINE static void resample_avx2(
    long channels, const uint8_t *src, size_t src_stride, uint8_t *dst, long width, long height,
    const long *h_starts, const uint32_t *h_weights, long h_taps, const long *v_starts, const long *v_counts,
    const long *v_offsets, const uint32_t *v_weights, uint16_t *scratch, uint32_t *sums) {
    resample_rows(
        0, channels, src, src_stride, dst, width, height, h_starts, h_weights, h_taps, v_starts, v_counts, v_offsets,
        v_weights, scratch, sums);
}

CIMAGO_AVX512 CIMAGO_NOINLINE static void resample_avx512(
    long channels, const uint8_t *src, size_t src_stride, uint8_t *dst, long width, long height,
    const long *h_starts, const uint32_t *h_weights, long h_taps, const long *v_starts, const long *v_counts,
    const long *v_offsets, const uint32_t *v_weights, uint16_t *scratch, uint32_t *sums) {
    resample_rows(
        1, channels, src, src_stride, dst, width, height, h_starts, h_weights, h_taps, v_starts, v_counts, v_offsets,
        v_weights, scratch, sums);
}

int cimago_resample_kernel_variants(void) {
    if (!__builtin_cpu_supports("avx2")) return 0;
    const int wide = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512vl");
    return CIMAGO_RESAMPLE_KERNEL_AVX2 | (wide ? CIMAGO_RESAMPLE_KERNEL_AVX512 : 0);
}

int cimago_resample_narrow_variant(
    int variant, long channels, const uint8_t *src, size_t src_stride, uint8_t *dst, long width, long height,
    const long *h_starts, const uint32_t *h_weights, long h_taps, const long *v_starts, const long *v_counts,
    const long *v_offsets, const uint32_t *v_weights, uint16_t *scratch, uint32_t *sums) {
    if (channels != 1 && channels != 4) return 0;
    const int variants = cimago_resample_kernel_variants();
    if (variant == CIMAGO_RESAMPLE_KERNEL_AVX512 && (variants & CIMAGO_RESAMPLE_KERNEL_AVX512)) {
        resample_avx512(
            channels, src, src_stride, dst, width, height, h_starts, h_weights, h_taps, v_starts, v_counts, v_offsets,
            v_weights, scratch, sums);
        return 1;
    }
    if (variant == CIMAGO_RESAMPLE_KERNEL_AVX2 && (variants & CIMAGO_RESAMPLE_KERNEL_AVX2)) {
        resample_avx2(
            channels, src, src_stride, dst, width, height, h_starts, h_weights, h_taps, v_starts, v_counts, v_offsets,
            v_weights, scratch, sums);
        return 1;
    }
    return 0;
}

int cimago_resample_kernel_available(void) { return cimago_resample_kernel_variants() != 0; }

int cimago_resample_narrow(
    long channels, const uint8_t *src, size_t src_stride, uint8_t *dst, long width, long height,
    const long *h_starts, const uint32_t *h_weights, long h_taps, const long *v_starts, const long *v_counts,
    const long *v_offsets, const uint32_t *v_weights, uint16_t *scratch, uint32_t *sums) {
    const int variants = cimago_resample_kernel_variants();
    const int variant = (variants & CIMAGO_RESAMPLE_KERNEL_AVX512) ? CIMAGO_RESAMPLE_KERNEL_AVX512 : variants;
    return cimago_resample_narrow_variant(
        variant, channels, src, src_stride, dst, width, height, h_starts, h_weights, h_taps, v_starts, v_counts,
        v_offsets, v_weights, scratch, sums);
}

#else

int cimago_resample_kernel_variants(void) { return 0; }

int cimago_resample_kernel_available(void) { return 0; }

int cimago_resample_narrow_variant(
    int variant, long channels, const uint8_t *src, size_t src_stride, uint8_t *dst, long width, long height,
    const long *h_starts, const uint32_t *h_weights, long h_taps, const long *v_starts, const long *v_counts,
    const long *v_offsets, const uint32_t *v_weights, uint16_t *scratch, uint32_t *sums) {
    (void)variant;
    return cimago_resample_narrow(
        channels, src, src_stride, dst, width, height, h_starts, h_weights, h_taps, v_starts, v_counts, v_offsets,
        v_weights, scratch, sums);
}

int cimago_resample_narrow(
    long channels, const uint8_t *src, size_t src_stride, uint8_t *dst, long width, long height,
    const long *h_starts, const uint32_t *h_weights, long h_taps, const long *v_starts, const long *v_counts,
    const long *v_offsets, const uint32_t *v_weights, uint16_t *scratch, uint32_t *sums) {
    (void)channels, (void)src, (void)src_stride, (void)dst, (void)width, (void)height, (void)h_starts,
        (void)h_weights, (void)h_taps, (void)v_starts, (void)v_counts, (void)v_offsets, (void)v_weights,
        (void)scratch, (void)sums;
    return 0;
}

#endif
