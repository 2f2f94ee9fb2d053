import CColorKernel
import CJPEGStrips
import CJPEGTurbo
import Foundation
import ImagoCore

/// Decodes JPEG with libjpeg-turbo 2.1 (TurboJPEG API): baseline and progressive, grayscale, CMYK/YCCK, restart
/// markers, 8-bit precision (12-bit and lossless JPEG fail with an error), up to ``DecodingOptions/pixelLimit``.
///
/// - Output: colour files decode to `rgba8` (alpha 255, marked ``PixelBuffer/isKnownOpaque``); **grayscale files
///   decode to `gray8`** (a quarter of the memory; `PixelBuffer`'s pixel subscript expands gray to RGBA when
///   read). `PNGDecoder` follows the same rule.
///   CMYK and YCCK files are converted to RGB (Adobe APP14 files store inverted ink values and are read so):
///   through their ICC profile, or without one through a standard CMYK profile (Ghostscript's "Artifex CMYK
///   SWOP Profile", `/usr/share/color/icc/ghostscript/default_cmyk.icc` from Debian's `libgs-common`, see
///   `ColorManagement.defaultCMYKProfilePaths`) when it is installed, else naively (`r = 255 − c − k`…), which
///   is also what ``ColorPolicy/ignore`` gives.
/// - Downsampling: with ``DecodingOptions/targetSize`` (or ``DecodingOptions/decodedByteLimit``) the image is
///   decoded at the smallest DCT scale (1/8 … 1) that still covers the aspect-fit size, then area-averaged to
///   exactly that size; no full-size buffer is allocated. An image over ``DecodingOptions/pixelLimit`` is decoded
///   so when that scale fits the limit (baseline files; progressive ones only through the DC reader at 1/8), and
///   refused otherwise. Never upscales. The target applies to the displayed (EXIF-oriented) image.
///   **Progressive thumbnails at 1/8 scale read only the DC scans** (a pure-Swift reader): libjpeg keeps every
///   DCT coefficient of a multi-scan file (128 bytes a block: 109 MB for a 5250×3450 photo) whatever the scale,
///   while at 1/8 it uses only the DC one. The result equals libjpeg's 1/8 decode exactly for gray, 4:4:4, 4:2:2
///   and 4:4:0 files; 4:2:0 chroma is interpolated from the DC values (libjpeg uses a 2×2 IDCT there), a few
///   levels apart. Any file the reader does not handle exactly as libjpeg would (corrupt, truncated, unusual) is
///   decoded by libjpeg as before, so errors and warnings are unchanged.
///   ``ImageContainer/originalSize`` is the full size (oriented when the orientation was applied).
/// - EXIF orientation (APP1): applied to the pixels when ``DecodingOptions/appliesOrientation`` (default), else
///   reported in ``ImageContainer/orientation``.
/// - Truncated data (no EOI after the scan): with ``DecodingOptions/allowsPartialData`` what decoded is returned
///   with ``ImageContainer/isPreview`` set (missing blocks are gray; a progressive file shows the scans it has);
///   otherwise ``CodecError/truncated(format:)``.
///   libjpeg's warnings about otherwise complete files (extraneous bytes, a corrupt segment it resynchronised
///   past) are not errors: the image is returned, as browsers do.
///
/// Thread-safe: every decode uses its own TurboJPEG handle (creating one costs microseconds); nothing is shared.
///
/// ```swift
/// let thumbnail = try JPEGDecoder().decode(data, options: DecodingOptions(targetSize: PixelSize(width: 256, height: 256)))
/// ```
public struct JPEGDecoder: ImageDecoding {
    /// Whether progressive files decoded at 1/8 scale may use the DC-scan reader (default `true`). Tests and
    /// benchmarks turn it off to compare with libjpeg's own decode.
    package var allowsProgressiveDC = true

    /// Which decoder made the pixels of a decode (see ``decodeReportingPath(_:options:)``).
    package enum Path: Sendable, Equatable {
        /// libjpeg-turbo through TurboJPEG.
        case libjpeg
        /// The DC scans of a progressive file, read by `JPEGProgressiveDC`.
        case progressiveDC
    }

    /// A decoder with the default behaviour described on the type.
    public init() {}

    /// `[.jpeg]`.
    public var formats: Set<ImageFormat> { [.jpeg] }

    /// Decodes `data` as described on the type.
    ///
    /// - Throws: ``CodecError/empty``, ``CodecError/tooManyPixels(width:height:limit:)`` (before any pixel
    ///   allocation), ``CodecError/truncated(format:)`` or ``CodecError/corrupt(format:reason:)`` with libjpeg's
    ///   message.
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        try decodeReportingPath(data, options: options).container
    }

    /// ``decode(_:options:)``, also telling which decoder made the pixels.
    package func decodeReportingPath(
        _ data: Data, options: DecodingOptions
    ) throws -> (
        container: ImageContainer, path: Path
    ) {
        guard !data.isEmpty else { throw CodecError.empty }
        return try data.withUnsafeBytes { try decode(bytes: $0, options: options) }
    }

    private func decode(bytes: UnsafeRawBufferPointer, options: DecodingOptions) throws -> (ImageContainer, Path) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { throw CodecError.empty }
        let markers = JPEGMarkers(scanning: bytes)
        var source = Source(bytes: base.assumingMemoryBound(to: UInt8.self), count: UInt(bytes.count), markers: markers)

        guard let handle = tjInitDecompress() else {
            throw CodecError.corrupt(format: .jpeg, reason: "TurboJPEG could not create a decompressor (out of memory)")
        }
        defer { tjDestroy(handle) }

        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        // A header call that only warned (e.g. extraneous bytes before a marker) has filled in the header.
        let headerStatus = tjDecompressHeader3(
            handle, source.bytes, source.count, &width, &height, &subsampling, &colorspace)
        let headerIsTurboJPEGs = headerStatus == 0 || Self.isWarning(handle)
        if !headerIsTurboJPEGs {
            let reason = Self.message(handle)
            // TurboJPEG 2.1's header call rejects sampling factors it cannot name (some CMYK files) although
            // tjDecompress2 decodes them: fall back to the frame header read by the marker scan.
            if reason.contains("subsampling"), let frame = markers.frame {
                (width, height) = (Int32(clamping: frame.width), Int32(clamping: frame.height))
                colorspace = Int32(
                    frame.components == 1
                        ? TJCS_GRAY.rawValue : frame.components == 4 ? TJCS_CMYK.rawValue : TJCS_YCbCr.rawValue)
            } else if markers.isTruncated {
                throw CodecError.truncated(format: .jpeg)
            } else {
                throw CodecError.corrupt(format: .jpeg, reason: reason)
            }
        }
        let full = PixelSize(width: Int(width), height: Int(height))
        let layout = Layout(colorspace: colorspace, isAdobe: markers.hasAdobeMarker)
        let delivered = options.deliveredSize(
            of: full, orientation: markers.orientation, bytesPerPixel: layout.pixelFormat.bytesPerPixel)
        let scaled = Self.scaledSize(of: full, covering: delivered) { !options.exceedsPixelLimit($0) }
        // Only the DCT scale, not the area average after it, when the caller resamples its own way.
        let fitted = options.shrinksOnlyWhileDecoding ? scaled : delivered
        // The DC reader only for what TurboJPEG calls YCbCr or gray: RGB files (Adobe transform 0, component ids
        // R, G, B) have 3 components too, and CMYK/YCCK are left to libjpeg.
        let isGray = colorspace == Int32(TJCS_GRAY.rawValue)
        let readsDCScans =
            allowsProgressiveDC && headerIsTurboJPEGs && (isGray || colorspace == Int32(TJCS_YCbCr.rawValue))
            && !markers.isTruncated && Self.decodesAtOneEighth(full, scaled: scaled)
        // Over the pixel limit, only a reduced decode that never holds the full size is allowed: a DCT-scaled
        // baseline decode (libjpeg works a row of blocks at a time), or the DC scans of a progressive file at 1/8
        // (libjpeg would keep every coefficient of a progressive file).
        let isOverLimit = options.exceedsPixelLimit(full) && full.width > 0 && full.height > 0
        if isOverLimit {
            let hasReducedDecode =
                scaled != full && !options.exceedsPixelLimit(scaled) && (!markers.isProgressive || readsDCScans)
            guard hasReducedDecode else {
                throw CodecError.tooManyPixels(width: full.width, height: full.height, limit: options.pixelLimit)
            }
        } else {
            try options.checkDimensions(width: full.width, height: full.height, format: .jpeg)
        }
        // Colour: the ICC profile is read unless the policy ignores it. CMYK goes through it while decompressing
        // (the naive conversion when there is none or it is unusable); everything else is converted at the end.
        let colorSource = options.colorPolicy == .ignore ? nil : markers.iccProfile(in: bytes)
        let iccProfile: Data? = if case .icc(let data) = colorSource { data } else { nil }
        var cmykProfileDescription: String?
        var cmykWarning: String?
        if case .cmyk = layout, case .unreadable(let reason) = colorSource { cmykWarning = reason }
        if case .cmyk(let isInverted) = layout, let iccProfile {
            let cmyk = ColorManagement.cmykTransform(profile: iccProfile, isInverted: isInverted, options: options)
            source.cmykTransform = cmyk.transform
            cmykProfileDescription = cmyk.description
            cmykWarning = cmyk.warning
        }
        if case .cmyk(let isInverted) = layout, source.cmykTransform == nil, options.colorPolicy != .ignore {
            // No profile, or one that is unusable: the standard CMYK profile when it is installed (else the naive
            // conversion).
            source.cmykTransform = ColorManagement.defaultCMYKTransform(isInverted: isInverted, options: options)
        }
        // A full-size baseline file that the vector kernel converts to sRGB: converted strip by strip while
        // libjpeg decodes (`CJPEGStrips`), so the 48 MB of a 12 MP image are not read back in a second pass.
        var fused: (tables: cimago_color_tables, description: String)?
        if layout == .rgba, scaled == full, scaled == fitted, !markers.isProgressive, !markers.isTruncated,
            options.colorPolicy == .convertToSRGB, let iccProfile
        {
            let prepared = ColorManagement.prepared(.icc(iccProfile), layout: .rgba, options: options)
            if case .transform(let transform) = prepared.kind, let tables = transform.fast?.kernel {
                fused = (tables, prepared.description)
            }
        }
        var isConverted = false

        var isPartial = false
        var image: PixelBuffer
        var path = Path.libjpeg
        if readsDCScans,
            let dc = JPEGProgressiveDC.decode(bytes, width: full.width, height: full.height, isGray: isGray)
        {
            path = .progressiveDC
            image = scaled == fitted ? dc : try dc.resampledWithVectorKernel(to: fitted)  // opaque in, opaque out
        } else if isOverLimit && markers.isProgressive {
            // The DC reader declined this file; libjpeg would need the full image's coefficients.
            throw CodecError.tooManyPixels(width: full.width, height: full.height, limit: options.pixelLimit)
        } else if scaled == fitted {
            // Straight into the result: the decoded size is the final size.
            image = try PixelBuffer(width: scaled.width, height: scaled.height, format: layout.pixelFormat) { out in
                adviseHugePages(out)
                if let fused, Self.decompressConverting(source, into: out, size: scaled, tables: fused.tables) {
                    isConverted = true
                    return
                }
                isPartial = try Self.decompress(
                    handle, source, into: out, size: scaled, layout: layout,
                    allowsPartialData: options.allowsPartialData)
            }.assumingOpaque()
        } else {
            // DCT-scaled, then area-averaged to the exact fitted size. The intermediate is a fresh buffer: pooling
            // it behind a lock saved nothing in the decode benchmark (BENCHMARKS.md), since
            // glibc's dynamic mmap threshold already recycles freed blocks of the same size without page faults.
            let intermediate = try PixelBuffer(
                width: scaled.width, height: scaled.height, format: layout.pixelFormat
            ) { out in
                adviseHugePages(out)
                isPartial = try Self.decompress(
                    handle, source, into: out, size: scaled, layout: layout,
                    allowsPartialData: options.allowsPartialData)
            }.assumingOpaque()
            image = try intermediate.resampledWithVectorKernel(to: fitted)  // opaque: no alpha scan, opaque result
        }

        var orientation = markers.orientation
        var originalSize = full
        if options.appliesOrientation && orientation != .up {
            image = image.oriented(orientation)
            if orientation.swapsDimensions { originalSize = PixelSize(width: full.height, height: full.width) }
            orientation = .up
        }
        var container = ImageContainer(
            frames: [ImageFrame(buffer: consume image)], format: .jpeg, orientation: orientation, isPreview: isPartial,
            originalSize: originalSize)
        if case .cmyk = layout {
            container.sourceColorProfileDescription = cmykProfileDescription
            container.colorWarning = cmykWarning
        } else if isConverted {
            container.sourceColorProfileDescription = fused?.description
        } else {
            ColorManagement.apply(colorSource, to: &container, options: options)
        }
        if options.readsMetadata { container.metadata = markers.metadata(in: bytes) }
        return (container, path)
    }

    /// The encoded bytes and what the marker scan learnt about them.
    private struct Source {
        let bytes: UnsafePointer<UInt8>
        let count: UInt
        let markers: JPEGMarkers
        /// The CMYK file's ICC profile as a transform to sRGB; `nil`: the naive conversion.
        var cmykTransform: LCMSTransform?
    }

    /// Decompresses into `out` at `size` (one of TurboJPEG's scaled sizes). Returns `true` when the data was
    /// truncated and the rest of the image is filler (only when `allowsPartialData`; otherwise that throws
    /// ``CodecError/truncated(format:)``); throws for fatal errors.
    ///
    /// Nothing here zeroes `out` (it arrives uninitialised). The `memset` that profiles show under this call (a
    /// few per cent of a thumbnail decode) is libjpeg-turbo's own: before the entropy decoder fills an MCU, its
    /// coefficient blocks are cleared (`blocks_in_MCU × 128` bytes, libturbojpeg.so.0.2.0 +0x1d680), for every
    /// MCU of the full-size image whatever the DCT scale. The TurboJPEG API has no way around it.
    private static func decompress(
        _ handle: tjhandle, _ source: Source, into out: UnsafeMutableRawBufferPointer, size: PixelSize, layout: Layout,
        allowsPartialData: Bool
    ) throws -> Bool {
        guard let destination = out.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw CodecError.corrupt(format: .jpeg, reason: "empty output buffer")
        }
        let pitch = Int32(size.width * layout.bytesPerPixel)
        // LIMITSCANS: a progressive file with thousands of scans is an attack on decode time, not an image.
        let status = tjDecompress2(
            handle, source.bytes, source.count, destination, Int32(size.width), pitch, Int32(size.height),
            layout.turboFormat.rawValue, TJFLAG_LIMITSCANS)
        if status != 0 && !isWarning(handle) {
            if source.markers.isTruncated { throw CodecError.truncated(format: .jpeg) }
            throw CodecError.corrupt(format: .jpeg, reason: message(handle))
        }
        let isPartial = status != 0 && source.markers.isTruncated
        if isPartial && !allowsPartialData { throw CodecError.truncated(format: .jpeg) }
        if case .cmyk(let isInverted) = layout {
            if let transform = source.cmykTransform {
                transform.convert(out)
            } else {
                convertCMYKToRGBA(out, isInverted: isInverted)
            }
        }
        return isPartial
    }

    /// Decodes `source` at its full `size` into `out` with libjpeg's scanline API, converting each strip to sRGB
    /// with the colour kernel's `tables` as soon as it is written. `false` when that path declined or met anything
    /// unusual (a warning, an error, a progressive file): `out` is then partly written and the caller decodes it
    /// the usual way, which overwrites every pixel.
    private static func decompressConverting(
        _ source: Source, into out: UnsafeMutableRawBufferPointer, size: PixelSize, tables: cimago_color_tables
    ) -> Bool {
        guard let destination = out.baseAddress?.assumingMemoryBound(to: UInt8.self),
            out.count >= size.pixelCount * 4, let width = Int32(exactly: size.width),
            let height = Int32(exactly: size.height)
        else { return false }
        var tables = tables
        return cimago_jpeg_decode_converting(source.bytes, Int(source.count), destination, width, height, &tables) == 0
    }

    /// Whether the failed call on `handle` only warned, leaving a completely written image: truncation (the
    /// missing rows are gray) or a complaint about an otherwise complete file that libjpeg resynchronised past.
    ///
    /// `tjGetErrorCode` alone cannot tell: TurboJPEG 2.1 keeps reporting `TJERR_WARNING` when a fatal error
    /// follows an earlier warning (then the buffer is only partly written). The message can: a fatal error
    /// always replaces it, while a warning leaves the first warning's text, and libjpeg's warning texts are a
    /// fixed set (the JWRN_ entries of jerror.h).
    static func isWarning(_ handle: tjhandle) -> Bool {
        guard tjGetErrorCode(handle) == TJERR_WARNING.rawValue else { return false }
        let text = message(handle)
        return warningPrefixes.contains { text.hasPrefix($0) }
    }

    private static let warningPrefixes = [
        "Corrupt JPEG data",  // extraneous bytes, premature end of segment, bad Huffman/arithmetic code, resync
        "Premature end of JPEG file",  // truncation
        "Inconsistent progression sequence",
        "Invalid SOS parameters for sequential JPEG",
        "Warning: unknown JFIF revision",
        "Unknown Adobe color transform code",
        "Application transferred too many scanlines",
    ]

    /// TurboJPEG's message for the last error on `handle`.
    static func message(_ handle: tjhandle) -> String {
        guard let cString = tjGetErrorStr2(handle) else { return "unknown libjpeg-turbo error" }
        return String(cString: cString)
    }
}
