import CResampleKernel
import ImagoCore

extension PixelBuffer {
    /// ``PixelBuffer/resampled(to:)`` with the passes of an opaque RGBA input done by `CResampleKernel`'s AVX2
    /// kernel: the same integers, so the same bytes, at a fraction of the Swift loops' cost. Any other input, and
    /// a CPU without AVX2, take the Swift loops. The decoders of ImagoCodecs reach their fitted size through it.
    func resampledWithVectorKernel(to size: PixelSize) throws -> PixelBuffer {
        try resampled(to: size, opaqueKernel: Self.vectorResample)
    }

    /// Runs `job` in `CResampleKernel`; `false` when this CPU lacks AVX2 (nothing written).
    package static func vectorResample(_ job: OpaqueResampleJob) -> Bool {
        cimago_resample_opaque(
            job.source.assumingMemoryBound(to: UInt8.self), job.sourceBytesPerRow, job.output, job.width, job.height,
            job.horizontal.starts.baseAddress, job.horizontal.weights.baseAddress, job.horizontal.taps,
            job.vertical.starts.baseAddress, job.vertical.counts.baseAddress, job.vertical.offsets.baseAddress,
            job.vertical.weights.baseAddress, job.scratch, job.sums) == 1
    }
}

extension PixelBuffer {
    /// Whether this CPU runs `CResampleKernel`'s vector kernel (x86-64 with AVX2).
    package static var isVectorResampleKernelAvailable: Bool { cimago_resample_kernel_available() == 1 }
}
