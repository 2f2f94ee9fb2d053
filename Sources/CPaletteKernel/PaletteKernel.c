// The nearest-colour search of Imago's colour quantizer (GIF and palette PNG output): every entry compared, 8 at a
// time with AVX2's 16-bit multiply-add, 4 with SSE2's, one by one elsewhere. See CPaletteKernel.h.
#include "CPaletteKernel.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

long cimago_palette_nearest_scalar(
    const int16_t *rg, const int16_t *bw, long count, int r, int g, int b, int w, int32_t *distance) {
    long best = 0;
    int32_t bestDistance = INT32_MAX;
    for (long i = 0; i < count; i++) {
        int32_t dr = rg[2 * i] - r, dg = rg[2 * i + 1] - g, db = bw[2 * i] - b, dw = bw[2 * i + 1] - w;
        int32_t d = dr * dr + dg * dg + db * db + dw * dw;
        if (d < bestDistance) {
            bestDistance = d;
            best = i;
        }
    }
    *distance = bestDistance;
    return best;
}

#if defined(__x86_64__)
/// Two 16-bit components as one 32-bit lane, `low` first, as the entries' pairs are laid out.
static int32_t pair(int low, int high) { return (int32_t)((uint32_t)(uint16_t)low | ((uint32_t)(uint16_t)high << 16)); }

/// The lane of `best` with the least distance, the lowest position among equals; positions in `index`.
static long lowest(const int32_t *best, const int32_t *index, int lanes, int32_t *distance) {
    long position = index[0];
    int32_t least = best[0];
    for (int lane = 1; lane < lanes; lane++) {
        if (best[lane] < least || (best[lane] == least && index[lane] < position)) {
            least = best[lane];
            position = index[lane];
        }
    }
    *distance = least;
    return position;
}

__attribute__((target("avx2"))) static long nearest_avx2(
    const int16_t *rg, const int16_t *bw, long count, int r, int g, int b, int w, int32_t *distance) {
    const __m256i qrg = _mm256_set1_epi32(pair(r, g));
    const __m256i qbw = _mm256_set1_epi32(pair(b, w));
    __m256i best = _mm256_set1_epi32(INT32_MAX);
    __m256i bestIndex = _mm256_setzero_si256();
    __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i eight = _mm256_set1_epi32(8);
    for (long i = 0; i < count; i += 8) {
        __m256i drg = _mm256_sub_epi16(_mm256_loadu_si256((const __m256i *)(rg + 2 * i)), qrg);
        __m256i dbw = _mm256_sub_epi16(_mm256_loadu_si256((const __m256i *)(bw + 2 * i)), qbw);
        __m256i d = _mm256_add_epi32(_mm256_madd_epi16(drg, drg), _mm256_madd_epi16(dbw, dbw));
        __m256i nearer = _mm256_cmpgt_epi32(best, d);
        best = _mm256_min_epi32(best, d);
        bestIndex = _mm256_blendv_epi8(bestIndex, index, nearer);
        index = _mm256_add_epi32(index, eight);
    }
    int32_t lanes[8], indices[8];
    _mm256_storeu_si256((__m256i *)lanes, best);
    _mm256_storeu_si256((__m256i *)indices, bestIndex);
    return lowest(lanes, indices, 8, distance);
}

long cimago_palette_nearest_sse2(
    const int16_t *rg, const int16_t *bw, long count, int r, int g, int b, int w, int32_t *distance) {
    const __m128i qrg = _mm_set1_epi32(pair(r, g));
    const __m128i qbw = _mm_set1_epi32(pair(b, w));
    __m128i best = _mm_set1_epi32(INT32_MAX);
    __m128i bestIndex = _mm_setzero_si128();
    __m128i index = _mm_setr_epi32(0, 1, 2, 3);
    const __m128i four = _mm_set1_epi32(4);
    for (long i = 0; i < count; i += 4) {
        __m128i drg = _mm_sub_epi16(_mm_loadu_si128((const __m128i *)(rg + 2 * i)), qrg);
        __m128i dbw = _mm_sub_epi16(_mm_loadu_si128((const __m128i *)(bw + 2 * i)), qbw);
        __m128i d = _mm_add_epi32(_mm_madd_epi16(drg, drg), _mm_madd_epi16(dbw, dbw));
        __m128i nearer = _mm_cmpgt_epi32(best, d);
        // SSE2 has neither a 32-bit min nor a variable blend: both by the mask.
        best = _mm_or_si128(_mm_and_si128(nearer, d), _mm_andnot_si128(nearer, best));
        bestIndex = _mm_or_si128(_mm_and_si128(nearer, index), _mm_andnot_si128(nearer, bestIndex));
        index = _mm_add_epi32(index, four);
    }
    int32_t lanes[4], indices[4];
    _mm_storeu_si128((__m128i *)lanes, best);
    _mm_storeu_si128((__m128i *)indices, bestIndex);
    return lowest(lanes, indices, 4, distance);
}
#endif

long cimago_palette_nearest(
    const int16_t *rg, const int16_t *bw, long count, int r, int g, int b, int w, int32_t *distance) {
#if defined(__x86_64__)
    // __builtin_cpu_supports reads what the runtime's constructor found: a load, no cache of ours to race on.
    return __builtin_cpu_supports("avx2") ? nearest_avx2(rg, bw, count, r, g, b, w, distance)
                   : cimago_palette_nearest_sse2(rg, bw, count, r, g, b, w, distance);
#else
    return cimago_palette_nearest_scalar(rg, bw, count, r, g, b, w, distance);
#endif
}

#if !defined(__x86_64__)
long cimago_palette_nearest_sse2(
    const int16_t *rg, const int16_t *bw, long count, int r, int g, int b, int w, int32_t *distance) {
    return cimago_palette_nearest_scalar(rg, bw, count, r, g, b, w, distance);
}
#endif
