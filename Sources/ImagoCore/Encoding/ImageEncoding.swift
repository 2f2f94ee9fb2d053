import Foundation

/// An encoder that turns pixels into one encoded format.
///
/// Implementations are thread-safe and report failures as ``CodecError/encodingFailed(format:reason:)``.
public protocol ImageEncoding: Sendable {
    /// The format this encoder writes.
    var format: ImageFormat { get }

    /// Encodes `image` (RGBA8 or gray8, straight alpha).
    ///
    /// - Throws: ``CodecError``.
    func encode(_ image: PixelBuffer, options: EncodingOptions) throws -> Data

    /// Whether ``encode(_:options:)-(ImageContainer,_)`` keeps every frame, duration and the loop count of an
    /// animated container. Default `false`: only the first frame is written.
    var encodesAnimation: Bool { get }

    /// Encodes a whole container: every frame with its duration and the loop count when the encoder
    /// ``encodesAnimation``, else the first frame. Default: ``encode(_:options:)-(PixelBuffer,_)`` of
    /// `container.image`.
    ///
    /// - Throws: ``CodecError``.
    func encode(_ container: ImageContainer, options: EncodingOptions) throws -> Data

    /// A stable text naming the encoder's own settings that change the bytes it writes beyond ``EncodingOptions``
    /// (AVIF's speed, progressive JPEG …), e.g. `"speed=9"`, for the keys of caches that keep encoded outputs:
    /// two encoders of a format with the same text write the same bytes for the same pixels and options. It stays
    /// the same across processes and versions, as a processor's ``ImageProcessing/identifier``. Default `nil`: the
    /// encoder has no such settings.
    var settingsIdentifier: String? { get }
}

extension ImageEncoding {
    /// `false`: the encoder writes still images.
    public var encodesAnimation: Bool { false }

    /// `nil`: the encoder has no settings of its own.
    public var settingsIdentifier: String? { nil }

    /// Encodes the first frame, `container.image`.
    public func encode(_ container: ImageContainer, options: EncodingOptions) throws -> Data {
        try encode(container.image, options: options)
    }
}

/// How to encode.
public struct EncodingOptions: Sendable, Hashable {
    /// Quality for lossy formats, 0 … 1. Default 0.85.
    public var quality: Double
    /// Use lossless compression where the format has it (WebP). Default `false`.
    public var isLossless: Bool
    /// An ICC profile to embed, byte-identical (JPEG APP2, PNG iCCP, WebP ICCP): pass the decoded container's
    /// ``ImageContainer/colorProfile`` when its pixels were kept in that profile's space. Default `nil`: none.
    public var colorProfile: ColorProfile?
    /// EXIF, XMP and IPTC blocks to write (JPEG APP1/APP13 segments, PNG `eXIf`/`iTXt`, WebP `EXIF`/`XMP `, AVIF
    /// metadata items; other formats write none), as they are: filter them first (the EXIF orientation, for one,
    /// must say how the pixels given are to be shown). Default `nil`: none.
    public var metadata: ImageMetadata?

    /// Options with the defaults listed on each property.
    public init(
        quality: Double = 0.85, isLossless: Bool = false, colorProfile: ColorProfile? = nil,
        metadata: ImageMetadata? = nil
    ) {
        self.quality = quality
        self.isLossless = isLossless
        self.colorProfile = colorProfile
        self.metadata = metadata
    }
}

/// The encoders a pipeline can use, newest registration first (see ``ImageDecoderRegistry``). Thread-safe.
public final class ImageEncoderRegistry: Sendable {
    private let encoders = Locked<[any ImageEncoding]>([])

    /// An empty registry, or one with `encoders` registered in order (later ones win).
    public init(_ encoders: [any ImageEncoding] = []) {
        for encoder in encoders { register(encoder) }
    }

    /// A registry of the encoders `other` holds now, in the same order; later registrations on either do not
    /// reach the other.
    public init(copying other: ImageEncoderRegistry) {
        encoders.withLock { $0 = other.encoders.withLock { $0 } }
    }

    /// Adds `encoder`; it takes precedence over earlier encoders of the same format.
    public func register(_ encoder: any ImageEncoding) {
        encoders.withLock { $0.insert(encoder, at: 0) }
    }

    /// The newest encoder for `format`, if any.
    public func encoder(for format: ImageFormat) -> (any ImageEncoding)? {
        encoders.withLock { $0 }.first { $0.format == format }  // no encoder code under the lock
    }

    /// The format of the newest registered encoder that ``ImageEncoding/encodesAnimation``, if any (WebP among
    /// Imago's codecs).
    public var animatedFormat: ImageFormat? {
        encoders.withLock { $0 }.first { $0.encodesAnimation }?.format
    }

    /// Encodes `container` as `format`: every frame when the encoder ``ImageEncoding/encodesAnimation``, else
    /// its first frame.
    ///
    /// - Throws: ``CodecError/unsupportedFormat(_:)`` when no encoder is registered, or the encoder's error.
    public func encode(
        _ container: ImageContainer, as format: ImageFormat, options: EncodingOptions = EncodingOptions()
    ) throws -> Data {
        guard let encoder = encoder(for: format) else { throw CodecError.unsupportedFormat(format) }
        return try encoder.encode(container, options: options)
    }

    /// Encodes `image` as `format`.
    ///
    /// - Throws: ``CodecError/unsupportedFormat(_:)`` when no encoder is registered, or the encoder's error.
    public func encode(
        _ image: PixelBuffer, as format: ImageFormat, options: EncodingOptions = EncodingOptions()
    )
        throws -> Data
    {
        guard let encoder = encoder(for: format) else { throw CodecError.unsupportedFormat(format) }
        return try encoder.encode(image, options: options)
    }
}
