import Foundation

/// The decoders a pipeline can use, asked newest-first: registering a decoder for a format that already has one
/// replaces it (the older one stays as a fallback only for formats the newer does not claim).
///
/// Thread-safe. `Imago`'s default registry has JPEG, PNG, GIF and WebP registered.
///
/// ```swift
/// let registry = ImageDecoderRegistry()
/// registry.register(JPEGDecoder())
/// let image = try registry.decode(data, options: DecodingOptions(targetSize: PixelSize(width: 256, height: 256)))
/// ```
public final class ImageDecoderRegistry: Sendable {
    private let decoders = Locked<[any ImageDecoding]>([])

    /// An empty registry, or one with `decoders` registered in order (later ones win).
    public init(_ decoders: [any ImageDecoding] = []) {
        for decoder in decoders { register(decoder) }
    }

    /// Adds `decoder`; it takes precedence over every decoder registered before it.
    public func register(_ decoder: any ImageDecoding) {
        decoders.withLock { $0.insert(decoder, at: 0) }
    }

    /// The registered decoders, newest first: a copy taken under the lock, so that no decoder code (`formats`,
    /// sniffers, decoding) ever runs while the lock is held.
    private var snapshot: [any ImageDecoding] { decoders.withLock { $0 } }

    /// The newest decoder that handles `format`, if any.
    public func decoder(for format: ImageFormat) -> (any ImageDecoding)? {
        snapshot.first { $0.formats.contains(format) }
    }

    /// The formats some registered decoder handles.
    public var supportedFormats: Set<ImageFormat> {
        snapshot.reduce(into: Set()) { $0.formUnion($1.formats) }
    }

    /// The format of `data`: the first answer of the registered decoders' sniffers (newest first, see
    /// ``ImageDecoding/sniffFormat(in:)``), else the built-in sniffing (``ImageFormat/init(sniffing:)``).
    public func format(of data: Data) -> ImageFormat {
        for decoder in snapshot {
            if let format = decoder.sniffFormat(in: data) { return format }
        }
        return ImageFormat(sniffing: data)
    }

    /// Sniffs the format of `data` (``format(of:)``) and decodes it with the newest matching decoder.
    ///
    /// - Throws: ``CodecError/empty``, ``CodecError/unsupportedFormat(_:)`` or whatever the decoder throws.
    public func decode(_ data: Data, options: DecodingOptions = DecodingOptions()) throws -> ImageContainer {
        guard !data.isEmpty else { throw CodecError.empty }
        let format = format(of: data)
        guard let decoder = decoder(for: format) else { throw CodecError.unsupportedFormat(format) }
        return try decoder.decode(data, options: options)
    }
}
