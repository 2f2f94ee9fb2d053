import CAVIF
import Foundation
import ImagoCore

/// Encodes still AVIF with libavif 0.11 and libaom: lossy at ``EncodingOptions/quality``, or lossless with
/// ``EncodingOptions/isLossless``.
///
/// - Lossy: 8-bit 4:2:0 (BT.601 matrix, full range, sRGB CICP); quality 0…1 maps linearly to the AV1 quantizer
///   63…0 (default 0.85 → 9), used as both the minimum and maximum quantizer (as `avifenc --min Q --max Q`).
///   Alpha, when the image has any transparency, is encoded at the same quantizer.
/// - Lossless: 4:4:4 with the identity matrix and quantizer 0: decoding gives back the input exactly.
/// - ``speed`` is libavif's 0 (slowest, smallest) … 10 (fastest); default 6. `gray8` input is expanded to RGBA.
///
/// Thread-safe: the encoder holds only its settings; each call creates its own libavif encoder.
///
/// ```swift
/// let data = try AVIFEncoder(speed: 6).encode(buffer, options: EncodingOptions(quality: 0.7))
/// ```
public struct AVIFEncoder: ImageEncoding {
    /// libavif's speed, 0 … 10. Default 6.
    public var speed: Int
    /// Threads libaom may use. Default 1.
    public var maxThreads: Int

    /// An AVIF encoder at `speed` (0 … 10, default 6) with `maxThreads` threads (default 1).
    public init(speed: Int = 6, maxThreads: Int = 1) {
        self.speed = min(max(speed, 0), 10)
        self.maxThreads = max(1, maxThreads)
    }

    /// `.avif`.
    public var format: ImageFormat { .avif }

    /// `"speed=N"`: the speed changes the bytes written (threads do not).
    public var settingsIdentifier: String? { "speed=\(speed)" }

    /// The AV1 quantizer (0 best … 63 worst) for `quality` (0 … 1), as used for both the minimum and maximum.
    public static func quantizer(forQuality quality: Double) -> Int {
        Int((63 * (1 - min(max(quality, 0), 1))).rounded())
    }

    /// Encodes `image` (straight or premultiplied alpha) as an AVIF file.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` with libavif's reason.
    public func encode(_ image: PixelBuffer, options: EncodingOptions) throws -> Data {
        let rgba = image.straightRGBA
        guard rgba.width <= 65536, rgba.height <= 65536 else { throw failure("AVIF images are at most 65536x65536") }
        let yuvFormat = options.isLossless ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420
        guard let avif = avifImageCreate(UInt32(rgba.width), UInt32(rgba.height), 8, yuvFormat) else {
            throw failure("libavif could not create an image")
        }
        defer { avifImageDestroy(avif) }
        avif.pointee.yuvRange = AVIF_RANGE_FULL
        avif.pointee.colorPrimaries = avifColorPrimaries(AVIF_COLOR_PRIMARIES_BT709)
        avif.pointee.transferCharacteristics = avifTransferCharacteristics(AVIF_TRANSFER_CHARACTERISTICS_SRGB)
        avif.pointee.matrixCoefficients =
            avifMatrixCoefficients(
                options.isLossless ? AVIF_MATRIX_COEFFICIENTS_IDENTITY : AVIF_MATRIX_COEFFICIENTS_BT601)
        // A kept colour profile (`EncodingOptions.colorProfile`, from a decode with `.keep`) goes into the `colr`
        // box byte for byte; the pixels are left in that profile's space.
        if let profile = options.colorProfile, !profile.data.isEmpty {
            profile.data.withUnsafeBytes { bytes in
                avifImageSetProfileICC(avif, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
            }
        }
        // EXIF and XMP as the file's metadata items (libavif copies them); AVIF has no place for IPTC.
        if let metadata = options.metadata?.bounded {
            // libavif fails the whole encode on an EXIF block without a TIFF header: such a block is left out.
            metadata.exif.flatMap { ExifEditing.hasTIFFHeader($0) ? $0 : nil }?.withUnsafeBytes { bytes in
                avifImageSetMetadataExif(avif, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
            }
            metadata.xmp?.withUnsafeBytes { bytes in
                avifImageSetMetadataXMP(avif, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
            }
        }

        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, avif)
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.depth = 8
        // An opaque image gets no alpha plane at all.
        rgb.ignoreAlpha = rgba.hasTransparency ? AVIF_FALSE : AVIF_TRUE
        let converted = rgba.withUnsafeBytes { bytes in
            rgb.pixels = UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self))
            rgb.rowBytes = UInt32(rgba.bytesPerRow)
            return avifImageRGBToYUV(avif, &rgb)
        }
        guard converted == AVIF_RESULT_OK else { throw failure(String(cString: avifResultToString(converted))) }

        guard let encoder = avifEncoderCreate() else { throw failure("libavif could not create an encoder") }
        defer { avifEncoderDestroy(encoder) }
        let quantizer = options.isLossless ? 0 : Self.quantizer(forQuality: options.quality)
        encoder.pointee.speed = Int32(speed)
        encoder.pointee.maxThreads = Int32(clamping: maxThreads)
        encoder.pointee.minQuantizer = Int32(quantizer)
        encoder.pointee.maxQuantizer = Int32(quantizer)
        encoder.pointee.minQuantizerAlpha = Int32(quantizer)
        encoder.pointee.maxQuantizerAlpha = Int32(quantizer)
        var output = avifRWData(data: nil, size: 0)
        defer { avifRWDataFree(&output) }
        let written = avifEncoderWrite(encoder, avif, &output)
        guard written == AVIF_RESULT_OK else {
            let detail = withUnsafeBytes(of: encoder.pointee.diag.error) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            throw failure(String(cString: avifResultToString(written)) + (detail.isEmpty ? "" : ": \(detail)"))
        }
        guard let bytes = output.data, output.size > 0 else { throw failure("no output") }
        return Data(bytes: bytes, count: output.size)
    }

    private func failure(_ reason: String) -> CodecError { .encodingFailed(format: .avif, reason: reason) }
}
