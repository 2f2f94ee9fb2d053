import CImagoShims
import CPNG
import CPNGFull
import Foundation
import ImagoCore

/// Decodes PNG with libpng's simplified API (`png_image_*`): every colour type and bit depth, palettes, tRNS,
/// Adam7 interlacing; 16-bit samples are reduced to 8 bits.
///
/// - Output: **grayscale files without transparency decode to `gray8`**, everything else to `rgba8` (straight
///   alpha), the same rule as `JPEGDecoder`. Files with neither an alpha channel nor tRNS are marked
///   ``PixelBuffer/isKnownOpaque``.
/// - Colour: libpng reduces the stored samples to 8 bits without any colour conversion (the `gAMA` chunks are left
///   out of the bytes handed to libpng, a copy of the file made only when it has one, since the simplified API
///   would otherwise gamma-convert them; 16-bit files are taken as encoded, not linear). Then
///   ``DecodingOptions/colorPolicy`` applies (see `ColorManagement`): by default the `iCCP` profile, else `sRGB`,
///   else `gAMA` (+ `cHRM`) is converted to sRGB; ``ColorPolicy/ignore`` takes every file as sRGB, as Pillow,
///   stb_image and image-rs do.
/// - APNG: Debian's libpng has no APNG support, so an animated PNG decodes as its still default image (the
///   `IDAT` image; ``ImageContainer/format`` is still `.apng`).
/// - EXIF orientation from an `eXIf` chunk before `IDAT` is honoured like JPEG's (applied when
///   ``DecodingOptions/appliesOrientation``, else reported).
/// - ``DecodingOptions/targetSize`` (or ``DecodingOptions/decodedByteLimit``): a file that is to shrink to a
///   quarter of its size or less is read row by row with libpng's full API (an Adam7-interlaced one pass by pass)
///   and shrunk while it is read, by the largest power of two that keeps it at least twice the target (each pixel
///   the alpha-weighted mean of its block), so the full image is never held; then it is area-averaged to the
///   aspect-fit size, as every other PNG is after a decode at full size. Never upscales.
/// - Truncated or corrupt data throws; partial previews are not produced for PNG. The chunk structure is walked
///   before libpng sees the data, and data whose chunks run past its end is rejected as truncated up front
///   (libpng would otherwise allocate whatever length a chunk declares).
///
/// Thread-safe: every decode has its own `png_image`.
public struct PNGDecoder: ImageDecoding {
    /// A decoder with the default behaviour described on the type.
    public init() {}

    /// `[.png, .apng]`.
    public var formats: Set<ImageFormat> { [.png, .apng] }

    /// Decodes `data` as described on the type.
    ///
    /// - Throws: ``CodecError/empty``, ``CodecError/tooManyPixels(width:height:limit:)`` (before any pixel
    ///   allocation), ``CodecError/truncated(format:)`` when the data ends early, or
    ///   ``CodecError/corrupt(format:reason:)`` with libpng's message.
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        guard !data.isEmpty else { throw CodecError.empty }
        let format = ImageFormat(sniffing: data) == .apng ? ImageFormat.apng : .png
        return try data.withUnsafeBytes { try decode(bytes: $0, format: format, options: options) }
    }

    private func decode(
        bytes: UnsafeRawBufferPointer, format: ImageFormat, options: DecodingOptions
    ) throws
        -> ImageContainer
    {
        guard !bytes.isEmpty else { throw CodecError.empty }
        let chunks = PNGChunks(scanning: bytes)
        // A chunk that runs past the end can never be read, and libpng allocates a chunk's declared length before
        // reading it: a 700-byte file declaring a 1.9 GB iTXt made it take 1.9 GB (found by fuzzing). Stop here.
        if chunks.isTruncated { throw CodecError.truncated(format: format) }
        // Read from the original bytes: the chunk ranges refer to them, not to the copy without gAMA.
        let color = options.colorPolicy == .ignore ? nil : chunks.colorSource(in: bytes)
        let metadata = options.readsMetadata ? chunks.metadata(in: bytes) : nil
        guard !chunks.gammaChunks.isEmpty else {
            var container = try decode(bytes: bytes, chunks: chunks, color: color, format: format, options: options)
            container.metadata = metadata
            return container
        }
        // Without its gAMA chunks (which sit between IHDR and IDAT; CRCs are per chunk, so the rest stays valid).
        var stripped = [UInt8]()
        stripped.reserveCapacity(bytes.count)
        var start = 0
        for range in chunks.gammaChunks {
            stripped.append(contentsOf: bytes[start..<range.lowerBound])
            start = range.upperBound
        }
        stripped.append(contentsOf: bytes[start...])
        var container = try stripped.withUnsafeBytes {
            try decode(bytes: $0, chunks: chunks, color: color, format: format, options: options)
        }
        container.metadata = metadata
        return container
    }

    private func decode(
        bytes: UnsafeRawBufferPointer, chunks: PNGChunks, color: ColorSource?, format: ImageFormat,
        options: DecodingOptions
    ) throws -> ImageContainer {
        guard let base = bytes.baseAddress else { throw CodecError.empty }

        var image = png_image()
        image.version = cimago_png_image_version
        // Frees libpng's state on every path; a no-op once png_image_finish_read has cleaned up.
        defer { png_image_free(&image) }
        guard png_image_begin_read_from_memory(&image, base, bytes.count) != 0 else {
            throw Self.failure(&image, chunks: chunks, format: format)
        }
        let width = Int(image.width)
        let height = Int(image.height)
        try options.checkDimensions(width: width, height: height, format: format)

        // libpng sets the alpha flag for an alpha channel or a tRNS chunk; finishRead rewrites `format`.
        let hasAlpha = image.format & cimago_png_format_flag_alpha != 0
        let isOpaqueGray = image.format & (cimago_png_format_flag_color | cimago_png_format_flag_alpha) == 0
        let pixelFormat: PixelBuffer.PixelFormat = isOpaqueGray ? .gray8 : .rgba8
        let full = PixelSize(width: width, height: height)
        let fitted = options.deliveredSize(
            of: full, orientation: chunks.orientation, bytesPerPixel: pixelFormat.bytesPerPixel)
        var pixels: PixelBuffer
        if let shrunk = try Self.readShrunk(bytes, full: full, fitted: fitted, pixelFormat: pixelFormat, format: format)
        {
            pixels = shrunk
        } else {
            pixels = try Self.finishRead(
                &image, pixelFormat: pixelFormat, isInterlaced16Bit: chunks.isInterlaced16Bit, format: format,
                chunks: chunks)
        }
        // No alpha channel and no tRNS: every alpha byte is 255, and saying so spares resampling and encoding a
        // scan of the alpha channel.
        if !hasAlpha { pixels = pixels.assumingOpaque() }
        if pixels.size != fitted { pixels = try pixels.resampledWithVectorKernel(to: fitted) }

        var orientation = chunks.orientation
        var originalSize = full
        if options.appliesOrientation && orientation != .up {
            pixels = pixels.oriented(orientation)
            if orientation.swapsDimensions { originalSize = PixelSize(width: height, height: width) }
            orientation = .up
        }
        var container = ImageContainer(
            frames: [ImageFrame(buffer: pixels)], format: format, orientation: orientation, originalSize: originalSize,
            bitDepth: chunks.bitDepth)
        ColorManagement.apply(color, to: &container, options: options)
        return container
    }

    /// The image read row by row and shrunk by the largest power of two (at most 256) that keeps it at least twice
    /// `fitted` on each side, so the full image is never held; `nil` when `fitted` is more than a quarter of `full`
    /// on either side.
    ///
    /// Twice, not once (as JPEG's DCT scaling): block means followed by an area average of a ratio near 1 blur and
    /// shift edges by up to a block; with a ratio of at least 2 left for the area average, the result stays close
    /// to the full decode's (BENCHMARKS.md, "PNG thumbnails shrunk while read").
    static func readShrunk(
        _ bytes: UnsafeRawBufferPointer, full: PixelSize, fitted: PixelSize, pixelFormat: PixelBuffer.PixelFormat,
        format: ImageFormat
    ) throws -> PixelBuffer? {
        var factor = 1
        while factor < 256, full.width / (2 * factor) >= 2 * fitted.width,
            full.height / (2 * factor) >= 2 * fitted.height
        {
            factor *= 2
        }
        guard factor > 1 else { return nil }
        return try shrunk(bytes, by: factor, full: full, pixelFormat: pixelFormat, format: format)
    }

    /// `bytes` read row by row into `pixelFormat`, each side divided by `factor` (rounded up), each pixel the
    /// alpha-weighted mean of the block it covers (`cimago_png_read_shrunk`); `nil` when the reader leaves the file
    /// to the simplified API.
    ///
    /// - Throws: ``CodecError/corrupt(format:reason:)`` with libpng's message.
    static func shrunk(
        _ bytes: UnsafeRawBufferPointer, by factor: Int, full: PixelSize, pixelFormat: PixelBuffer.PixelFormat,
        format: ImageFormat
    ) throws -> PixelBuffer? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw CodecError.empty }
        /// Thrown out of the buffer's initialiser, so that a buffer not every byte of which was written is never made.
        struct Declined: Error {}
        do {
            return try PixelBuffer(
                width: (full.width + factor - 1) / factor, height: (full.height + factor - 1) / factor,
                format: pixelFormat
            ) { out in
                var message = [CChar](repeating: 0, count: 200)
                let status = cimago_png_read_shrunk(
                    base, bytes.count, UInt32(factor), Int32(pixelFormat.bytesPerPixel),
                    out.baseAddress?.assumingMemoryBound(to: UInt8.self), out.count, &message, message.count)
                if status == 1 { throw Declined() }
                if status != 0 { throw corrupt(String(nulTerminated: message), format: format) }
            }
        } catch is Declined {
            return nil
        }
    }

    /// The error for a failed libpng call: truncation when the data has no IEND chunk, else libpng's message.
    static func failure(_ image: inout png_image, chunks: PNGChunks, format: ImageFormat) -> CodecError {
        if chunks.isTruncated { return .truncated(format: format) }
        let message = withUnsafeBytes(of: &image.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return corrupt(message, format: format)
    }

    /// ``CodecError/corrupt(format:reason:)`` with libpng's `message`, or a generic one when libpng gave none.
    private static func corrupt(_ message: String, format: ImageFormat) -> CodecError {
        .corrupt(format: format, reason: message.isEmpty ? "libpng reported an error" : message)
    }
}
