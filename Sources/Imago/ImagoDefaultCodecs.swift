/// Every codec Imago ships, as the program-wide default of ``ImagePipeline/Configuration``'s registries.
///
/// ImagoCore finds this type at run time (see ``DefaultCodecsProviding``): a configuration made in any way
/// (`ImagePipeline.Configuration()`, `ImagePipeline { $0.dataCache = … }`, `withDefaults()`, `.shared`) in a
/// program that links `Imago` has every decoder of ``ImagoCodecs/decoders`` and encoder of
/// ``ImagoCodecs/encoders`` registered.
public enum ImagoDefaultCodecs: DefaultCodecsProviding {
    /// ``ImagoCodecs/decoders``.
    public static func makeDecoders() -> [any ImageDecoding] { ImagoCodecs.decoders }
    /// ``ImagoCodecs/encoders``.
    public static func makeEncoders() -> [any ImageEncoding] { ImagoCodecs.encoders }
}
