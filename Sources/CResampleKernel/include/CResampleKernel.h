#ifndef CRESAMPLEKERNEL_H
#define CRESAMPLEKERNEL_H

#include <stddef.h>
#include <stdint.h>

/// The AVX2 kernel (x86-64 with AVX2): two output pixels a step in pass 1, 16 values in pass 2.
#define CIMAGO_RESAMPLE_KERNEL_AVX2 1
/// The AVX-512 kernel (x86-64 with AVX-512 F, BW and VL): four output pixels a step in pass 1, 32 values in
/// pass 2. The same integers as the AVX2 kernel.
#define CIMAGO_RESAMPLE_KERNEL_AVX512 2

/// The kernels this CPU runs, a mask of `CIMAGO_RESAMPLE_KERNEL_AVX2` and `CIMAGO_RESAMPLE_KERNEL_AVX512` (0 on a
/// CPU without AVX2 and on every non-x86-64 machine, where the caller keeps its Swift loops). Checked with
/// `__builtin_cpu_supports`.
int cimago_resample_kernel_variants(void);

/// 1 when this CPU runs one of the vector resample kernels (x86-64 with AVX2); 0 otherwise (the caller keeps its
/// Swift loops).
int cimago_resample_kernel_available(void);

/// The area-average / bilinear resample of opaque RGBA8 (`channels` 4, alpha written as 255) or gray8
/// (`channels` 1) in the fixed point of ImagoCore's `PixelBuffer.resampled(to:)` narrow path, with the same
/// integers, so the output is byte for byte the same:
///
/// - pass 1, per source row: for output pixel x, channel c: `(Σₖ src[h_starts[x] + k][c] × h_weights[x × h_taps + k]
///   + 2¹³) >> 14` into a 16-bit row (22-bit weights, every output has `h_taps` taps, padded with zeros; the taps
///   of an output never run past the end of its source row);
/// - pass 2, per output row y: `min((Σₖ row[v_starts[y] + k][i] × v_weights[v_offsets[y] + k] + 2²²) >> 23, 255)`
///   for the `v_counts[y]` rows (15-bit weights).
///
/// `dst` has `height` rows of `channels × width` bytes; `scratch` holds `2 × channels × width` 16-bit values (two
/// source rows, by row parity, as the Swift loops keep them) and `sums` `channels × width` 32-bit values. Gray
/// input of at most four taps also allocates `(1 + h_taps) × width` 32-bit values for the call (its weights
/// tap-major); if that allocation fails, pass 1 runs one output at a time.
/// Runs the widest kernel this CPU has. Returns 1 when done, 0 when no kernel is available or `channels` is
/// neither 1 nor 4 (nothing written).
int cimago_resample_narrow(
    long channels, const uint8_t *src, size_t src_stride, uint8_t *dst, long width, long height,
    const long *h_starts, const uint32_t *h_weights, long h_taps, const long *v_starts, const long *v_counts,
    const long *v_offsets, const uint32_t *v_weights, uint16_t *scratch, uint32_t *sums);

/// `cimago_resample_narrow` with the kernel `variant` (one bit of `cimago_resample_kernel_variants`), so that
/// tests cover every kernel the CPU has. Returns 0 without writing when this CPU does not run `variant`.
int cimago_resample_narrow_variant(
    int variant, long channels, const uint8_t *src, size_t src_stride, uint8_t *dst, long width, long height,
    const long *h_starts, const uint32_t *h_weights, long h_taps, const long *v_starts, const long *v_counts,
    const long *v_offsets, const uint32_t *v_weights, uint16_t *scratch, uint32_t *sums);

#endif
