// The vector matrix/TRC kernels: see include/CColorKernel.h. x86-64 only (AVX-512 VBMI, with FP16 for the
// half-float kernel), chosen at run time; every other machine gets 0 from cimago_color_kernel_available and keeps
// the caller's scalar path.
#include "CColorKernel.h"

#include <math.h>
#include <string.h>

// MARK: - Half floats (portable, for the tables)

static double half_value(uint16_t bits) {
    int exponent = (bits >> 10) & 0x1F;
    double mantissa = bits & 0x3FF;
    double value = exponent == 0 ? ldexp(mantissa, -24) : ldexp(1024 + mantissa, exponent - 25);
    return (bits & 0x8000) ? -value : value;
}

/// Round to nearest (ties to even, the default rounding mode); finite values below 65504 in magnitude only.
static uint16_t half_bits(double value) {
    uint16_t sign = value < 0 ? 0x8000 : 0;
    double a = fabs(value);
    if (a < ldexp(1, -14)) return sign | (uint16_t)nearbyint(ldexp(a, 24));  // 1024 is the smallest normal
    int e;
    frexp(a, &e);  // a = f · 2^e, f in [0.5, 1)
    int exponent = e - 1;
    double m = nearbyint((ldexp(a, -exponent) - 1) * 1024);
    if (m >= 1024) {
        m = 0;
        exponent += 1;
    }
    return sign | (uint16_t)((exponent + 15) << 10) | (uint16_t)m;
}

/// The sRGB encoding (IEC 61966-2-1, lcms2's built-in sRGB curve inverted) of linear `x` in [0, 1], in levels.
static double srgb_level(double x) {
    double v = x <= 0.0031308 ? 12.92 * x : 1.055 * pow(x, 1 / 2.4) - 0.055;
    return 255 * v;
}

// MARK: - Tables

/// vpmulhrsw: (a·b + 2^14) >> 15.
static int mulhrs(int a, int b) { return (a * b + (1 << 14)) >> 15; }

/// Segment i of the 16-bit encoding (see `encode_words`): the quadratic in u through the level at the middle of
/// each 11-bit truncation step, interpolated at three Chebyshev nodes, then c0 nudged until every u of the
/// segment gives a level in 0…255 (the level is shifted into its byte unclamped).
static void prepare_words(cimago_color_tables *tables, int i) {
    int c0 = 255 * 64 + 32, c1 = 0, c2 = 0;
    if (i < 30) {
        int parity = i & 1;
        double scale = ldexp(1, (i >> 1) - 15), low = parity ? -1 : 0;
        double u[3], y[3];
        for (int k = 0; k < 3; k++) {
            u[k] = low + 0.5 - 0.5 * cos((2 * k + 1) * M_PI / 6);
            double x = scale * (1 + (u[k] + ldexp(1, -12) + 2 * parity) / 2);
            y[k] = 64 * srgb_level(x) + 32;
        }
        double f01 = (y[1] - y[0]) / (u[1] - u[0]), f12 = (y[2] - y[1]) / (u[2] - u[1]);
        double f012 = (f12 - f01) / (u[2] - u[0]);
        c2 = (int)lround(f012);
        c1 = (int)lround(f01 - f012 * (u[0] + u[1]));
        c0 = (int)lround(y[0] - f01 * u[0] + f012 * u[0] * u[1]);
        for (int round = 0; round < 64; round++) {
            int lowest = 1 << 20, highest = -(1 << 20);
            for (int step = 0; step < 2048; step++) {
                int u15 = (parity ? -32768 : 0) + 16 * step;
                int v = (c0 + mulhrs(u15, c1 + mulhrs(u15, c2))) >> 6;
                lowest = v < lowest ? v : lowest;
                highest = v > highest ? v : highest;
            }
            if (highest > 255) c0 -= 1;
            else if (lowest < 0) c0 += 1;
            else break;
        }
    }
    tables->encode_words[0][i] = (int16_t)c0;
    tables->encode_words[1][i] = (int16_t)c1;
    tables->encode_words[2][i] = (int16_t)c2;
}

/// The single-precision kernel's matrix and its encoding's 16-bit segments (see `encode_words`).
static void prepare_single(cimago_color_tables *tables, const double *matrix) {
    for (int i = 0; i < 9; i++) tables->matrix_single[i] = (float)matrix[i];
    for (int i = 0; i < 32; i++) prepare_words(tables, i);
}

int cimago_color_kernel_prepare(cimago_color_tables *tables, const float *curves, const double *matrix) {
    if (!cimago_color_kernel_available()) return 0;
    memset(tables, 0, sizeof *tables);
    for (int c = 0; c < 3; c++) {
        for (int i = 0; i < 256; i++) {
            float v = curves[c * 256 + i];
            if (!(v >= -16 && v <= 16)) return 0;
            uint16_t bits = half_bits(v);
            tables->linear_low[c][i] = (uint8_t)(bits & 0xFF);
            tables->linear_high[c][i] = (uint8_t)(bits >> 8);
        }
    }
    tables->same_curves = memcmp(tables->linear_low[0], tables->linear_low[1], 256) == 0
        && memcmp(tables->linear_low[0], tables->linear_low[2], 256) == 0
        && memcmp(tables->linear_high[0], tables->linear_high[1], 256) == 0
        && memcmp(tables->linear_high[0], tables->linear_high[2], 256) == 0;
    float largest = 0;
    for (int c = 0; c < 3; c++) {
        for (int i = 0; i < 256; i++) largest = curves[c * 256 + i] > largest ? curves[c * 256 + i] : largest;
    }
    tables->clamps_top = 0;
    for (int i = 0; i < 9; i++) {
        if (!(matrix[i] >= -16 && matrix[i] <= 16)) return 0;
        tables->matrix[i] = half_bits(matrix[i] - (i % 4 == 0 ? 1 : 0));  // D = matrix − identity
    }
    // Linear sRGB below 2 falls in segments 30 and 31 (the value 1.0, i.e. level 255) without a clamp; a larger
    // value would wrap around the 32 segments, so the kernel clamps when a row's positive entries can reach 1.9.
    for (int r = 0; r < 3; r++) {
        double reach = 0;
        for (int j = 0; j < 3; j++) reach += matrix[3 * r + j] > 0 ? matrix[3 * r + j] * largest : 0;
        if (reach > 1.9) tables->clamps_top = 1;
    }
    // Segment i holds the half floats whose bits are i·512 … i·512 + 511: two an octave, [0, 1) in 30 segments;
    // 30 and 31 hold 1.0, the clamped top. 32 segments make each coefficient one `vpermb` from a single 64-byte
    // table (low bytes, then high bytes); 64 would need two-table permutes, three µops each.
    for (int i = 0; i < 32; i++) {
        // Below 2^-14 (segments 0 and 1, the subnormals) the level is under 0.21, so 0.
        double c0 = i < 2 ? -128 : 127, c1 = 0, c2 = 0;
        if (i >= 2 && i < 30) {
            // In the segment, x = 2^(e − 15) · u with u the mantissa in [1, 2) (`vgetmantph`), u in [1, 1.5) for an
            // even segment and [1.5, 2) for an odd one.
            double scale = half_value((uint16_t)((i >> 1) << 10)), low = 1 + 0.5 * (i & 1);
            // Interpolation at the three Chebyshev nodes of the half-interval: close to the best quadratic.
            double u[3], y[3];
            for (int k = 0; k < 3; k++) {
                u[k] = low + 0.25 - 0.25 * cos((2 * k + 1) * M_PI / 6);
                y[k] = srgb_level(scale * u[k]) - 128;
            }
            // Newton's divided differences, expanded to c0 + c1·u + c2·u².
            double f01 = (y[1] - y[0]) / (u[1] - u[0]), f12 = (y[2] - y[1]) / (u[2] - u[1]);
            double f012 = (f12 - f01) / (u[2] - u[0]);
            c2 = f012;
            c1 = f01 - f012 * (u[0] + u[1]);
            c0 = y[0] - f01 * u[0] + f012 * u[0] * u[1];
        }
        tables->encode[0][i] = half_bits(c0);
        tables->encode[1][i] = half_bits(c1);
        tables->encode[2][i] = half_bits(c2);
    }
    prepare_single(tables, matrix);
    int variants = cimago_color_kernel_variants(), near_identity = 1;
    for (int i = 0; i < 9; i++) {
        if (fabs(matrix[i] - (i % 4 == 0 ? 1 : 0)) > 0.5) near_identity = 0;
    }
    tables->variant = (variants & CIMAGO_COLOR_KERNEL_HALF) && near_identity ? CIMAGO_COLOR_KERNEL_HALF
                                                                             : CIMAGO_COLOR_KERNEL_SINGLE;
    return (variants & tables->variant) ? 1 : 0;
}

#if defined(__x86_64__)
#include <immintrin.h>

#define CIMAGO_KERNEL_TARGET \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi,avx512fp16"), always_inline)) static inline

/// What the single-precision kernel needs (a subset of CIMAGO_KERNEL_TARGET, so its helpers inline into both).
#define CIMAGO_SINGLE_TARGET \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi"), always_inline)) static inline

int cimago_color_kernel_variants(void) {
    __builtin_cpu_init();
    if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
            && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")
            && __builtin_cpu_supports("avx512vbmi")))
        return 0;
    return CIMAGO_COLOR_KERNEL_SINGLE | (__builtin_cpu_supports("avx512fp16") ? CIMAGO_COLOR_KERNEL_HALF : 0);
}

int cimago_color_kernel_available(void) { return cimago_color_kernel_variants() != 0; }

/// A 256-entry byte table (four registers) applied to every byte of `index`; `high` is the top bit of each byte.
CIMAGO_SINGLE_TARGET __m512i lookup_bytes(__m512i index, __mmask64 high, const __m512i table[4]) {
    __m512i low_half = _mm512_permutex2var_epi8(table[0], index, table[1]);
    __m512i high_half = _mm512_permutex2var_epi8(table[2], index, table[3]);
    return _mm512_mask_blend_epi8(high, low_half, high_half);
}

/// One channel's 64 levels → its linear values as two vectors of 32 half floats (in `unpack` order).
CIMAGO_KERNEL_TARGET void linearise(
    __m512i levels, const __m512i low[4], const __m512i high[4], __m512h *first, __m512h *second) {
    __mmask64 top = _mm512_movepi8_mask(levels);
    __m512i l = lookup_bytes(levels, top, low);
    __m512i h = lookup_bytes(levels, top, high);
    *first = _mm512_castsi512_ph(_mm512_unpacklo_epi8(l, h));
    *second = _mm512_castsi512_ph(_mm512_unpackhi_epi8(l, h));
}

typedef struct {
    __m512i c0, c1, c2;
} encode_tables;

/// 32 linear sRGB values → sRGB levels − 128 as 16-bit integers.
CIMAGO_KERNEL_TARGET __m512i encode(__m512h x, const encode_tables *t, __m512i segment_bits, int clamps_top) {
    __m512i bits = _mm512_castph_si512(x);
    // Negative values (sign bit set) are negative as integers; 0x3C00 is 1.0.
    bits = _mm512_max_epi16(bits, _mm512_setzero_si512());
    if (clamps_top) bits = _mm512_min_epi16(bits, _mm512_set1_epi16(0x3C00));
    // Each word's segment (bits 9…14) into both of its bytes, + 32 in the high byte: the indexes of the
    // coefficient's low and high bytes in the tables (`vpermb` reads 6 bits of each index byte).
    __m512i index = _mm512_or_si512(_mm512_multishift_epi64_epi8(segment_bits, bits), _mm512_set1_epi16(0x2000));
    __m512h u = _mm512_getmant_ph(_mm512_castsi512_ph(bits), _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
    __m512h c0 = _mm512_castsi512_ph(_mm512_permutexvar_epi8(index, t->c0));
    __m512h c1 = _mm512_castsi512_ph(_mm512_permutexvar_epi8(index, t->c1));
    __m512h c2 = _mm512_castsi512_ph(_mm512_permutexvar_epi8(index, t->c2));
    __m512h y = _mm512_fmadd_ph(_mm512_fmadd_ph(u, c2, c1), u, c0);
    return _mm512_cvtph_epi16(y);
}

typedef struct {
    __m512i low[3][4], high[3][4];
    __m512h m[9];
    encode_tables encode;
    /// In each 128-bit lane, a pixel group's 4 reds, 4 greens, 4 blues, 4 alphas (`vpshufb`).
    __m512i gather;
    /// For `vpmultishiftqb`: both bytes of word w take the qword's bits 16w + 9 … 16w + 16.
    __m512i segment_bits;
} kernel_state;

/// Converts the `n` × 64 pixels at `p` (`n` is 1 or 2, a constant after inlining: two independent blocks give the
/// out-of-order core a second dependency chain to interleave, ~5 % faster than one at a time). Every loop is
/// unrolled by pragma: left to itself, clang kept the channel loop of the pair as a loop, with the linear values
/// and results going through the stack.
///
/// The channel planes are not in pixel order: lane L of a plane holds, at offset 4k + d, pixel 16k + 4L + d (a
/// 4 × 4 transpose of 4-pixel groups between the lanes and the 4 input registers). In that order, splitting and
/// rejoining are in-lane shuffles and unpacks (one µop each, no index registers), where pixel-order planes need
/// two-table byte permutes (three µops each, two of them on port 5) and eight index registers that pushed the
/// tables out of the 32 vector registers.
CIMAGO_KERNEL_TARGET void convert_blocks(const kernel_state *s, uint8_t *p, const __m512i *const lows[3],
    const __m512i *const highs[3], int clamps_top, int n) {
    __m512i plane[2][3];
    #pragma unroll
    for (int j = 0; j < n; j++) {
        __m512i grouped[4];
        #pragma unroll
        for (int k = 0; k < 4; k++)
            grouped[k] = _mm512_shuffle_epi8(_mm512_loadu_si512(p + 256 * j + 64 * k), s->gather);
        // Lane by lane: [R0 R1 G0 G1], [R2 R3 G2 G3], [B0 B1 A0 A1], [B2 B3 A2 A3] (4-byte groups of register k),
        // then the planes [R0 R1 R2 R3], [G0 G1 G2 G3], [B0 B1 B2 B3].
        __m512i rg01 = _mm512_unpacklo_epi32(grouped[0], grouped[1]);
        __m512i rg23 = _mm512_unpacklo_epi32(grouped[2], grouped[3]);
        __m512i ba01 = _mm512_unpackhi_epi32(grouped[0], grouped[1]);
        __m512i ba23 = _mm512_unpackhi_epi32(grouped[2], grouped[3]);
        plane[j][0] = _mm512_unpacklo_epi64(rg01, rg23);
        plane[j][1] = _mm512_unpackhi_epi64(rg01, rg23);
        plane[j][2] = _mm512_unpacklo_epi64(ba01, ba23);
    }
    __m512h linear[2][3][2];
    #pragma unroll
    for (int c = 0; c < 3; c++) {
        #pragma unroll
        for (int j = 0; j < n; j++) linearise(plane[j][c], lows[c], highs[c], &linear[j][c][0], &linear[j][c][1]);
    }
    __m512i out[2][3];
    #pragma unroll
    for (int c = 0; c < 3; c++) {
        __m512i half[2][2];
        #pragma unroll
        for (int h = 0; h < 2; h++) {
            #pragma unroll
            for (int j = 0; j < n; j++) {
                // The matrix as identity + D: x = l_c + Σ D_cj·l_j, the diagonal term last. D's entries are small
                // for the usual sources (Display P3, Adobe RGB), so their half-float rounding costs far less than
                // the full matrix's would; and where the result is near black by cancellation, l_c + the
                // off-diagonal terms is already small (−D_cc·l_c), so the partial sums round finely.
                int j1 = (c + 1) % 3, j2 = (c + 2) % 3;
                __m512h x = _mm512_fmadd_ph(linear[j][j1][h], s->m[3 * c + j1], linear[j][c][h]);
                x = _mm512_fmadd_ph(linear[j][j2][h], s->m[3 * c + j2], x);
                x = _mm512_fmadd_ph(linear[j][c][h], s->m[3 * c + c], x);
                half[j][h] = encode(x, &s->encode, s->segment_bits, clamps_top);
            }
        }
        // −128…127 → bytes, back in plane order (packs undoes unpack lane by lane), then + 128.
        #pragma unroll
        for (int j = 0; j < n; j++) {
            out[j][c] = _mm512_xor_si512(_mm512_packs_epi16(half[j][0], half[j][1]), _mm512_set1_epi8((char)0x80));
        }
    }
    #pragma unroll
    for (int j = 0; j < n; j++) {
        // The inverse of the split: R G pairs, B B pairs (the second B in alpha's place, not stored), then 4-byte
        // pixels, register k taking plane offsets 4k … 4k + 3 of every lane.
        __m512i rg_low = _mm512_unpacklo_epi8(out[j][0], out[j][1]);
        __m512i rg_high = _mm512_unpackhi_epi8(out[j][0], out[j][1]);
        __m512i bb_low = _mm512_unpacklo_epi8(out[j][2], out[j][2]);
        __m512i bb_high = _mm512_unpackhi_epi8(out[j][2], out[j][2]);
        __m512i rgb[4] = {
            _mm512_unpacklo_epi16(rg_low, bb_low), _mm512_unpackhi_epi16(rg_low, bb_low),
            _mm512_unpacklo_epi16(rg_high, bb_high), _mm512_unpackhi_epi16(rg_high, bb_high),
        };
        // Alpha is left in memory (a masked store), so the input registers need not live through the block.
        const __mmask64 colour = 0x7777777777777777ULL;
        #pragma unroll
        for (int k = 0; k < 4; k++) _mm512_mask_storeu_epi8(p + 256 * j + 64 * k, colour, rgb[k]);
    }
}

CIMAGO_KERNEL_TARGET void load_state(kernel_state *s, const cimago_color_tables *t) {
    for (int c = 0; c < 3; c++) {
        for (int q = 0; q < 4; q++) {
            s->low[c][q] = _mm512_loadu_si512(t->linear_low[c] + 64 * q);
            s->high[c][q] = _mm512_loadu_si512(t->linear_high[c] + 64 * q);
        }
    }
    for (int i = 0; i < 9; i++) s->m[i] = _mm512_castsi512_ph(_mm512_set1_epi16((short)t->matrix[i]));
    uint8_t coefficients[3][64];
    for (int c = 0; c < 3; c++) {
        for (int i = 0; i < 32; i++) {
            coefficients[c][i] = (uint8_t)(t->encode[c][i] & 0xFF);
            coefficients[c][32 + i] = (uint8_t)(t->encode[c][i] >> 8);
        }
    }
    s->encode.c0 = _mm512_loadu_si512(coefficients[0]);
    s->encode.c1 = _mm512_loadu_si512(coefficients[1]);
    s->encode.c2 = _mm512_loadu_si512(coefficients[2]);
    uint8_t segment_bits[64];
    for (int i = 0; i < 64; i++) segment_bits[i] = (uint8_t)(16 * (i % 8 / 2) + 9);
    s->segment_bits = _mm512_loadu_si512(segment_bits);
    uint8_t gather[64];
    for (int i = 0; i < 64; i++) gather[i] = (uint8_t)(4 * (i % 16 % 4) + i % 16 / 4);  // in-lane byte indexes
    s->gather = _mm512_loadu_si512(gather);
}

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi,avx512fp16")))
static void convert_avx512(const cimago_color_tables *tables, uint8_t *rgba, size_t count) {
    kernel_state s;
    load_state(&s, tables);
    const __m512i *const shared_low[3] = {s.low[0], s.low[0], s.low[0]};
    const __m512i *const shared_high[3] = {s.high[0], s.high[0], s.high[0]};
    const __m512i *const own_low[3] = {s.low[0], s.low[1], s.low[2]};
    const __m512i *const own_high[3] = {s.high[0], s.high[1], s.high[2]};
    size_t blocks = count / 64, b = 0;
    // Prefetching 8 KB ahead overlaps the memory stream with the arithmetic when the pixels are not in cache
    // (a whole decoded image): 12 MP took 0.65 instead of 1.0 ns a pixel. A prefetch never faults, past the end
    // included.
    if (tables->same_curves && !tables->clamps_top) {
        for (; b + 2 <= blocks; b += 2) {
            for (int q = 0; q < 8; q++) _mm_prefetch((const char *)rgba + 256 * b + 8192 + 64 * q, _MM_HINT_T0);
            convert_blocks(&s, rgba + 256 * b, shared_low, shared_high, 0, 2);
        }
    } else {
        for (; b + 2 <= blocks; b += 2) {
            for (int q = 0; q < 8; q++) _mm_prefetch((const char *)rgba + 256 * b + 8192 + 64 * q, _MM_HINT_T0);
            convert_blocks(&s, rgba + 256 * b, own_low, own_high, 1, 2);
        }
    }
    if (b < blocks) convert_blocks(&s, rgba + 256 * b, own_low, own_high, 1, 1);
    size_t rest = count - 64 * blocks;
    if (rest) {
        uint8_t tail[256] = {0};
        memcpy(tail, rgba + 256 * blocks, 4 * rest);
        convert_blocks(&s, tail, own_low, own_high, 1, 1);
        memcpy(rgba + 256 * blocks, tail, 4 * rest);
    }
}

// MARK: - Single precision (AVX-512 without FP16)
//
// Written for AMD Zen 4/5, which have AVX-512 VBMI but no FP16. There permutes, multiplies and FMAs share two
// pipes and bound the loop, so after the matrix (16 floats a vector) the encoding runs on 32 16-bit words a step:
// one `vpermw` a coefficient and `vpmulhrsw` products, half the look-ups and products a value of a float
// encoding (`vpermt2ps`, FMAs). Pixels stay in order (no planes): every byte of 16 RGBA pixels goes through the
// linearisation tables at once, and two `vpermt2b` gather the red, green and blue half floats.

typedef struct {
    __m512i low[3][4], high[3][4];
    /// The matrix as scalars: the compiler broadcasts them from memory, which leaves the registers to the tables.
    float m[9];
    /// The encoding's coefficients as 16-bit words, one 32-entry table a register (`vpermw`).
    __m512i c0, c1, c2;
    /// `vpermt2b` indexes over (low bytes, high bytes) of 16 pixels: the red half floats in words 0…15 and the
    /// green ones in words 16…31; the blue ones in words 0…15.
    __m512i red_green, blue;
    /// `vpmultishiftqb` control: bits 11…26 of each dword into both of its words.
    __m512i key_bits;
} single_state;

/// The encoding key of 32 linear sRGB values (two vectors of 16): bits 11…26 of each float's bits once clamped to
/// [2^-15, 2), in 16-bit words, `a`'s value k in word 2k and `b`'s in word 2k + 1.
CIMAGO_SINGLE_TARGET __m512i encoding_key(__m512 a, __m512 b, const single_state *s, int clamps_top) {
    // Below 2^-15 (level 0.1) and negative values (negative as integers) take 2^-15's segment.
    const __m512i floor = _mm512_set1_epi32(0x38000000), one = _mm512_set1_epi32(0x3F800000);
    __m512i x = _mm512_max_epi32(_mm512_castps_si512(a), floor), y = _mm512_max_epi32(_mm512_castps_si512(b), floor);
    if (clamps_top) {
        x = _mm512_min_epi32(x, one);
        y = _mm512_min_epi32(y, one);
    }
    return _mm512_mask_blend_epi16(
        0xAAAAAAAA, _mm512_multishift_epi64_epi8(s->key_bits, x), _mm512_multishift_epi64_epi8(s->key_bits, y));
}

/// 32 encoding keys → sRGB levels 0…255 in 16-bit words. Segment = key bits 11…15 (float bits 22…26: two
/// segments an octave); u = key << 4 as a signed Q15 number: the 11 mantissa bits below the segment's, minus 1 in
/// odd segments (float bit 22 lands in the sign bit). Level · 64 + 32 ≈ c0 + u·(c1 + u·c2) in Q15 products.
CIMAGO_SINGLE_TARGET __m512i encode_key(__m512i key, const single_state *s) {
    __m512i segment = _mm512_srli_epi16(key, 11), u = _mm512_slli_epi16(key, 4);
    __m512i c2 = _mm512_permutexvar_epi16(segment, s->c2);
    __m512i c1 = _mm512_permutexvar_epi16(segment, s->c1);
    __m512i c0 = _mm512_permutexvar_epi16(segment, s->c0);
    __m512i y = _mm512_add_epi16(c0, _mm512_mulhrs_epi16(u, _mm512_add_epi16(c1, _mm512_mulhrs_epi16(u, c2))));
    return _mm512_srai_epi16(y, 6);
}

/// The linear values of 16 pixels as three vectors of floats.
CIMAGO_SINGLE_TARGET void linear16(const single_state *s, __m512i v, int shared, __m512 rgb[3]) {
    __mmask64 top = _mm512_movepi8_mask(v);
    // Every byte through the table (alpha's result is not used): the low and high bytes of the half floats.
    __m512i l = lookup_bytes(v, top, s->low[0]), h = lookup_bytes(v, top, s->high[0]);
    if (!shared) {
        const __mmask64 green = 0x2222222222222222ULL, blue = 0x4444444444444444ULL;
        l = _mm512_mask_mov_epi8(l, green, lookup_bytes(v, top, s->low[1]));
        h = _mm512_mask_mov_epi8(h, green, lookup_bytes(v, top, s->high[1]));
        l = _mm512_mask_mov_epi8(l, blue, lookup_bytes(v, top, s->low[2]));
        h = _mm512_mask_mov_epi8(h, blue, lookup_bytes(v, top, s->high[2]));
    }
    __m512i red_green = s->red_green, blue = s->blue;
    __asm__("" : "+v"(red_green), "+v"(blue));  // keeps clang from turning a permute into four shuffles
    __m512i rg = _mm512_permutex2var_epi8(l, red_green, h), bb = _mm512_permutex2var_epi8(l, blue, h);
    rgb[0] = _mm512_cvtph_ps(_mm512_castsi512_si256(rg));
    rgb[1] = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(rg, 1));
    rgb[2] = _mm512_cvtph_ps(_mm512_castsi512_si256(bb));
}

/// Converts the 32 pixels at `p`, or those of them inside the byte masks `first` (pixels 0…15) and `second`
/// (16…31): masked loads and stores, nothing outside them read or written. `shared` (1: the three channels use
/// table 0) and `clamps_top` are constants after inlining.
CIMAGO_SINGLE_TARGET void convert32_single(
    const single_state *s, uint8_t *p, __mmask64 first, __mmask64 second, int shared, int clamps_top) {
    __m512 a[3], b[3];
    linear16(s, _mm512_maskz_loadu_epi8(first, p), shared, a);
    linear16(s, _mm512_maskz_loadu_epi8(second, p + 64), shared, b);
    __m512i level[3];
    #pragma unroll
    for (int c = 0; c < 3; c++) {
        __m512 m0 = _mm512_set1_ps(s->m[3 * c]), m1 = _mm512_set1_ps(s->m[3 * c + 1]);
        __m512 m2 = _mm512_set1_ps(s->m[3 * c + 2]);
        __m512 x = _mm512_fmadd_ps(a[2], m2, _mm512_fmadd_ps(a[1], m1, _mm512_mul_ps(a[0], m0)));
        __m512 y = _mm512_fmadd_ps(b[2], m2, _mm512_fmadd_ps(b[1], m1, _mm512_mul_ps(b[0], m0)));
        level[c] = encode_key(encoding_key(x, y, s, clamps_top), s);
    }
    // Words: R | G << 8, pixel k of the first 16 in word 2k, of the second in word 2k + 1; then dwords with blue.
    __m512i rg = _mm512_or_si512(level[0], _mm512_slli_epi16(level[1], 8));
    __m512i out_first = _mm512_mask_blend_epi16(0xAAAAAAAA, rg, _mm512_slli_epi32(level[2], 16));
    __m512i out_second = _mm512_mask_blend_epi16(0xAAAAAAAA, _mm512_srli_epi32(rg, 16), level[2]);
    _mm512_mask_storeu_epi8(p, first & 0x7777777777777777ULL, out_first);
    _mm512_mask_storeu_epi8(p + 64, second & 0x7777777777777777ULL, out_second);
}

CIMAGO_SINGLE_TARGET void load_single(single_state *s, const cimago_color_tables *t) {
    for (int c = 0; c < 3; c++) {
        for (int q = 0; q < 4; q++) {
            s->low[c][q] = _mm512_loadu_si512(t->linear_low[c] + 64 * q);
            s->high[c][q] = _mm512_loadu_si512(t->linear_high[c] + 64 * q);
        }
    }
    for (int i = 0; i < 9; i++) s->m[i] = t->matrix_single[i];
    s->c0 = _mm512_loadu_si512(t->encode_words[0]);  // 32 words each
    s->c1 = _mm512_loadu_si512(t->encode_words[1]);
    s->c2 = _mm512_loadu_si512(t->encode_words[2]);
    uint8_t red_green[64], blue[64], key_bits[64];
    for (int w = 0; w < 32; w++) {
        int channel_byte = 4 * (w % 16) + w / 16;  // pixel w % 16, red for w < 16, green after
        red_green[2 * w] = (uint8_t)channel_byte;
        red_green[2 * w + 1] = (uint8_t)(64 + channel_byte);
        blue[2 * w] = (uint8_t)(4 * (w % 16) + 2);
        blue[2 * w + 1] = (uint8_t)(64 + 4 * (w % 16) + 2);
    }
    // Byte j of a qword takes the 8 bits from 32 · (j / 4) + 11 + 8 · (j % 2): its dword's bits 11…18 or 19…26.
    for (int i = 0; i < 64; i++) key_bits[i] = (uint8_t)(32 * (i % 8 / 4) + 11 + 8 * (i % 2));
    s->red_green = _mm512_loadu_si512(red_green);
    s->blue = _mm512_loadu_si512(blue);
    s->key_bits = _mm512_loadu_si512(key_bits);
}

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi")))
static void convert_single(const cimago_color_tables *tables, uint8_t *rgba, size_t count) {
    single_state s;
    load_single(&s, tables);
    size_t i = 0;
    const __mmask64 all = ~(__mmask64)0;
    // Two variants of the loop body, with the table choice and the top clamp as constants.
    if (tables->same_curves && !tables->clamps_top) {
        for (; i + 32 <= count; i += 32) {
            _mm_prefetch((const char *)(rgba + 4 * i) + 8192, _MM_HINT_T0);
            _mm_prefetch((const char *)(rgba + 4 * i) + 8256, _MM_HINT_T0);
            convert32_single(&s, rgba + 4 * i, all, all, 1, 0);
        }
    } else {
        for (; i + 32 <= count; i += 32) {
            _mm_prefetch((const char *)(rgba + 4 * i) + 8192, _MM_HINT_T0);
            _mm_prefetch((const char *)(rgba + 4 * i) + 8256, _MM_HINT_T0);
            convert32_single(&s, rgba + 4 * i, all, all, 0, 1);
        }
    }
    size_t rest = count - i;
    if (rest) {
        __mmask64 first = rest >= 16 ? all : ((__mmask64)1 << (4 * rest)) - 1;
        __mmask64 second = rest <= 16 ? 0 : ((__mmask64)1 << (4 * (rest - 16))) - 1;
        convert32_single(&s, rgba + 4 * i, first, second, 0, 1);
    }
}

void cimago_color_kernel_convert(const cimago_color_tables *tables, uint8_t *rgba, size_t count) {
    if (tables->variant == CIMAGO_COLOR_KERNEL_HALF) {
        convert_avx512(tables, rgba, count);
    } else {
        convert_single(tables, rgba, count);
    }
}

#else

int cimago_color_kernel_variants(void) { return 0; }

int cimago_color_kernel_available(void) { return 0; }

void cimago_color_kernel_convert(const cimago_color_tables *tables, uint8_t *rgba, size_t count) {
    (void)tables;
    (void)rgba;
    (void)count;
}

#endif
