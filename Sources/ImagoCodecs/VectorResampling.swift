import CResampleKernel
import ImagoCore

extension PixelBuffer {
    /// ``PixelBuffer/resampled(to:)`` with the passes of an opaque RGBA or a gray input done by
    /// `CResampleKernel`'s vector kernel (AVX-512 where the CPU has AVX-512 F/BW/VL, else AVX2): the same integers,
    /// so the same bytes, at a fraction of the Swift loops' cost. Any other input, and a CPU without AVX2, take the
    /// Swift loops. Every decoder of ImagoCodecs reaches its fitted size through it (the JPEG decoder in YCbCr planes
    /// too).
    package func resampledWithVectorKernel(to size: PixelSize) throws -> PixelBuffer {
        try resampled(to: size, vectorKernel: Self.vectorResample)
    }

    /// Runs `job` in `CResampleKernel`'s widest kernel; `false` when this CPU lacks AVX2 (nothing written).
    package static func vectorResample(_ job: NarrowResampleJob) -> Bool {
        cimago_resample_narrow(
            job.channels, job.source.assumingMemoryBound(to: UInt8.self), job.sourceBytesPerRow, job.output,
            job.width, job.height, job.horizontal.starts.baseAddress, job.horizontal.weights.baseAddress,
            job.horizontal.taps, job.vertical.starts.baseAddress, job.vertical.counts.baseAddress,
            job.vertical.offsets.baseAddress, job.vertical.weights.baseAddress, job.scratch, job.sums) == 1
    }

    /// Runs `job` in `CResampleKernel`'s kernel `variant` (`CIMAGO_RESAMPLE_KERNEL_AVX2` or `…_AVX512`), so that
    /// tests cover each kernel the CPU has; `false` when this CPU does not run it (nothing written).
    package static func vectorResample(_ job: NarrowResampleJob, variant: Int32) -> Bool {
        cimago_resample_narrow_variant(
            variant, job.channels, job.source.assumingMemoryBound(to: UInt8.self), job.sourceBytesPerRow, job.output,
            job.width, job.height, job.horizontal.starts.baseAddress, job.horizontal.weights.baseAddress,
            job.horizontal.taps, job.vertical.starts.baseAddress, job.vertical.counts.baseAddress,
            job.vertical.offsets.baseAddress, job.vertical.weights.baseAddress, job.scratch, job.sums) == 1
    }
}

extension PixelBuffer {
    /// Whether this CPU runs one of `CResampleKernel`'s vector kernels (x86-64 with AVX2).
    package static var isVectorResampleKernelAvailable: Bool { cimago_resample_kernel_available() == 1 }

    /// The kernels of `CResampleKernel` this CPU runs (`CIMAGO_RESAMPLE_KERNEL_AVX2`, `…_AVX512`); empty without
    /// AVX2.
    package static var vectorResampleVariants: [Int32] {
        [CIMAGO_RESAMPLE_KERNEL_AVX2, CIMAGO_RESAMPLE_KERNEL_AVX512].filter {
            cimago_resample_kernel_variants() & $0 != 0
        }
    }
}
