import CAVIF
import Foundation
import ImagoCore

/// Decodes AVIF stills and image sequences with libavif 0.11 (AV1 through dav1d).
///
/// - Stills, grids, alpha (straight; premultiplied files are unpremultiplied; a grid whose tiles each carry an
///   alpha item, which libavif 0.11 misses, through `AVIFTileAlpha`), 8/10/12-bit samples delivered as
///   8-bit RGBA (``ImageContainer/bitDepth`` says what the file held), 4:2:0, 4:2:2, 4:4:4 and monochrome.
/// - The item transforms are applied in MIAF order: the `clap` crop (after conversion to RGB, so an odd crop
///   offset with 4:2:0 works: libavif's strict checks are relaxed), then `irot` and `imir`. With
///   ``DecodingOptions/appliesOrientation`` `false` the crop is still applied, and `irot`/`imir` are returned as
///   ``ImageContainer/orientation`` instead.
/// - Sequences (`avis`): every frame with its duration from the sample table; ``ImageContainer/loopCount`` from
///   the colour track's edit list (libavif 0.11 has no `repetitionCount`; see `ISOBMFFBoxes`): 1 when it plays
///   once, 0 when it repeats forever, and 0 when the file has no edit list (browsers loop such files).
/// - Limits before any pixel allocation: the size from `ispe` against ``DecodingOptions/pixelLimit`` (then
///   libavif's own `imageSizeLimit` is lowered to it, so dav1d refuses larger frames), the frame count against
///   ``DecodingOptions/frameLimit`` (as libavif's `imageCountLimit`, before it builds its sample table, so a longer
///   sequence is refused even when only its first frame is wanted), the output bytes of all frames against
///   ``DecodingOptions/animationByteLimit`` and the full-size work against ``DecodingOptions/animationWorkLimit``.
/// - A sequence whose frames would exceed ``DecodingOptions/animationMemoryBudget`` is decoded on demand: the
///   container keeps the file and a libavif decoder and produces frames through ``ImageContainer/frameSource``,
///   seeking with libavif's key frame index (`avifDecoderNthImage`) when asked for an earlier or distant frame.
/// - ``DecodingOptions/targetSize``: libavif cannot scale, so each frame is decoded full size and then
///   downsampled (area averaging) to fit.
/// - A sequence that breaks off after at least one frame returns the frames decoded so far; a still that is
///   truncated throws ``CodecError/truncated(format:)`` (AV1 has no partial decode; ``DecodingOptions/
///   allowsPartialData`` changes nothing).
/// - Works around libavif 0.11's faults: 8-bit limited-range monochrome is converted without libyuv (which
///   leaves it unexpanded).
///
/// The colour information (`colr`: ICC profile, else CICP) is applied as ``DecodingOptions/colorPolicy`` says
/// (default: converted to sRGB). A frame returned at full size is converted while it comes out of YUV, a strip of
/// rows at a time; a downsampled one after it is fitted. The internal `decodeWithColour` returns the colour
/// description beside unconverted pixels.
///
/// Thread-safe: the decoder has no state; each call creates its own libavif decoder (one thread).
///
/// ```swift
/// let container = try AVIFDecoder().decode(data, options: DecodingOptions())
/// print(container.frames.count, container.bitDepth ?? 8)
/// ```
public struct AVIFDecoder: ImageDecoding {
    /// Threads libavif and dav1d may use per decode. Default 1.
    public var maxThreads: Int

    /// RGBA bytes per strip when a frame is converted to sRGB while it comes out of YUV: 1 MiB, 64 rows of a
    /// 4032-pixel photo (each strip's view also converts 4 rows beyond it: see `AVIFSession`), well inside L2.
    static let defaultColourStripBytes = 1 << 20
    /// The strip size used; tests make it small to cut a small image into many strips.
    var colourStripBytes = defaultColourStripBytes

    /// An AVIF decoder using `maxThreads` threads per decode (default 1).
    public init(maxThreads: Int = 1) {
        self.maxThreads = max(1, maxThreads)
    }

    /// `[.avif]`.
    public var formats: Set<ImageFormat> { [.avif] }

    /// Decodes `data`: every frame of a sequence (only the first with ``DecodingOptions/decodesFirstFrameOnly``).
    ///
    /// - Throws: ``CodecError``: `.empty`, `.corrupt`, `.truncated`, `.tooManyPixels`, `.tooManyFrames`,
    ///   `.animationTooLarge`, `.animationTooMuchWork`.
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        var decoded = try decode(data, options: options, convertsColour: true)
        if let description = decoded.convertedFrom {
            decoded.result.container.sourceColorProfileDescription = description
        } else {
            // In place, on the only reference to the frames.
            let source = decoded.result.colour.colorSource
            ColorManagement.apply(source, to: &decoded.result.container, options: options)
        }
        return decoded.result.container
    }

    /// Decodes `data` and returns the file's colour description beside the pixels (which are not converted).
    func decodeWithColour(_ data: Data, options: DecodingOptions) throws -> DecodedWithColour {
        try decode(data, options: options, convertsColour: false).result
    }

    /// Decodes `data`. With `convertsColour`, frames that are returned at full size and whose file's colour
    /// converts to sRGB under ``DecodingOptions/colorPolicy`` are converted while they come out of YUV, strip by
    /// strip (the rows still in cache: at 12 MP this saves a pass over 48 MB); `convertedFrom` is then the
    /// source's description and the colour stage must not run again. Otherwise the pixels are as stored.
    private func decode(
        _ data: Data, options: DecodingOptions, convertsColour: Bool
    ) throws -> (result: DecodedWithColour, convertedFrom: String?) {
        guard !data.isEmpty else { throw CodecError.empty }
        return try data.withUnsafeBytes { raw in
            guard raw.baseAddress != nil else { throw CodecError.empty }
            // A grid's canvas too, as its bytes declare it (libavif 0.11 checks it, as a parse failure).
            try ISOBMFFItems.checkDeclaredSizes(in: raw, options: options, format: .avif)
            let decoder = try parsedDecoder(over: raw, options: options)
            defer { avifDecoderDestroy(decoder) }
            guard let image = decoder.pointee.image else {
                throw CodecError.corrupt(format: .avif, reason: "no image after parsing")
            }
            var session = AVIFSession(
                decoder: decoder, options: options,
                size: PixelSize(width: Int(image.pointee.width), height: Int(image.pointee.height)))
            try session.checkLimits()
            if decoder.pointee.alphaPresent == AVIF_FALSE, decoder.pointee.imageCount == 1 {
                session.tileAlpha = AVIFTileAlpha(raw, codec: self)
            }
            // Read before the reset in tightenLimits, which frees `decoder.image` and makes a new one.
            let colour = Self.colour(of: image.pointee)
            let metadata = options.readsMetadata ? Self.metadata(of: image.pointee) : nil
            if session.isOverBudget {
                var container = try AVIFFrameDecoder.container(for: raw, decoder: self, options: options)
                container.metadata = metadata
                return ((container, colour), nil)
            }
            var convertedFrom: String?
            if convertsColour, options.colorPolicy == .convertToSRGB, session.isShownAtFullSize,
                let source = colour.colorSource
            {
                // Peeking: an unusable source is reported by the colour stage, which then runs as usual.
                let prepared = ColorManagement.prepared(source, layout: .rgba, options: options)
                if case .transform(let transform) = prepared.kind {
                    session.stripColour = transform
                    session.stripBytes = colourStripBytes
                    convertedFrom = prepared.description
                }
            }
            try tightenLimits(decoder, options: options)
            let frames = try session.decodeFrames()
            let loops = decoder.pointee.imageCount > 1 ? (ISOBMFFBoxes.playCount(in: raw) ?? 0) : 0
            var container = ImageContainer(
                frames: frames, format: .avif, loopCount: loops,
                orientation: options.appliesOrientation ? .up : session.transform.orientation,
                originalSize: session.displayedSize, bitDepth: session.bitDepth)
            container.metadata = metadata
            return ((container, colour), convertedFrom)
        }
    }

    /// The file's EXIF and XMP metadata items, as libavif read them (``ImageMetadata/bounded``).
    static func metadata(of image: avifImage) -> ImageMetadata? {
        func block(_ data: avifRWData) -> Data? {
            guard let bytes = data.data, data.size > 0, data.size <= ImageMetadata.maximumBlockLength else {
                return nil
            }
            return Data(bytes: bytes, count: data.size)
        }
        return ImageMetadata(exif: block(image.exif), xmp: block(image.xmp)).bounded
    }

    /// A new libavif decoder, configured as this one configures it, that has parsed `bytes` (which must outlive
    /// it). The caller destroys it; on a throw it is already destroyed. A file whose metadata items libavif refuses
    /// (an EXIF item without a TIFF header) is parsed again without them: metadata never costs the image.
    ///
    /// - Throws: ``CodecError`` when libavif cannot create the decoder or parse the file.
    func parsedDecoder(
        over bytes: UnsafeRawBufferPointer, options: DecodingOptions
    ) throws -> UnsafeMutablePointer<avifDecoder> {
        guard options.readsMetadata else { return try parsedDecoderOnce(over: bytes, options: options) }
        do {
            return try parsedDecoderOnce(over: bytes, options: options)
        } catch CodecError.tooManyFrames(let limit) {
            // The sample count, not the metadata: parsing again without it would refuse the same table again.
            throw CodecError.tooManyFrames(limit: limit)
        } catch {
            var withoutMetadata = options
            withoutMetadata.readsMetadata = false
            return try parsedDecoderOnce(over: bytes, options: withoutMetadata)
        }
    }

    private func parsedDecoderOnce(
        over bytes: UnsafeRawBufferPointer, options: DecodingOptions
    ) throws -> UnsafeMutablePointer<avifDecoder> {
        guard let decoder = avifDecoderCreate() else {
            throw CodecError.corrupt(format: .avif, reason: "libavif could not create a decoder")
        }
        do {
            configure(decoder, options: options)
            let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
            try Self.check(avifDecoderSetIOMemory(decoder, base, bytes.count), decoder)
            let parsed = avifDecoderParse(decoder)
            if parsed != AVIF_RESULT_OK, Self.diagnostic(of: decoder).contains("imageCountLimit") {
                throw CodecError.tooManyFrames(limit: options.frameLimit)
            }
            try Self.check(parsed, decoder)
            return decoder
        } catch {
            avifDecoderDestroy(decoder)
            throw error
        }
    }

    func configure(_ decoder: UnsafeMutablePointer<avifDecoder>, options: DecodingOptions) {
        decoder.pointee.maxThreads = Int32(clamping: maxThreads)
        // Strict mode rejects valid-looking files libavif 0.11 misjudges (an odd clap offset with 4:2:0); the
        // crop is validated here and applied after conversion to RGB instead.
        decoder.pointee.strictFlags = avifStrictFlags(AVIF_STRICT_DISABLED.rawValue)
        // The metadata items are read only when asked for (libavif copies them, and parses the EXIF orientation).
        decoder.pointee.ignoreExif = options.readsMetadata ? AVIF_FALSE : AVIF_TRUE
        decoder.pointee.ignoreXMP = options.readsMetadata ? AVIF_FALSE : AVIF_TRUE
        // Parsing allocates no pixels: it runs with libavif's default size bound (and no per-dimension bound), so
        // the header's size reaches our own check and fails with a typed error (`.tooManyPixels`) rather than
        // libavif's "BMFF parsing failed".
        decoder.pointee.imageDimensionLimit = 0
        // It does allocate for every sample of a sequence, far more than the sample table costs in the file
        // (RELIABILITY.md §48): the count is bounded by frameLimit before the table is built, even when only the
        // first frame is wanted (libavif 0.11 reads the whole table either way). libavif's own default: 2,592,000.
        decoder.pointee.imageCountLimit = UInt32(clamping: max(1, min(options.frameLimit, 12 * 3600 * 60)))
    }

    /// After the header passed our checks: dav1d refuses any frame larger than the pixel limit before allocating
    /// it, whatever the AV1 payload claims (the codecs are created again by the reset, with the new limit).
    func tightenLimits(_ decoder: UnsafeMutablePointer<avifDecoder>, options: DecodingOptions) throws {
        let defaultSizeLimit = 16384 * 16384  // AVIF_DEFAULT_IMAGE_SIZE_LIMIT; 0 is reserved
        decoder.pointee.imageSizeLimit = UInt32(clamping: max(1, min(options.pixelLimit, defaultSizeLimit)))
        try Self.check(avifDecoderReset(decoder), decoder)
    }

    private static func colour(of image: avifImage) -> EmbeddedColour {
        var colour = EmbeddedColour.unspecified
        if image.icc.size > 0, let bytes = image.icc.data {
            colour.iccProfile = Data(bytes: bytes, count: image.icc.size)
        }
        colour.cicp = EmbeddedColour.CICP(
            primaries: Int(image.colorPrimaries), transfer: Int(image.transferCharacteristics),
            matrix: Int(image.matrixCoefficients), isFullRange: image.yuvRange == AVIF_RANGE_FULL)
        return colour
    }

    /// Turns a libavif result into a ``CodecError`` (nothing for `AVIF_RESULT_OK`).
    static func check(_ result: avifResult, _ decoder: UnsafeMutablePointer<avifDecoder>?) throws {
        if result == AVIF_RESULT_OK { return }
        throw error(result, decoder)
    }

    static func error(_ result: avifResult, _ decoder: UnsafeMutablePointer<avifDecoder>?) -> CodecError {
        switch result {
        case AVIF_RESULT_TRUNCATED_DATA: return .truncated(format: .avif)
        default:
            var reason = String(cString: avifResultToString(result))
            if let decoder {
                let detail = diagnostic(of: decoder)
                if !detail.isEmpty { reason += ": \(detail)" }
            }
            return .corrupt(format: .avif, reason: reason)
        }
    }

    /// libavif's message about the last failure (`diag.error`), empty when it gave none.
    static func diagnostic(of decoder: UnsafeMutablePointer<avifDecoder>) -> String {
        withUnsafeBytes(of: decoder.pointee.diag.error) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
