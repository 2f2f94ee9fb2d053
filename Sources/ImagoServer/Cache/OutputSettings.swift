import Imago
import ImagoCore

/// The server's settings that decide an output's bytes beyond its URL: the default qualities
/// (``ImageProxy/Configuration/defaultQuality``, ``ImageProxy/Configuration/formatQuality``), the preferred
/// formats (``ImageProxy/Configuration/preferredFormats``) and the encoders' own settings
/// (``ImageEncoding/settingsIdentifier``: AVIF's speed, progressive JPEG …). Made once from the configuration. It
/// resolves an output's quality, and names the settings in output keys (``OutputKey/settings``), so that a disk or
/// shared cache filled under other settings never answers for these.
struct OutputSettings: Sendable {
    /// The quality every output key of version 2 was made with: a setting that resolves to it adds nothing to a key,
    /// so outputs cached before these settings existed stay valid.
    static let keyBaseQuality = 80
    /// The preferred formats keys of version 2 were made with.
    static let keyBasePreferred: [ImageFormat] = [.jpeg, .png, .gif]

    let defaultQuality: Int
    let formatQuality: [ImageFormat: Int]
    let preferred: [ImageFormat]
    /// The key text of an explicit or negotiated format whose quality the URL leaves to the server, when it is not
    /// the base quality.
    private let formatText: [ImageFormat: String]
    /// The key text of a format derived from the source: the preferred formats when not the base ones, and (in
    /// `derivedQualityText` only) the qualities of those formats that are not the base quality.
    private let derivedText: String?
    private let derivedQualityText: String?
    /// The key text of each format whose encoder's settings differ from those keys of version 2 were made with
    /// (``keyBaseEncoders()``).
    private let encoderText: [ImageFormat: String]

    /// The encoders keys of version 2 were made with: the library's, AVIF at speed 9. Fixed, not the current
    /// defaults (``ImageProxy/Configuration/makeDefaultEncoders()``), so that a default that changes (JPEG XL's
    /// effort 7 became 4) is named in keys and outputs cached under the old one are not answered.
    static func keyBaseEncoders() -> ImageEncoderRegistry {
        let encoders = ImageEncoderRegistry.makeDefault()
        encoders.register(AVIFEncoder(speed: 9))
        return encoders
    }

    /// The settings of `configuration`.
    init(_ configuration: ImageProxy.Configuration) {
        defaultQuality = configuration.defaultQuality
        formatQuality = configuration.formatQuality
        preferred = configuration.preferredFormats
        var formatText: [ImageFormat: String] = [:]
        for format in FormatNegotiation.outputFormats {
            let quality = configuration.formatQuality[format] ?? configuration.defaultQuality
            if quality != Self.keyBaseQuality { formatText[format] = "quality=\(quality)" }
        }
        self.formatText = formatText
        let preferredText =
            preferred == Self.keyBasePreferred ? nil : "preferred=" + preferred.map(\.rawValue).joined(separator: ",")
        let qualities = preferred.compactMap { format in formatText[format].map { "\(format.rawValue):" + $0 } }
        let qualityText = qualities.isEmpty ? nil : qualities.joined(separator: ";")
        derivedText = preferredText
        derivedQualityText = [preferredText, qualityText].compactMap { $0 }.joined(separator: ";").nilIfEmpty
        let base = Self.keyBaseEncoders()
        var encoderText: [ImageFormat: String] = [:]
        for format in FormatNegotiation.outputFormats {
            guard let encoder = configuration.encoders.encoder(for: format) else { continue }
            let settings = encoder.settingsIdentifier
            if settings != base.encoder(for: format)?.settingsIdentifier {
                encoderText[format] = "\(format.rawValue):\(settings ?? "default")"
            }
        }
        self.encoderText = encoderText
    }

    /// The quality of an output in `format` under `options`: the URL's `quality`, else its `format_quality` for
    /// the format, else the server's for the format, else the server's default.
    func quality(for format: ImageFormat, options: ProcessingOptions) -> Int {
        options.quality ?? options.formatQuality[format] ?? formatQuality[format] ?? defaultQuality
    }

    /// What of these settings an output for `choice` and `options` depends on, for its key; `nil` when nothing
    /// differs from the settings keys of version 2 were made with. `animatedFormat` is the format an animation
    /// would be encoded in (``OutputKey/Animation/format``), when the server keeps animations.
    func keyText(for choice: FormatChoice, options: ProcessingOptions, animatedFormat: ImageFormat? = nil) -> String? {
        let leavesQuality = options.quality == nil
        var text: String?
        var formats: [ImageFormat]
        switch choice {
        case .explicit(let format), .negotiated(let format):
            text = leavesQuality ? formatText[format] : nil
            formats = [format]
        case .sourceDerived:
            text = leavesQuality ? derivedQualityText : derivedText
            formats = preferred
        }
        if let animatedFormat, !formats.contains(animatedFormat) { formats.append(animatedFormat) }
        let encoders = formats.compactMap { encoderText[$0] }
        guard !encoders.isEmpty else { return text }
        return [text, "encoders=" + encoders.joined(separator: ",")].compactMap { $0 }.joined(separator: ";")
    }
}

extension String {
    /// The string, or `nil` when it is empty.
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
