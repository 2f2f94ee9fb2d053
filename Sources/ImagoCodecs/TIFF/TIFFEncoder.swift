import CTIFF
import Foundation
import ImagoCore

/// Encodes TIFF with libtiff, written to memory through `TIFFClientOpenExt` callbacks (no temporary file).
///
/// - One page of 8-bit samples, contiguous: RGB for an opaque image, RGB with an unassociated (straight) alpha
///   sample when it has transparency, one grey sample for `gray8`.
/// - Lossless LZW with horizontal differencing, which every TIFF reader supports and which keeps photos a good
///   deal smaller than imgproxy's uncompressed TIFFs; strips of libtiff's default size.
/// - ``EncodingOptions/colorProfile`` is embedded (`ICCProfile` tag); ``EncodingOptions/quality`` does not apply.
/// - ``EncodingOptions/metadata``: XMP as `XMLPacket`, IPTC as `Photoshop`, and the EXIF block's IFD0 text tags
///   (artist, copyright, description, camera, software, date) as the page's own (``TIFFMetadata``).
/// - libtiff's errors and warnings go to per-handle handlers, never to stderr.
///
/// Thread-safe: the encoder has no state; each call opens its own libtiff handle.
///
/// ```swift
/// let tiff = try TIFFEncoder().encode(image, options: EncodingOptions())
/// ```
public struct TIFFEncoder: ImageEncoding {
    /// A TIFF encoder; it has no settings.
    public init() {}

    /// `.tiff`.
    public var format: ImageFormat { .tiff }

    /// Encodes `image` as described on the type.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` with libtiff's message.
    public func encode(_ image: PixelBuffer, options: EncodingOptions) throws -> Data {
        let straight = ImageProcessors.straight(image)
        let isGray = straight.format == .gray8
        let hasAlpha = !isGray && straight.hasTransparency
        let samples = isGray ? 1 : hasAlpha ? 4 : 3
        let sink = TIFFByteSink()
        return try withQuietTIFFOptions(failure: failed("libtiff could not allocate options")) { openOptions, message in
            guard
                let tiff = TIFFClientOpenExt(
                    "memory", "w", Unmanaged.passUnretained(sink).toOpaque(), sinkRead, sinkWrite, sinkSeek,
                    sinkClose, sinkSize, nil, nil, openOptions)
            else { throw failed(String(cString: message)) }
            var isClosed = false
            defer { if !isClosed { TIFFClose(tiff) } }
            _ = imago_tiff_set_uint32(tiff, UInt32(TIFFTAG_IMAGEWIDTH), UInt32(straight.width))
            _ = imago_tiff_set_uint32(tiff, UInt32(TIFFTAG_IMAGELENGTH), UInt32(straight.height))
            _ = imago_tiff_set_uint16(tiff, UInt32(TIFFTAG_SAMPLESPERPIXEL), UInt16(samples))
            _ = imago_tiff_set_uint16(tiff, UInt32(TIFFTAG_BITSPERSAMPLE), 8)
            _ = imago_tiff_set_uint16(
                tiff, UInt32(TIFFTAG_PHOTOMETRIC), UInt16(isGray ? PHOTOMETRIC_MINISBLACK : PHOTOMETRIC_RGB))
            _ = imago_tiff_set_uint16(tiff, UInt32(TIFFTAG_PLANARCONFIG), UInt16(PLANARCONFIG_CONTIG))
            _ = imago_tiff_set_uint16(tiff, UInt32(TIFFTAG_ORIENTATION), UInt16(ORIENTATION_TOPLEFT))
            _ = imago_tiff_set_uint16(tiff, UInt32(TIFFTAG_COMPRESSION), UInt16(COMPRESSION_LZW))
            _ = imago_tiff_set_uint16(tiff, UInt32(TIFFTAG_PREDICTOR), UInt16(PREDICTOR_HORIZONTAL))
            if hasAlpha {
                var unassociated = UInt16(EXTRASAMPLE_UNASSALPHA)
                _ = imago_tiff_set_extra_samples(tiff, 1, &unassociated)
            }
            if let profile = options.colorProfile?.data, !profile.isEmpty {
                _ = profile.withUnsafeBytes {
                    imago_tiff_set_bytes(tiff, UInt32(TIFFTAG_ICCPROFILE), UInt32($0.count), $0.baseAddress)
                }
            }
            if let metadata = options.metadata?.bounded { TIFFMetadata.write(metadata, to: tiff) }
            _ = imago_tiff_set_uint32(tiff, UInt32(TIFFTAG_ROWSPERSTRIP), TIFFDefaultStripSize(tiff, 0))
            var row = [UInt8](repeating: 0, count: straight.width * samples)
            for y in 0..<straight.height {
                let written = row.withUnsafeMutableBufferPointer { row in
                    straight.copyRow(y, into: row.baseAddress!, dropsAlpha: samples == 3)
                    return TIFFWriteScanline(tiff, row.baseAddress, UInt32(y), 0)
                }
                guard written == 1 else { throw failed(String(cString: message)) }
            }
            isClosed = true
            TIFFClose(tiff)  // writes the directory
            guard message.pointee == 0 else { throw failed(String(cString: message)) }
            return Data(sink.bytes)
        }
    }

    private func failed(_ reason: String) -> CodecError {
        .encodingFailed(format: .tiff, reason: reason.isEmpty ? "libtiff failed" : reason)
    }
}

/// The bytes libtiff writes through the client callbacks, with a position (it seeks back to link directories).
///
/// Only touched by the one encode call that created it, on that call's thread.
final class TIFFByteSink {
    var bytes: [UInt8] = []
    var offset = 0

    static func from(_ handle: thandle_t?) -> TIFFByteSink? {
        handle.map { Unmanaged<TIFFByteSink>.fromOpaque($0).takeUnretainedValue() }
    }
}

private func sinkRead(_ handle: thandle_t?, _ buffer: UnsafeMutableRawPointer?, _ size: tmsize_t) -> tmsize_t {
    guard let sink = TIFFByteSink.from(handle), let buffer, size > 0 else { return 0 }
    let count = min(Int(size), sink.bytes.count - sink.offset)
    guard count > 0 else { return 0 }
    sink.bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + sink.offset, byteCount: count) }
    sink.offset += count
    return tmsize_t(count)
}

private func sinkWrite(_ handle: thandle_t?, _ buffer: UnsafeMutableRawPointer?, _ size: tmsize_t) -> tmsize_t {
    guard let sink = TIFFByteSink.from(handle), let buffer, size >= 0 else { return -1 }
    let count = Int(size)
    let end = sink.offset + count
    if end > sink.bytes.count { sink.bytes.append(contentsOf: repeatElement(0, count: end - sink.bytes.count)) }
    sink.bytes.withUnsafeMutableBytes {
        $0.baseAddress!.advanced(by: sink.offset).copyMemory(from: buffer, byteCount: count)
    }
    sink.offset = end
    return size
}

private func sinkSeek(_ handle: thandle_t?, _ offset: toff_t, _ whence: Int32) -> toff_t {
    guard let sink = TIFFByteSink.from(handle),
        let position = tiffSeekTarget(offset, whence, current: sink.offset, end: sink.bytes.count)
    else { return toff_t.max }
    sink.offset = position  // past the end: the file grows when written there
    return toff_t(position)
}

private func sinkClose(_ handle: thandle_t?) -> Int32 { 0 }

private func sinkSize(_ handle: thandle_t?) -> toff_t {
    TIFFByteSink.from(handle).map { toff_t($0.bytes.count) } ?? 0
}
