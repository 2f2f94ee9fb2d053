import CTIFF
import Foundation
import ImagoCore

/// Decodes the first page of a TIFF with libtiff's RGBA interface (every photometric interpretation, bit depth
/// and compression it supports, converted to 8-bit RGBA with straight alpha; libtiff premultiplies, so colour
/// under partial alpha may be 1 level off the stored value).
///
/// - Read from memory through `TIFFClientOpenExt` callbacks over the data (no temporary file); libtiff's errors
///   and warnings go to per-handle handlers (never to stderr; the process-global handlers are not touched).
/// - The `Orientation` tag (same values as EXIF) is applied with ``DecodingOptions/appliesOrientation``, or
///   returned as ``ImageContainer/orientation``. Pixels are read in stored order and turned by Imago, since
///   libtiff's RGBA interface handles only the flips, not the transposing orientations 5…8.
/// - The dimensions are checked against ``DecodingOptions/pixelLimit`` before the raster is allocated;
///   libtiff's largest single allocation is bounded too.
/// - ``DecodingOptions/targetSize``: decoded full size, then downsampled to fit. Further pages are ignored.
/// - Colour: an `ICCProfile` tag is applied by ``DecodingOptions/colorPolicy`` as the other decoders do
///   (converted to sRGB by default; kept as ``ImageContainer/colorProfile`` under ``ColorPolicy/keep``).
/// - With ``DecodingOptions/readsMetadata``, ``ImageContainer/metadata`` holds the `XMLPacket` (XMP), the
///   `Photoshop` or `RichTIFFIPTC` block (IPTC) and the text tags of the first directory as EXIF
///   (``TIFFMetadata``).
/// - A damaged or truncated strip fails with ``CodecError/corrupt(format:reason:)`` (``DecodingOptions/
///   allowsPartialData`` is not supported).
///
/// Thread-safe: the decoder has no state; each call opens its own libtiff handle.
///
/// ```swift
/// let container = try TIFFDecoder().decode(data, options: DecodingOptions())
/// ```
public struct TIFFDecoder: ImageDecoding {
    /// A TIFF decoder; it has no settings.
    public init() {}

    /// `[.tiff]`.
    public var formats: Set<ImageFormat> { [.tiff] }

    /// Decodes the first page of `data`.
    ///
    /// - Throws: ``CodecError``: `.empty`, `.corrupt`, `.tooManyPixels`.
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        guard !data.isEmpty else { throw CodecError.empty }
        return try data.withUnsafeBytes { bytes in
            let source = TIFFByteSource(bytes)
            return try withExtendedLifetime(source) { try decode(source, options: options) }
        }
    }

    private func decode(_ source: TIFFByteSource, options: DecodingOptions) throws -> ImageContainer {
        try withQuietTIFFOptions(failure: corrupt("libtiff could not allocate options")) { openOptions, message in
            // Bounds each allocation libtiff makes itself (strip buffers, tag arrays); the raster is ours.
            let (rasterBytes, overflow) = max(1, options.pixelLimit).multipliedReportingOverflow(by: 4)
            TIFFOpenOptionsSetMaxSingleMemAlloc(openOptions, tmsize_t(overflow ? Int.max : max(64 << 20, rasterBytes)))
            let lastError = { String(cString: message) }
            guard
                let tiff = TIFFClientOpenExt(
                    "memory", "rm", Unmanaged.passUnretained(source).toOpaque(), tiffRead, tiffWrite, tiffSeek,
                    tiffClose, tiffSize, nil, nil, openOptions)
            else { throw corrupt(lastError().isEmpty ? "not a TIFF file" : lastError()) }
            defer { TIFFClose(tiff) }
            return try decodePage(tiff, options: options, lastError: lastError)
        }
    }

    private func decodePage(
        _ tiff: OpaquePointer, options: DecodingOptions, lastError: () -> String
    ) throws -> ImageContainer {
        var width: UInt32 = 0
        var height: UInt32 = 0
        guard imago_tiff_get_uint32(tiff, UInt32(TIFFTAG_IMAGEWIDTH), &width) != 0,
            imago_tiff_get_uint32(tiff, UInt32(TIFFTAG_IMAGELENGTH), &height) != 0
        else { throw corrupt("the image has no width or height") }
        try options.checkDimensions(width: Int(width), height: Int(height), format: .tiff)
        var bitsPerSample: UInt16 = 8
        _ = imago_tiff_get_uint16_defaulted(tiff, UInt32(TIFFTAG_BITSPERSAMPLE), &bitsPerSample)
        var tag: UInt16 = 1
        _ = imago_tiff_get_uint16_defaulted(tiff, UInt32(TIFFTAG_ORIENTATION), &tag)
        let orientation = ExifOrientation(rawValue: Int(tag)) ?? .up

        var reason = [CChar](repeating: 0, count: 1024)
        var rgba = TIFFRGBAImage()
        guard TIFFRGBAImageBegin(&rgba, tiff, 0, &reason) != 0 else {
            throw corrupt(String(nulTerminated: reason))
        }
        defer { TIFFRGBAImageEnd(&rgba) }
        // Read the rows as stored, top row first: the orientation is applied below, all eight cases alike.
        rgba.req_orientation = UInt16(ORIENTATION_TOPLEFT)
        rgba.orientation = UInt16(ORIENTATION_TOPLEFT)
        // libtiff packs ABGR in a native-endian word: R, G, B, A in memory on little-endian machines. Its RGBA
        // interface always hands back premultiplied colour (unassociated alpha is multiplied in), so any alpha
        // is undone here; a straight value under low alpha can come back 1 level off.
        let isAssociated = rgba.alpha != 0
        var image = try PixelBuffer(
            width: Int(width), height: Int(height), format: .rgba8,
            alphaMode: isAssociated ? .premultiplied : .straight
        ) { output in
            let raster = output.baseAddress?.assumingMemoryBound(to: UInt32.self)
            guard TIFFRGBAImageGet(&rgba, raster, width, height) != 0 else {
                let detail = lastError()
                throw corrupt(detail.isEmpty ? "the pixels could not be read" : detail)
            }
        }
        if isAssociated {
            image = image.unpremultiplied()
        } else if rgba.alpha == 0 {
            image = image.assumingOpaque()
        }
        let fitted = TargetFitting.fittedSize(
            of: image.size, within: options.targetSize, orientation: orientation, mode: options.targetMode)
        image = try image.resampledWithVectorKernel(to: fitted)
        if options.appliesOrientation { image = image.oriented(orientation) }
        var container = ImageContainer(
            frames: [ImageFrame(buffer: image)], format: .tiff,
            orientation: options.appliesOrientation ? .up : orientation,
            originalSize: orientation.swapsDimensions
                ? PixelSize(width: Int(height), height: Int(width)) : PixelSize(width: Int(width), height: Int(height)),
            bitDepth: Int(bitsPerSample))
        ColorManagement.apply(Self.iccProfile(of: tiff).map(ColorSource.icc), to: &container, options: options)
        if options.readsMetadata { container.metadata = TIFFMetadata.read(tiff) }
        return container
    }

    /// The `ICCProfile` tag's bytes, when there is one of at most ``ColorManagement/maximumProfileSize``.
    private static func iccProfile(of tiff: OpaquePointer) -> Data? {
        var count: UInt32 = 0
        var bytes: UnsafeRawPointer?
        guard imago_tiff_get_bytes(tiff, UInt32(TIFFTAG_ICCPROFILE), &count, &bytes) != 0, let bytes, count > 0,
            Int(count) <= ColorManagement.maximumProfileSize
        else { return nil }
        return Data(bytes: bytes, count: Int(count))
    }

    private func corrupt(_ reason: String) -> CodecError { .corrupt(format: .tiff, reason: reason) }
}

/// The encoded bytes libtiff reads through the client callbacks, with a position.
///
/// Only touched by the one decode call that created it, on that call's thread.
final class TIFFByteSource {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    static func from(_ handle: thandle_t?) -> TIFFByteSource? {
        handle.map { Unmanaged<TIFFByteSource>.fromOpaque($0).takeUnretainedValue() }
    }
}

private func tiffRead(_ handle: thandle_t?, _ buffer: UnsafeMutableRawPointer?, _ size: tmsize_t) -> tmsize_t {
    guard let source = TIFFByteSource.from(handle), let buffer, size > 0 else { return 0 }
    let count = min(Int(size), source.bytes.count - source.offset)
    guard count > 0, let base = source.bytes.baseAddress else { return 0 }
    buffer.copyMemory(from: base + source.offset, byteCount: count)
    source.offset += count
    return tmsize_t(count)
}

private func tiffWrite(_ handle: thandle_t?, _ buffer: UnsafeMutableRawPointer?, _ size: tmsize_t) -> tmsize_t {
    -1  // read-only
}

private func tiffSeek(_ handle: thandle_t?, _ offset: toff_t, _ whence: Int32) -> toff_t {
    guard let source = TIFFByteSource.from(handle),
        let position = tiffSeekTarget(offset, whence, current: source.offset, end: source.bytes.count)
    else { return toff_t.max }
    // A seek past the end is allowed; reads there return 0 bytes.
    source.offset = min(position, source.bytes.count)
    return toff_t(source.offset)
}

/// Where a libtiff seek of `offset` from `whence` (`SEEK_SET`, `SEEK_CUR`, `SEEK_END`) lands in a file of `end`
/// bytes read or written at `current`; `nil` for another `whence` or a position past 4 GiB (classic TIFF's
/// offsets are 32-bit).
func tiffSeekTarget(_ offset: toff_t, _ whence: Int32, current: Int, end: Int) -> Int? {
    let origin: Int
    switch whence {
    case SEEK_SET: origin = 0
    case SEEK_CUR: origin = current
    case SEEK_END: origin = end
    default: return nil
    }
    guard offset <= toff_t(UInt32.max), origin + Int(offset) <= Int(UInt32.max) else { return nil }
    return origin + Int(offset)
}

private func tiffClose(_ handle: thandle_t?) -> Int32 { 0 }

private func tiffSize(_ handle: thandle_t?) -> toff_t {
    TIFFByteSource.from(handle).map { toff_t($0.bytes.count) } ?? 0
}

/// Runs `body` with libtiff open options whose errors go to `message` (a buffer of `IMAGO_TIFF_MESSAGE_SIZE` bytes,
/// the last error kept) and whose warnings are dropped, so nothing reaches stderr; throws `failure` when libtiff
/// cannot allocate them.
func withQuietTIFFOptions<R>(
    failure: @autoclosure () -> CodecError, _ body: (OpaquePointer, UnsafeMutablePointer<CChar>) throws -> R
) throws -> R {
    guard let openOptions = TIFFOpenOptionsAlloc() else { throw failure() }
    defer { TIFFOpenOptionsFree(openOptions) }
    let message = UnsafeMutablePointer<CChar>.allocate(capacity: Int(IMAGO_TIFF_MESSAGE_SIZE))
    message.initialize(repeating: 0, count: Int(IMAGO_TIFF_MESSAGE_SIZE))
    defer { message.deallocate() }
    imago_tiff_quiet(openOptions, message)
    return try body(openOptions, message)
}
