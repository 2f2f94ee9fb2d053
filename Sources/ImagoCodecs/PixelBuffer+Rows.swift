import ImagoCore

extension PixelBuffer {
    /// Copies row `y` into `destination` as the encoders write rows: as stored (`gray8`, or RGBA), or, with
    /// `dropsAlpha`, an RGBA row as RGB, 3 bytes a pixel. `destination` holds the row's bytes.
    func copyRow(_ y: Int, into destination: UnsafeMutablePointer<UInt8>, dropsAlpha: Bool) {
        withUnsafeBytes { raw in
            let source = raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + y * bytesPerRow
            guard dropsAlpha, format == .rgba8 else {
                destination.update(from: source, count: width * format.bytesPerPixel)
                return
            }
            for x in 0..<width {
                destination[3 * x] = source[4 * x]
                destination[3 * x + 1] = source[4 * x + 1]
                destination[3 * x + 2] = source[4 * x + 2]
            }
        }
    }
}
