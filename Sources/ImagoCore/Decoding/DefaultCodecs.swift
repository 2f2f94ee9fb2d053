/// The codecs a program registers by default, provided by a module that ships codecs (`Imago` does).
///
/// ImagoCore itself has no codecs: without such a module linked into the program, the registries of a new
/// ``ImagePipeline/Configuration`` are empty and every decode fails with ``CodecError/unsupportedFormat(_:)``.
/// The `Imago` module declares the one provider, so that every way of making a pipeline in a program that uses
/// `Imago` (``ImagePipeline/Configuration/init(dataLoader:imageCache:dataCache:)``, ``ImagePipeline/init(_:)``,
/// `withDefaults()`, `ImagePipeline.shared`) decodes every format it ships.
public protocol DefaultCodecsProviding: Sendable {
    /// New instances of every decoder to register, in registration order (later ones win).
    static func makeDecoders() -> [any ImageDecoding]
    /// New instances of every encoder to register, in registration order (later ones win).
    static func makeEncoders() -> [any ImageEncoding]
}

/// Finds the program's ``DefaultCodecsProviding`` type once.
///
/// Swift runs no code when a module is loaded, so a codec module cannot register itself before the first
/// configuration is made; instead ImagoCore asks the Swift runtime for the provider's type by its mangled name
/// (the runtime indexes every type linked into the process). Only the one name below is ever looked up.
package enum DefaultCodecs {
    /// The mangled name of `Imago.ImagoDefaultCodecs` (checked by a test in ImagoCodecsTests).
    package static let providerTypeName = "5Imago0A13DefaultCodecsO"

    /// The provider linked into this process, if any.
    package static let provider: (any DefaultCodecsProviding.Type)? =
        _typeByName(providerTypeName) as? any DefaultCodecsProviding.Type

    /// A new registry with the provider's decoders (empty without a provider).
    static func makeDecoderRegistry() -> ImageDecoderRegistry {
        ImageDecoderRegistry(provider?.makeDecoders() ?? [])
    }

    /// A new registry with the provider's encoders (empty without a provider).
    static func makeEncoderRegistry() -> ImageEncoderRegistry {
        ImageEncoderRegistry(provider?.makeEncoders() ?? [])
    }
}
