import Foundation
import ImagoCore

/// An opaque image as three 8-bit planes in JPEG's full-range YCbCr (JFIF, BT.601, every channel 0…255): luma at
/// the image's size and two chroma planes at half of it, rounded up (4:2:0). The form a JPEG's own planes take on
/// the way to an encoder that stores YCbCr 4:2:0 (``YCbCrEncoding``) without a trip through RGB
/// (``JPEGDecoder/decodeYCbCr(_:options:)``).
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

    /// The planes resampled to `size` (chroma to half of it), with the weights of ``PixelBuffer/resampled(to:)``
    /// (in its vector kernel where the CPU has one).
    package func resampled(to size: PixelSize) throws -> YCbCrImage {
        guard size != self.size else { return self }
        let chroma = Self.chromaSize(of: size)
        return YCbCrImage(
            y: try y.resampledWithVectorKernel(to: size), cb: try cb.resampledWithVectorKernel(to: chroma),
            cr: try cr.resampledWithVectorKernel(to: chroma))
    }

    /// Whether a cut at (`x`, `y`) leaves every chroma sample whole (both even), as ``cropped(x:y:size:)`` needs.
    package static func cutsWholeChromaSamples(x: Int, y: Int) -> Bool { x % 2 == 0 && y % 2 == 0 }

    /// The `size` rectangle at (`x`, `y`), which must lie inside the image, with the chroma planes cut at half
    /// those coordinates; `nil` when `x` or `y` is odd, where the chroma samples would straddle the cut (the
    /// caller then cuts in RGB).
    package func cropped(x: Int, y: Int, size: PixelSize) throws -> YCbCrImage? {
        guard Self.cutsWholeChromaSamples(x: x, y: y) else { return nil }
        guard x != 0 || y != 0 || size != self.size else { return self }
        let chroma = Self.chromaSize(of: size)
        let cut = ImageProcessors.Crop(x: x / 2, y: y / 2, width: chroma.width, height: chroma.height)
        return YCbCrImage(
            y: try ImageProcessors.Crop(x: x, y: y, width: size.width, height: size.height).process(self.y),
            cb: try cut.process(cb), cr: try cut.process(cr))
    }

    /// Checks that the chroma planes are half the luma plane's size, rounded up, as an encoder of `format` needs.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` for `format` when they are not.
    func checkPlanes(for format: ImageFormat) throws {
        let chroma = Self.chromaSize(of: size)
        guard cb.size == chroma, cr.size == chroma else {
            throw CodecError.encodingFailed(format: format, reason: "chroma planes of the wrong size")
        }
    }
}

/// An encoder that takes an image's YCbCr planes as they are (``YCbCrImage``), without converting RGB: lossy
/// WebP (``WebPEncoder``) and JPEG (``JPEGEncoder``), whose files hold YCbCr 4:2:0.
package protocol YCbCrEncoding: ImageEncoding {
    /// `image` encoded as ``encode(_:options:)-(PixelBuffer,_)`` would encode the same picture in RGB, with the
    /// same settings, colour profile and metadata.
    func encode(_ image: YCbCrImage, options: EncodingOptions) throws -> Data
}
