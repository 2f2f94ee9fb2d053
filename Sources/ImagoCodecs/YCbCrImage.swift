import ImagoCore

/// An opaque image as three 8-bit planes: luma at the image's size and two chroma planes at half of it, rounded up
/// (4:2:0), in the video range lossy WebP stores (Y 16…235, Cb and Cr 16…240 around 128, BT.601), the form a
/// JPEG's own planes take on the way to ``WebPEncoder`` without a trip through RGB
/// (``JPEGDecoder/decodeYCbCr(_:options:)``, ``WebPEncoder/encode(_:options:)-(YCbCrImage,_)``).
package struct YCbCrImage: Sendable {
    /// The luma plane (`gray8`), the image's size.
    package var y: PixelBuffer
    /// The blue-difference plane (`gray8`), half the size rounded up.
    package var cb: PixelBuffer
    /// The red-difference plane (`gray8`), half the size rounded up.
    package var cr: PixelBuffer

    /// The image's size (the luma plane's).
    package var size: PixelSize { y.size }

    /// The size of the chroma planes of an image of `size`: half of it, rounded up.
    package static func chromaSize(of size: PixelSize) -> PixelSize {
        PixelSize(width: (size.width + 1) / 2, height: (size.height + 1) / 2)
    }

    /// The planes of a JPEG's full-range YCbCr (JFIF: 0…255 on every channel) mapped to the video range: luma
    /// 16 + 219/255 y, chroma 128 + 224/255 (c − 128), rounded, as libwebp's own RGB → YUV conversion scales
    /// them.
    package static func videoRange(fullRangeY y: PixelBuffer, cb: PixelBuffer, cr: PixelBuffer) -> YCbCrImage {
        YCbCrImage(
            y: y.mapped(through: lumaTable), cb: cb.mapped(through: chromaTable), cr: cr.mapped(through: chromaTable))
    }

    private static let lumaTable: [UInt8] = (0..<256).map { UInt8(16 + (Double($0) * 219 / 255).rounded()) }
    private static let chromaTable: [UInt8] = (0..<256).map {
        UInt8((128 + (Double($0) - 128) * 224 / 255).rounded())
    }
}

extension PixelBuffer {
    /// A `gray8` buffer with every byte replaced by `table[byte]`.
    fileprivate func mapped(through table: [UInt8]) -> PixelBuffer {
        let mapped = withUnsafeBytes { bytes in
            table.withUnsafeBufferPointer { table in
                [UInt8](unsafeUninitializedCapacity: bytes.count) { out, initialized in
                    for i in 0..<bytes.count { out[i] = table[Int(bytes[i])] }
                    initialized = bytes.count
                }
            }
        }
        // Same size and format as `self`, which was valid.
        return try! PixelBuffer(width: width, height: height, format: format, bytes: mapped)
    }
}
