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
public struct DecodingOptions: Sendable, Hashable {
    /// Decode to fit within this size (aspect ratio kept, never upscaled), downsampling while decoding where the
    /// format allows (JPEG DCT scaling). Default `nil`: full size.
    public var targetSize: PixelSize?
    /// The largest image, in pixels (width × height), that may be decoded. Checked from the header before any
    /// allocation. Default 100,000,000 (100 megapixels).
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
    public func checkAnimationWork(frames: Int, canvas: PixelSize) throws {
        let (pixels, overflow1) = canvas.width.multipliedReportingOverflow(by: canvas.height)
        let (work, overflow2) = pixels.multipliedReportingOverflow(by: max(0, frames))
        guard !overflow1, !overflow2, work <= animationWorkLimit else {
            throw CodecError.animationTooMuchWork(limit: animationWorkLimit)
        }
    }

    /// Throws ``CodecError/tooManyPixels(width:height:limit:)`` when `width × height` exceeds ``pixelLimit``,
    /// and ``CodecError/corrupt(format:reason:)`` for a zero or negative dimension.
    public func checkDimensions(width: Int, height: Int, format: ImageFormat) throws {
        guard width > 0, height > 0 else {
            throw CodecError.corrupt(format: format, reason: "invalid dimensions \(width)x\(height)")
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= pixelLimit else {
            throw CodecError.tooManyPixels(width: width, height: height, limit: pixelLimit)
        }
    }
}
