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

    /// Options with the defaults listed on each property.
    public init(quality: Double = 0.85, isLossless: Bool = false, colorProfile: ColorProfile? = nil) {
        self.quality = quality
        self.isLossless = isLossless
        self.colorProfile = colorProfile
    }
}

/// The encoders a pipeline can use, newest registration first (see ``ImageDecoderRegistry``). Thread-safe.
public final class ImageEncoderRegistry: Sendable {
    private let encoders = Locked<[any ImageEncoding]>([])

    /// An empty registry, or one with `encoders` registered in order (later ones win).
    public init(_ encoders: [any ImageEncoding] = []) {
        for encoder in encoders { register(encoder) }
    }

    /// Adds `encoder`; it takes precedence over earlier encoders of the same format.
    public func register(_ encoder: any ImageEncoding) {
        encoders.withLock { $0.insert(encoder, at: 0) }
    }

    /// The newest encoder for `format`, if any.
    public func encoder(for format: ImageFormat) -> (any ImageEncoding)? {
        encoders.withLock { list in list.first { $0.format == format } }
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
