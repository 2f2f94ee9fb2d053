import ImagoCore

/// How the output format of a request is chosen, before the source is known: asked for, the best the client
/// accepts, or derived from the source once decoded.
enum FormatChoice: Hashable, Sendable {
    /// The URL named it (`format:` or the extension).
    case explicit(ImageFormat)
    /// The client's `Accept` allows it and an encoder is registered (JPEG XL, then AVIF, then WebP).
    case negotiated(ImageFormat)
    /// Neither: one of the server's preferred formats, chosen once the image is known
    /// (``FormatNegotiation/format(for:source:isOpaque:encoders:preferred:)``).
    case sourceDerived

    /// The text naming the choice in disk keys.
    var keyText: String {
        switch self {
        case .explicit(let format): "explicit:\(format)"
        case .negotiated(let format): "negotiated:\(format)"
        case .sourceDerived: "source"
        }
    }
}

/// Picks output formats and names their media types. Never switches over every ``ImageFormat``: formats are
/// compared by value, so new formats (and encoders) fit in without changes here.
enum FormatNegotiation {
    /// The formats `Accept` can select, in order of preference (``ImageProxy/Configuration/negotiableFormats``).
    static let preferred = ImageProxy.Configuration.negotiableFormats

    /// The formats the proxy renders into (named by ``ImageFormat/mimeType`` in `Accept` and `Content-Type`).
    static let outputFormats: Set<ImageFormat> = [.jpeg, .png, .webp, .avif, .jpegXL, .heic, .gif, .bmp, .ico, .tiff]

    /// The formats that keep transparency (GIF's one bit counts).
    static let alphaFormats: Set<ImageFormat> = [.png, .gif, .webp, .avif, .jpegXL, .heic, .bmp, .ico, .tiff]

    /// The choice for a request with `explicit` format (or none) and the `Accept` header, given `encoders`:
    /// without an explicit one, the first of `detected` (default AVIF and WebP) in ``preferred``'s order that
    /// `Accept` lists.
    ///
    /// `svg` needs no encoder: only SVG sources are answered in it, with their own document.
    ///
    /// - Throws: ``ProxyError/formatNotAvailable(_:)`` when the explicit format has no encoder.
    static func choice(
        explicit: ImageFormat?, accept: String?, encoders: ImageEncoderRegistry,
        detected: Set<ImageFormat> = ImageProxy.Configuration.defaultDetectedFormats
    ) throws(ProxyError) -> FormatChoice {
        if explicit == .svg { return .explicit(.svg) }
        if let explicit {
            guard encoders.encoder(for: explicit) != nil, outputFormats.contains(explicit) else {
                throw .formatNotAvailable(explicit)
            }
            return .explicit(explicit)
        }
        return negotiated(accept, among: detected, encoders: encoders) ?? .sourceDerived
    }

    /// The first of `formats` (in ``preferred``'s order) that `accept` lists and an encoder writes, as a
    /// negotiated choice; `nil` when there is none. With the server's enforced formats, this overrides a format
    /// the URL names.
    static func negotiated(
        _ accept: String?, among formats: some Collection<ImageFormat>, encoders: ImageEncoderRegistry
    ) -> FormatChoice? {
        guard !formats.isEmpty, accept != nil else { return nil }
        let accepted = acceptedMediaTypes(accept)
        return preferred.first {
            formats.contains($0) && accepted.contains($0.mimeType) && encoders.encoder(for: $0) != nil
        }.map(FormatChoice.negotiated)
    }

    /// The format an animated source is encoded in for `choice` and `accept`, keeping its frames: the explicit
    /// format when its encoder keeps frames; for a negotiated one, the first of ``preferred`` that `accept` names
    /// and whose encoder keeps frames (WebP); for one derived from the source, the first of the server's
    /// `preferred` formats whose encoder keeps frames (GIF by default: every client shows it, so an animated GIF,
    /// WebP or APNG stays animated for a client that takes no WebP, as imgproxy answers). `nil` when there is
    /// none: the output is then the first frame, in `choice`'s format.
    static func animatedFormat(
        for choice: FormatChoice, accept: String?, encoders: ImageEncoderRegistry,
        preferred serverPreferred: [ImageFormat] = ImageProxy.Configuration.defaultPreferredFormats
    ) -> ImageFormat? {
        func keepsFrames(_ format: ImageFormat) -> Bool { encoders.encoder(for: format)?.encodesAnimation == true }
        switch choice {
        case .explicit(let format): return keepsFrames(format) ? format : nil
        case .negotiated:
            let accepted = acceptedMediaTypes(accept)
            return preferred.first { accepted.contains($0.mimeType) && keepsFrames($0) }
        case .sourceDerived: return serverPreferred.first(where: keepsFrames)
        }
    }

    /// The format to encode a decoded image of `source` format in, for `choice`. A format derived from the source
    /// follows imgproxy's rules for its preferred formats (`preferred`, each with an encoder): the source's format
    /// when listed; else the first listed that keeps transparency when the image has some; else the first listed.
    static func format(
        for choice: FormatChoice, source: ImageFormat, isOpaque: Bool, encoders: ImageEncoderRegistry,
        preferred serverPreferred: [ImageFormat] = ImageProxy.Configuration.defaultPreferredFormats
    ) -> ImageFormat {
        switch choice {
        case .explicit(let format), .negotiated(let format): return format
        case .sourceDerived:
            let usable = serverPreferred.filter { encoders.encoder(for: $0) != nil }
            if usable.contains(source) { return source }
            if !isOpaque, let keeping = usable.first(where: alphaFormats.contains) { return keeping }
            return usable.first ?? .png
        }
    }

    /// The exact media types `accept` lists with a q-value above 0 (lowercased; wildcards are not expanded, as
    /// browsers list AVIF and WebP by name when they take them).
    static func acceptedMediaTypes(_ accept: String?) -> Set<String> {
        guard let accept else { return [] }
        var types: Set<String> = []
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let type = parts.first, !type.isEmpty else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if q > 0 { types.insert(type) }
        }
        return types
    }
}
