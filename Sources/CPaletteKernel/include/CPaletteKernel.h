#ifndef CPALETTEKERNEL_H
#define CPALETTEKERNEL_H

#include <stdint.h>

/// The nearest entry of a colour map to one colour, comparing every entry: the squared distance
/// `(r - R)² + (g - G)² + (b - B)² + (w - W)²`, where `w` is the alpha already scaled by the square root of its
/// weight (0 for colours without alpha).
///
/// `rg` holds each entry's red and green and `bw` its blue and scaled alpha, interleaved (`rg[2i] = R`,
/// `rg[2i + 1] = G`), for `count` entries, a multiple of 16; entries past the real ones must be far from every
/// colour (each component 16,383, which no sum of squares overflows). Every component is 0…16,383; the colour's
/// are 0…16,383 too.
///
/// Returns the position of the nearest entry (the first of equals) and writes its distance to `distance`. Runs
/// the widest kernel this CPU has: AVX2 (x86-64 with AVX2), SSE2 (other x86-64) or plain C.
long cimago_palette_nearest(
    const int16_t *rg, const int16_t *bw, long count, int r, int g, int b, int w, int32_t *distance);

/// `cimago_palette_nearest` with the plain C loop whatever the CPU, so that tests compare the vector kernels
/// against it.
long cimago_palette_nearest_scalar(
    const int16_t *rg, const int16_t *bw, long count, int r, int g, int b, int w, int32_t *distance);

/// `cimago_palette_nearest` with the SSE2 kernel on x86-64 whatever else the CPU has (the plain C loop
/// elsewhere), so that tests cover it on CPUs with AVX2 too.
long cimago_palette_nearest_sse2(
    const int16_t *rg, const int16_t *bw, long count, int r, int g, int b, int w, int32_t *distance);

#endif
