#include "CResampleKernel.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

#define CIMAGO_AVX2 __attribute__((target("avx2")))

/// Pass 1 for one source row, two output pixels (eight 32-bit sums) per step; `TAPS` a constant where it is
/// known, so the tap loop unrolls.
static inline __attribute__((always_inline)) CIMAGO_AVX2 void
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

CIMAGO_AVX2 static void horizontal_any(
    const uint8_t *src, const long *starts, const uint32_t *weights, long taps, long width, uint16_t *row) {
    switch (taps) {
    case 1: horizontal(src, starts, weights, 1, width, row); break;
    case 2: horizontal(src, starts, weights, 2, width, row); break;
    case 3: horizontal(src, starts, weights, 3, width, row); break;
    case 4: horizontal(src, starts, weights, 4, width, row); break;
    default: horizontal(src, starts, weights, taps, width, row); break;
    }
}

/// Pass 2 and the rounding to bytes for one output row: 16 values a step.
CIMAGO_AVX2 static void vertical(
    uint16_t *const *rows, const uint32_t *weights, long count, long values, uint8_t *out) {
    const __m256i half = _mm256_set1_epi32(1 << 22);
    long i = 0;
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

/// `sums` (+)= `row` × `weight` for `values` values (pass 2 one source row at a time, for rows of more than two
/// taps, whose rows would not all fit in the two slots at once).
CIMAGO_AVX2 static void accumulate(uint32_t *sums, const uint16_t *row, uint32_t weight, long values, int first) {
    const __m256i w = _mm256_set1_epi32((int)weight);
    long i = 0;
    for (; i + 8 <= values; i += 8) {
        __m256i v = _mm256_mullo_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(row + i))), w);
        if (!first) v = _mm256_add_epi32(v, _mm256_loadu_si256((const __m256i *)(sums + i)));
        _mm256_storeu_si256((__m256i *)(sums + i), v);
    }
    for (; i < values; i++) sums[i] = (first ? 0 : sums[i]) + (uint32_t)row[i] * weight;
}

/// The sums of pass 2 to bytes, rounded to nearest: `min((sum + 2²²) >> 23, 255)`.
CIMAGO_AVX2 static void finish(const uint32_t *sums, long values, uint8_t *out) {
    const __m256i half = _mm256_set1_epi32(1 << 22);
    long i = 0;
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

int cimago_resample_kernel_available(void) { return __builtin_cpu_supports("avx2") ? 1 : 0; }

int cimago_resample_opaque(
    const uint8_t *src, size_t src_stride, uint8_t *dst, long width, long height, const long *h_starts,
    const uint32_t *h_weights, long h_taps, const long *v_starts, const long *v_counts, const long *v_offsets,
    const uint32_t *v_weights, uint16_t *scratch, uint32_t *sums) {
    if (!cimago_resample_kernel_available()) return 0;
    const long values = width * 4;
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
                horizontal_any(src + (size_t)source * src_stride, h_starts, h_weights, h_taps, width, row);
                held[slot] = source;
            }
            // One or two taps (every enlargement, and shrinks by less than 2): both rows are held at once
            // (consecutive rows, different slots), so the sums never leave registers. More: one row at a time.
            if (count <= 2) rows[k] = row;
            else accumulate(sums, row, weights[k], values, k == 0);
        }
        if (count <= 2) vertical(rows, weights, count, values, out);
        else finish(sums, values, out);
    }
    return 1;
}

#else

int cimago_resample_kernel_available(void) { return 0; }

int cimago_resample_opaque(
    const uint8_t *src, size_t src_stride, uint8_t *dst, long width, long height, const long *h_starts,
    const uint32_t *h_weights, long h_taps, const long *v_starts, const long *v_counts, const long *v_offsets,
    const uint32_t *v_weights, uint16_t *scratch, uint32_t *sums) {
    (void)src, (void)src_stride, (void)dst, (void)width, (void)height, (void)h_starts, (void)h_weights,
        (void)h_taps, (void)v_starts, (void)v_counts, (void)v_offsets, (void)v_weights, (void)scratch, (void)sums;
    return 0;
}

#endif
