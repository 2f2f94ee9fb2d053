@_exported import ImagoCodecs
@_exported import ImagoCore

extension ImageDecoderRegistry {
    /// A new registry with every codec Imago ships (JPEG, PNG, GIF, WebP) registered.
    public static func makeDefault() -> ImageDecoderRegistry { ImageDecoderRegistry(ImagoCodecs.decoders) }
}

extension ImageEncoderRegistry {
    /// A new registry with every encoder Imago ships (JPEG, PNG, WebP) registered.
    public static func makeDefault() -> ImageEncoderRegistry { ImageEncoderRegistry(ImagoCodecs.encoders) }
}
