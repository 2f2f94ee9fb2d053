extension PixelBuffer {
    /// Resamples to exactly `size` (no aspect-ratio handling; see `ImageProcessors.Resize` for that).
    ///
    /// Shrinking averages areas: each output pixel is the coverage-weighted mean of the source pixels under it
    /// (a box filter with exact fractional edges), which neither aliases nor blurs more than needed. Enlarging is
    /// bilinear. RGBA is resampled premultiplied, so transparent pixels never bleed their colour into opaque
    /// neighbours; the result has straight alpha again. Returns `self` when the size is unchanged.
    ///
    /// Integer arithmetic throughout: results are within 1 per channel of exact arithmetic. An opaque input
    /// (``isKnownOpaque``, or no alpha below 255 when scanned) skips premultiplying and gives an output that
    /// ``isKnownOpaque``.
    ///
    /// - Throws: ``PixelBuffer/Error/invalidDimensions(width:height:)`` for an empty or overflowing size.
    public func resampled(to size: PixelSize) throws -> PixelBuffer {
        try resampled(to: size, vectorKernel: nil)
    }

    /// ``resampled(to:)``, with the two passes of an opaque RGBA or a gray input handed to `vectorKernel` when it
    /// is given (a vector kernel in C, which ImagoCore cannot hold: ImagoCodecs passes one). The kernel must
    /// compute the same integers as the Swift loops (see ``NarrowResampleJob``); when it returns `false` (a CPU
    /// without its instructions) the Swift loops run instead.
    package func resampled(to size: PixelSize, vectorKernel: NarrowResampleKernel?) throws -> PixelBuffer {
        if size == self.size && alphaMode == .straight { return self }
        _ = try Self.checkedByteCount(width: size.width, height: size.height, format: format)
        let kernel: ResamplingKernel =
            if format == .gray8 {
                .gray
            } else if alphaMode == .straight && !hasTransparency {
                // Every alpha 255 (all JPEGs, most photos): premultiplying is the identity, so both the multiply
                // on the way in and the divide on the way out are skipped. `hasTransparency` reads one byte in
                // four unless a decoder has already vouched for the buffer (`assumingOpaque()`).
                .opaque
            } else {
                .transparent(isPremultipliedInput: alphaMode == .premultiplied)
            }
        let horizontal = ResamplingWeights.shared(source: width, destination: size.width, isPadded: true)
        // Widths: 22-bit weights in pass 1 everywhere. Gray and opaque rows are then kept as 8.8 fixed point in
        // 16 bits and summed with 15-bit vertical weights in 32 bits (what SSE2 multiplies fastest), unless an
        // output row averages more than 64 source rows, where 15-bit weights could be off by more than a quarter:
        // then, and for premultiplied colour (16 bits before any fraction), rows are 32-bit and sums 64-bit.
        let narrowVertical =
            kernel.isPremultiplying ? nil : ResamplingWeights.shared(source: height, destination: size.height, bits: 15)
        var result: PixelBuffer
        if let narrowVertical, narrowVertical.taps <= 64 {
            result = try resampled(
                to: size, kernel: kernel, horizontal: horizontal, vertical: narrowVertical, rowShift: 14,
                row: UInt16.self, sum: UInt32.self, vectorKernel: kernel.isPremultiplying ? nil : vectorKernel)
        } else {
            let vertical = ResamplingWeights.shared(source: height, destination: size.height, bits: 22)
            result = try resampled(
                to: size, kernel: kernel, horizontal: horizontal, vertical: vertical,
                rowShift: kernel.isPremultiplying ? 8 : 10, row: UInt32.self, sum: UInt64.self)
        }
        if kernel == .opaque { result.opaqueMark = true }
        return result
    }

    /// The two passes, with intermediate rows of `Row` (pass-1 sums shifted right by `rowShift`) and vertical sums
    /// of `Sum`. Pass-1 sums are at most 2⁸ × 2²² (gray, opaque) or 2¹⁶ × 2²² (premultiplied colour).
    /// `vectorKernel` is tried first when given (opaque or gray input, 16-bit rows, 32-bit sums only).
    private func resampled<Row: FixedWidthInteger & UnsignedInteger, Sum: FixedWidthInteger & UnsignedInteger>(
        to size: PixelSize, kernel: ResamplingKernel, horizontal: ResamplingWeights, vertical: ResamplingWeights,
        rowShift: Int, row _: Row.Type, sum _: Sum.Type, vectorKernel: NarrowResampleKernel? = nil
    ) throws -> PixelBuffer {
        let rowCount = size.width * format.bytesPerPixel
        let finalShift = horizontal.bits - rowShift + vertical.bits

        // Streamed: each source row is resampled horizontally once, into one of two intermediate rows (slot =
        // row parity); an output row then sums its vertical taps' rows into `sums` and rounds them to bytes.
        // Consecutive output rows share at most one source row when shrinking and at most two when enlarging,
        // so two slots never recompute a row. Scratch is uninitialised: every value is written before it is read.
        let slots = UnsafeMutablePointer<Row>.allocate(capacity: 2 * rowCount)
        defer { slots.deallocate() }
        let sums = UnsafeMutablePointer<Sum>.allocate(capacity: rowCount)
        defer { sums.deallocate() }
        var slotSource = (-1, -1)  // which source row each slot holds

        return try PixelBuffer(width: size.width, height: size.height, format: format) { out in
            let out = out.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self)
            bytes.withUnsafeBytes { src in
                let src = src.baseAddress.unsafelyUnwrapped
                horizontal.withUnsafeTable { hTable in
                    vertical.withUnsafeTable { vTable in
                        if let vectorKernel, Row.bitWidth == 16, Sum.bitWidth == 32,
                            vectorKernel(
                                NarrowResampleJob(
                                    channels: format.bytesPerPixel, source: src, sourceBytesPerRow: bytesPerRow,
                                    output: out, width: size.width, height: size.height, horizontal: hTable,
                                    vertical: vTable,
                                    scratch: UnsafeMutableRawPointer(slots).assumingMemoryBound(to: UInt16.self),
                                    sums: UnsafeMutableRawPointer(sums).assumingMemoryBound(to: UInt32.self)))
                        {
                            return
                        }
                        for y in 0..<size.height {
                            let first = vTable.starts[y]
                            let offset = vTable.offsets[y]
                            for k in 0..<vTable.counts[y] {
                                let sourceRow = first + k
                                let isOdd = sourceRow & 1 == 1
                                let row = slots + (isOdd ? rowCount : 0)
                                if (isOdd ? slotSource.1 : slotSource.0) != sourceRow {
                                    kernel.resampleRow(
                                        src + sourceRow * bytesPerRow, hTable, shift: rowShift, into: row)
                                    if isOdd { slotSource.1 = sourceRow } else { slotSource.0 = sourceRow }
                                }
                                let w = Sum(vTable.weights[offset + k])
                                if k == 0 {
                                    for i in 0..<rowCount { sums[i] = Sum(truncatingIfNeeded: row[i]) &* w }
                                } else {
                                    for i in 0..<rowCount { sums[i] &+= Sum(truncatingIfNeeded: row[i]) &* w }
                                }
                            }
                            kernel.finishRow(sums, count: rowCount, shift: finalShift, into: out + y * rowCount)
                        }
                    }
                }
            }
        }
    }
}

/// The work of a narrow resample of opaque RGBA or gray (``PixelBuffer/resampled(to:vectorKernel:)``), for a kernel
/// outside ImagoCore. The kernel writes `height` rows of `channels × width` bytes to `output` with exactly the
/// integers of the Swift loops: pass 1 `(Σ source byte × 22-bit horizontal weight + 2¹³) >> 14` into 16-bit rows
/// (RGBA's alpha written as 255 << 8), pass 2 `min((Σ row × 15-bit vertical weight + 2²²) >> 23, 255)`.
/// `horizontal` is padded (every output has `taps` taps); `vertical` has at most 64 taps an output row.
package struct NarrowResampleJob {
    /// Bytes a pixel: 4 (RGBA, every alpha 255) or 1 (gray).
    package let channels: Int
    /// The first byte of the source's first row.
    package let source: UnsafeRawPointer
    /// Bytes from one source row to the next.
    package let sourceBytesPerRow: Int
    /// The result's first byte: `height` rows of `channels × width` bytes, uninitialised.
    package let output: UnsafeMutablePointer<UInt8>
    /// The result's width in pixels.
    package let width: Int
    /// The result's height in rows.
    package let height: Int
    /// The horizontal weights (22 bits), padded.
    package let horizontal: ResamplingWeights.Table
    /// The vertical weights (15 bits).
    package let vertical: ResamplingWeights.Table
    /// Room for two intermediate rows of `channels × width` values.
    package let scratch: UnsafeMutablePointer<UInt16>
    /// Room for `channels × width` vertical sums.
    package let sums: UnsafeMutablePointer<UInt32>
}

/// Does a ``NarrowResampleJob`` and returns `true`, or returns `false` without writing when it cannot run here.
package typealias NarrowResampleKernel = (NarrowResampleJob) -> Bool
