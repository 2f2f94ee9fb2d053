import Foundation
import ImagoCore

/// Decodes Windows icons and cursors (ICO, CUR): picks the directory entry that best fits the target size and
/// decodes it, a PNG inside with ``PNGDecoder`` and a BMP inside (a DIB of doubled height followed by the 1-bit
/// AND mask) with the BMP reader.
///
/// Behaviour:
/// - Entry choice: with ``DecodingOptions/targetSize``, the smallest entry at least as large as the target on
///   both sides; when none is, or without a target size, the largest; ties go to the deeper colour.
/// - BMP entries: the AND mask makes its pixels transparent, except in 32-bit entries whose alpha channel is in
///   use (the alpha wins). PNG entries decode exactly as ``PNGDecoder`` decodes PNG.
/// - The result is one frame, ``ImageContainer/format`` `.ico` (cursors too), fitted to the target size.
/// - Limits, truncation and partial data as ``BMPDecoder`` and ``PNGDecoder``; an entry whose bytes run past the
///   end of the data is ``CodecError/truncated(format:)``.
///
/// Thread-safe: the decoder has no state.
///
/// ```swift
/// let favicon = try ICODecoder().decode(data, options: DecodingOptions(targetSize: PixelSize(width: 32, height: 32)))
/// ```
public struct ICODecoder: ImageDecoding {
    /// An ICO/CUR decoder; it has no settings.
    public init() {}

    /// `[.ico]`.
    public var formats: Set<ImageFormat> { [.ico] }

    /// Decodes the best-fitting entry of `data`.
    ///
    /// - Throws: ``CodecError``: `.empty`, `.truncated`, `.corrupt`, `.tooManyPixels`.
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        guard !data.isEmpty else { throw CodecError.empty }
        return try data.withUnsafeBytes { b in
            let entry = try ICODirectory(b).bestEntry(for: options.targetSize)
            guard entry.range.upperBound <= b.count else { throw CodecError.truncated(format: .ico) }
            let body = UnsafeRawBufferPointer(rebasing: b[entry.range])
            let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            if body.count >= 8 && body.prefix(8).elementsEqual(pngSignature) {
                var container = try PNGDecoder().decode(Data(body), options: options)
                container.format = .ico
                // IHDR's bit depth (palette entries are 8-bit), when the PNG decoder did not say.
                if container.bitDepth == nil, body.count >= 26 {
                    container.bitDepth = body[25] == 3 ? 8 : Int(body[24])
                }
                return container
            }
            let info = try BMPInfo(body, at: 0, isIconEntry: true, options: options, format: .ico)
            return try BMPDecoder.container(
                info: info, bytes: body, start: info.end, options: options, format: .ico, andMask: true)
        }
    }
}
