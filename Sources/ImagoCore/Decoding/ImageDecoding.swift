import Foundation

/// A decoder for one or more encoded formats (JPEG, PNG, …), registered in an ``ImageDecoderRegistry``.
///
/// Implementations must be thread-safe: one decoder instance serves concurrent decodes. They check the declared
/// dimensions against ``DecodingOptions/pixelLimit`` (and frame counts against the frame limits) *before*
/// allocating any pixel buffer, and report every failure as a ``CodecError`` — never a crash, never a hang.
///
/// ```swift
/// struct MyBMPDecoder: ImageDecoding {
///     var formats: Set<ImageFormat> { [.bmp] }
///     func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer { … }
/// }
/// registry.register(MyBMPDecoder())
/// ```
public protocol ImageDecoding: Sendable {
    /// The formats this decoder handles.
    var formats: Set<ImageFormat> { get }

    /// Decodes `data` (already sniffed as one of ``formats``).
    ///
    /// - Throws: ``CodecError``.
    func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer

    /// Recognises a format this decoder handles from the first bytes of `data`, or `nil` to leave it to the
    /// built-in sniffing (``ImageFormat/init(sniffing:)``). A registry asks its decoders' sniffers, newest first,
    /// before its built-in sniffing, so a plug-in can teach it a new format (or a narrower reading of a known
    /// one). Must be cheap (look at a few header bytes) and must not throw or trap on any input.
    ///
    /// Default: `nil` (the decoder's formats are recognised by the built-in sniffing).
    func sniffFormat(in data: Data) -> ImageFormat?
}

extension ImageDecoding {
    /// `nil`: the built-in sniffing recognises this decoder's formats.
    public func sniffFormat(in data: Data) -> ImageFormat? { nil }
}

/// How a decoder should decode: target size, limits and what to apply.
///
/// `Codable`, so that a decode can be asked of another process with the same options (`ImagoCodecs`'s
/// `ChildProcessDecoder`).
public struct DecodingOptions: Sendable, Hashable, Codable {
    /// Decode to fit within this size (aspect ratio kept, never upscaled), downsampling while decoding where the
    /// format allows (JPEG DCT scaling). Default `nil`: full size.
    public var targetSize: PixelSize?
    /// The largest image, in pixels (width × height), that may be decoded. Checked from the header before any
    /// allocation. Default 100,000,000 (100 megapixels).
    ///
    /// A larger image is still decoded when the codec can produce it at a reduced scale whose pixels fit the limit
    /// without ever holding the full size (JPEG DCT scaling down to 1/8 for baseline files, the DC scans of
    /// progressive ones at 1/8, WebP's scaled decoding of lossy stills without alpha), and ``targetSize`` or
    /// ``decodedByteLimit`` asks for it; otherwise, and for every other format, it fails with
    /// ``CodecError/tooManyPixels(width:height:limit:)``.
    public var pixelLimit: Int
    /// The most frames an animated image may have. Default 10,000.
    public var frameLimit: Int
    /// The most bytes of pixels all frames of an animation may take together. Default 1 GiB.
    public var animationByteLimit: Int
    /// The most canvas pixels an animation may composite in all (frames × canvas width × canvas height). Every
    /// frame is drawn on a full-size canvas before it is fitted to ``targetSize``, so this bounds the CPU time of
    /// a huge canvas with many frames that ``animationByteLimit`` lets through when the output is small. Default
    /// 2,000,000,000 (e.g. 1,000 frames of 1920×1080; a few seconds of work).
    public var animationWorkLimit: Int
    /// Whether to apply the EXIF orientation to the pixels (then the container's orientation is `.up`).
    /// Default `true`.
    public var appliesOrientation: Bool
    /// Decode only the first frame of an animated image. Default `false`.
    public var decodesFirstFrameOnly: Bool
    /// Accept truncated data and return what decodes as a preview (`isPreview == true`) instead of failing.
    /// Used for progressive previews. Default `false`.
    public var allowsPartialData: Bool
    /// What to do with an embedded colour profile: convert to sRGB, keep it, or ignore it. Default
    /// ``ColorPolicy/convertToSRGB``.
    public var colorPolicy: ColorPolicy = .convertToSRGB
    /// Whether the file's EXIF, XMP and IPTC blocks are kept in ``ImageContainer/metadata`` (the JPEG, PNG, WebP, AVIF,
    /// HEIC, JPEG XL and TIFF decoders read them; each block at most ``ImageMetadata/maximumBlockLength``). Default
    /// `false`.
    public var readsMetadata = false
    /// The rendering intent of conversions to sRGB. Default ``RenderingIntent/perceptual``.
    public var renderingIntent: RenderingIntent = .perceptual
    /// Whether conversions to sRGB use black-point compensation (shadow detail of profiles whose black is not
    /// zero is kept instead of clipped). Default `true`.
    public var usesBlackPointCompensation = true
    /// The most bytes of pixels one decoded image (or frame) may take: a larger image is decoded smaller, aspect
    /// kept, where the codec can scale while decoding (JPEG, WebP stills, PNG; as SDWebImage's scale-down limit
    /// does), and at full size otherwise, then shrunk. Default `nil`: no limit beyond ``pixelLimit``.
    public var decodedByteLimit: Int?
    /// Animations whose decoded frames would take more bytes than this are decoded on demand: the container keeps
    /// the encoded data and a decoder (``ImageContainer/frameSource``) and produces frames as they are asked for,
    /// holding a few at a time (GIF and WebP). Default 32 MiB. `Int.max` decodes every animation up front.
    public var animationMemoryBudget = 32 << 20
    /// How ``targetSize`` bounds the output. Default ``TargetMode/fit``. Not an initialiser parameter: set it on
    /// the options (the pipeline sets ``TargetMode/cover`` for a processor that crops to fill its size).
    public var targetMode: TargetMode = .fit
    /// Whether ``targetSize`` may be reached only by the codec's own reduced decode (JPEG's DCT scaling), never by
    /// resampling after it: the output is then the smallest reduced decode that covers the target, which a caller
    /// resamples its own way (in linear light). Default `false`. Not an initialiser parameter; the pipeline sets it
    /// for a ``DecodeTarget/shrinksOnlyWhileDecoding`` target and gives such a target to JPEGs only.
    public var shrinksOnlyWhileDecoding = false
    /// Whether a vector image (SVG) is drawn at ``targetSize`` also where that is larger than its own size (aspect
    /// ratio kept, as ``targetMode`` says; scaled back to fit ``pixelLimit`` rather than refused), as imgproxy
    /// draws vectors at any requested size. Default `false`: vectors, like every image, are never enlarged. Not
    /// an initialiser parameter.
    public var enlargesVectors = false
    /// When a thumbnail the file embeds (HEIC) is decoded instead of the full image. Default
    /// ``EmbeddedThumbnails/whenLargeEnough``, as ImageIO and imgproxy do: an iPhone photo's 4032×3024 image then
    /// costs a 320×240 decode for a 256-px target.
    public var embeddedThumbnails: EmbeddedThumbnails = .whenLargeEnough

    /// When a file's embedded thumbnail stands in for its image (``DecodingOptions/embeddedThumbnails``). Only a
    /// thumbnail with the image's aspect ratio (within a pixel) and, when the image has alpha, alpha of its own
    /// ever does; it was encoded on its own, so its pixels differ a little from the full image downsampled.
    public enum EmbeddedThumbnails: String, Sendable, Hashable, Codable {
        /// Always the full image.
        case never
        /// With a ``DecodingOptions/targetSize`` the image is downsampled to, the smallest thumbnail at least that
        /// size (the default).
        case whenLargeEnough
        /// The largest thumbnail, whatever the target (imgproxy's `enforce_thumbnail`): fast previews that may be
        /// smaller than asked for. Files without one give the full image.
        case always
    }

    /// How ``DecodingOptions/targetSize`` bounds the decoded size (aspect ratio always kept, never upscaled).
    public enum TargetMode: Sendable, Hashable, Codable {
        /// The output fits within the target: neither side is larger (the default).
        case fit
        /// The output covers the target: neither side is smaller (unless the image itself is), so a processor
        /// that crops or stretches to the target afterwards loses no resolution.
        case cover
    }

    /// Options with the defaults listed on each property.
    public init(
        targetSize: PixelSize? = nil, pixelLimit: Int = 100_000_000, frameLimit: Int = 10_000,
        animationByteLimit: Int = 1 << 30, appliesOrientation: Bool = true, decodesFirstFrameOnly: Bool = false,
        allowsPartialData: Bool = false, animationWorkLimit: Int = 2_000_000_000
    ) {
        self.animationWorkLimit = animationWorkLimit
        self.targetSize = targetSize
        self.pixelLimit = pixelLimit
        self.frameLimit = frameLimit
        self.animationByteLimit = animationByteLimit
        self.appliesOrientation = appliesOrientation
        self.decodesFirstFrameOnly = decodesFirstFrameOnly
        self.allowsPartialData = allowsPartialData
    }

    /// Throws ``CodecError/animationTooMuchWork(limit:)`` when compositing `frames` frames on a `canvas`-sized
    /// canvas exceeds ``animationWorkLimit``.
    public func checkAnimationWork(frames: Int, canvas: PixelSize) throws(CodecError) {
        let (pixels, overflow1) = canvas.width.multipliedReportingOverflow(by: canvas.height)
        let (work, overflow2) = pixels.multipliedReportingOverflow(by: max(0, frames))
        guard !overflow1, !overflow2, work <= animationWorkLimit else {
            throw CodecError.animationTooMuchWork(limit: animationWorkLimit)
        }
    }

    /// Throws ``CodecError/tooManyPixels(width:height:limit:)`` when `width × height` exceeds ``pixelLimit``,
    /// and ``CodecError/corrupt(format:reason:)`` for a zero or negative dimension.
    public func checkDimensions(width: Int, height: Int, format: ImageFormat) throws(CodecError) {
        guard width > 0, height > 0 else {
            throw CodecError.corrupt(format: format, reason: "invalid dimensions \(width)x\(height)")
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= pixelLimit else {
            throw CodecError.tooManyPixels(width: width, height: height, limit: pixelLimit)
        }
    }

    /// The size an image of `size` is delivered at: fitted within ``targetSize`` (given in the displayed
    /// orientation; `orientation` says how the stored image turns) and, with ``decodedByteLimit``, shrunk (aspect
    /// kept) until its pixels at `bytesPerPixel` fit that limit. Never larger than `size`, never a zero side.
    public func deliveredSize(of size: PixelSize, orientation: ExifOrientation, bytesPerPixel: Int) -> PixelSize {
        var fitted = size
        if let target = targetSize, target.width > 0, target.height > 0 {
            let stored = orientation.swapsDimensions ? PixelSize(width: target.height, height: target.width) : target
            fitted = targetMode == .cover ? size.covering(stored) : size.fitted(within: stored)
        }
        guard let limit = decodedByteLimit, limit > 0 else { return fitted }
        let bytes = Double(fitted.width) * Double(fitted.height) * Double(max(1, bytesPerPixel))
        guard bytes > Double(limit) else { return fitted }
        let scale = (Double(limit) / bytes).squareRoot()
        let width = max(1, Int((Double(fitted.width) * scale).rounded(.down)))
        let height = max(1, Int((Double(fitted.height) * scale).rounded(.down)))
        return PixelSize(width: min(fitted.width, width), height: min(fitted.height, height))
    }

    /// Whether `size` (width × height) exceeds ``pixelLimit`` (or overflows).
    public func exceedsPixelLimit(_ size: PixelSize) -> Bool {
        let (pixels, overflow) = size.width.multipliedReportingOverflow(by: size.height)
        return overflow || pixels > pixelLimit
    }
}
