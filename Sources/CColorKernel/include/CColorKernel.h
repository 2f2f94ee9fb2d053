#ifndef CCOLORKERNEL_H
#define CCOLORKERNEL_H

#include <stddef.h>
#include <stdint.h>

/// Tables of the vector matrix/TRC kernel (RGBA8 → RGBA8 in place, alpha untouched), filled by
/// `cimago_color_kernel_prepare`. Plain data: copy it freely; the kernel only reads it.
///
/// A pixel is linearised through two 256-entry byte tables per channel (the low and high bytes of the linear value
/// as an IEEE half float), multiplied by the 3×3 matrix in half floats, clamped to [0, 1] and encoded with the sRGB
/// curve as 32 quadratic segments indexed by the top bits of the half float (two segments an octave, so the steep
/// part near black gets as many segments as the flat part near white). All tables are in-register look-ups
/// (AVX-512 VBMI `vpermi2b`/`vpermb`): no gathers, no memory look-ups per pixel.
///
/// Without AVX-512 FP16 (or for a matrix far from the identity) the single-precision kernel takes the same
/// half-float linear values to floats (`vcvtph2ps`), applies the matrix in single precision and encodes in 16-bit
/// fixed point (`encode_words`), 32 values a step: segment look-ups by `vpermw`, products by `vpmulhrsw`.
typedef struct cimago_color_tables {
    /// Linear value of each 8-bit level, half-float bits: low bytes, then high bytes, per channel (R, G, B).
    uint8_t linear_low[3][256];
    uint8_t linear_high[3][256];
    /// The 3×3 matrix (linear source RGB → linear sRGB) minus the identity, row-major, half-float bits.
    uint16_t matrix[9];
    /// Segment coefficients c0, c1, c2 (half-float bits): for a linear sRGB value x in segment i (the top 7 bits
    /// of x's half-float bits), sRGB level − 128 ≈ c0[i] + c1[i]·u + c2[i]·u² with u the mantissa of x in [1, 2)
    /// (in [1, 1.5) for an even i, [1.5, 2) for an odd one).
    uint16_t encode[3][32];
    /// The single-precision kernel's matrix (linear source RGB → linear sRGB), row-major.
    float matrix_single[9];
    /// The single-precision kernel's encoding, in 16-bit fixed point: a linear sRGB value x, clamped to
    /// [2^-15, 2), is in segment i when bits 22…26 of its float bits are i (two segments an octave; 30 and 31 are
    /// [1, 2), level 255), and level · 64 + 32 ≈ c0 + u·(c1 + u·c2) with u the next 11 mantissa bits as a Q15
    /// fraction, minus 1 in odd segments (`encode_words[0…2][i]`; products rounded as `vpmulhrsw` does).
    int16_t encode_words[3][32];
    /// 1 when the three channels share one curve (one set of linearisation tables stays in registers).
    int32_t same_curves;
    /// 1 when a row of the matrix can reach 1.9 (the kernel then clamps values above 1; below 2 the top segments
    /// give level 255 by themselves).
    int32_t clamps_top;
    /// The kernel `cimago_color_kernel_convert` runs: `CIMAGO_COLOR_KERNEL_HALF` or `CIMAGO_COLOR_KERNEL_SINGLE`,
    /// set by `cimago_color_kernel_prepare` to the best this CPU has for the matrix; a caller may lower it to
    /// `CIMAGO_COLOR_KERNEL_SINGLE` when `cimago_color_kernel_variants` has that bit (tests do, to cover both).
    int32_t variant;
} cimago_color_tables;

/// Linearisation and matrix in half floats (AVX-512 FP16, with VBMI): the fastest, for matrices within ±0.5 of
/// the identity (Display P3, Adobe RGB).
#define CIMAGO_COLOR_KERNEL_HALF 1
/// Linear values from the same half-float tables, matrix and encoding in single precision (AVX-512 F/BW/VBMI,
/// no FP16: AMD Zen 4 and 5, Intel Ice Lake): any matrix the tables accept.
#define CIMAGO_COLOR_KERNEL_SINGLE 2

/// The kernels this CPU runs, a mask of `CIMAGO_COLOR_KERNEL_HALF` and `CIMAGO_COLOR_KERNEL_SINGLE` (0 on
/// every CPU without AVX-512 VBMI, and on every non-x86-64 machine).
int cimago_color_kernel_variants(void);

/// 1 when this CPU runs one of the vector kernels (x86-64 with AVX-512 F/BW/VBMI, with or without AVX-512 FP16);
/// 0 otherwise (the caller keeps its scalar path). Checked once per call with `__builtin_cpu_supports`.
int cimago_color_kernel_available(void);

/// Fills `tables` for the matrix/TRC conversion of RGBA8 whose channels decode with `curves` (3 × 256 linear
/// values, R then G then B, each in [0, 16]) and whose linear RGB maps to linear sRGB by the row-major 3×3
/// `matrix` (entries within ±16); the output is encoded with the IEC 61966-2-1 sRGB curve. Chooses the kernel
/// (`variant`): half floats when this CPU has them and every entry of matrix − identity is within ±0.5 (further
/// out, half-float cancellations near black lose up to 2 levels), else single precision. Returns 1 on success,
/// 0 when no kernel is available or a value is out of range.
int cimago_color_kernel_prepare(cimago_color_tables *tables, const float *curves, const double *matrix);

/// Converts `count` RGBA8 pixels at `rgba` in place with `tables`; alpha is left as it is. Only call after
/// `cimago_color_kernel_prepare` returned 1.
void cimago_color_kernel_convert(const cimago_color_tables *tables, uint8_t *rgba, size_t count);

#endif
