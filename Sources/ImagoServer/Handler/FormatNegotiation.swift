import ImagoCore

/// How the output format of a request is chosen, before the source is known: asked for, the best the client
/// accepts, or derived from the source once decoded.
enum FormatChoice: Hashable, Sendable {
    /// The URL named it (`format:` or the extension).
    case explicit(ImageFormat)
    /// The client's `Accept` allows it and an encoder is registered (AVIF before WebP).
    case negotiated(ImageFormat)
    /// Neither: the source's format when every client shows it (``FormatNegotiation/sourceFormatsKept``), else
    /// JPEG for opaque images, PNG for the rest and GIF for animations.
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
    /// The formats `Accept` can select, in order of preference.
    static let preferred: [ImageFormat] = [.avif, .webp]

    /// The formats the proxy renders into (named by ``ImageFormat/mimeType`` in `Accept` and `Content-Type`).
    static let outputFormats: Set<ImageFormat> = [.jpeg, .png, .webp, .avif, .jpegXL, .gif]

    /// The source formats an output derived from the source keeps: those every client shows, imgproxy's default
    /// `IMGPROXY_PREFERRED_FORMATS`. A WebP, AVIF or JPEG XL source asked for without a format by a client whose
    /// `Accept` does not name them becomes JPEG, PNG or GIF rather than a format it may not show.
    static let sourceFormatsKept: Set<ImageFormat> = [.jpeg, .png, .gif]

    /// The choice for a request with `explicit` format (or none) and the `Accept` header, given `encoders`.
    ///
    /// - Throws: ``ProxyError/formatNotAvailable(_:)`` when the explicit format has no encoder.
    static func choice(
        explicit: ImageFormat?, accept: String?, encoders: ImageEncoderRegistry
    ) throws(ProxyError) -> FormatChoice {
        if let explicit {
            guard encoders.encoder(for: explicit) != nil, outputFormats.contains(explicit) else {
                throw .formatNotAvailable(explicit)
            }
            return .explicit(explicit)
        }
        let accepted = acceptedMediaTypes(accept)
        for format in preferred {
            if accepted.contains(format.mimeType), encoders.encoder(for: format) != nil {
                return .negotiated(format)
            }
        }
        return .sourceDerived
    }

    /// The format an animated source is encoded in for `choice` and `accept`, keeping its frames: the explicit
    /// format when its encoder keeps frames; for a negotiated one, the first of ``preferred`` that `accept` names
    /// and whose encoder keeps frames (WebP); for one derived from the source, GIF (every client shows it: an
    /// animated GIF, WebP or APNG stays animated for a client that takes no WebP, as imgproxy answers). `nil` when
    /// that encoder writes stills: the output is then the first frame, in `choice`'s format.
    static func animatedFormat(
        for choice: FormatChoice, accept: String?, encoders: ImageEncoderRegistry
    ) -> ImageFormat? {
        func keepsFrames(_ format: ImageFormat) -> Bool { encoders.encoder(for: format)?.encodesAnimation == true }
        switch choice {
        case .explicit(let format): return keepsFrames(format) ? format : nil
        case .negotiated:
            let accepted = acceptedMediaTypes(accept)
            return preferred.first { accepted.contains($0.mimeType) && keepsFrames($0) }
        case .sourceDerived: return keepsFrames(.gif) ? .gif : nil
        }
    }

    /// The format to encode a decoded image of `source` format in, for `choice`.
    static func format(
        for choice: FormatChoice, source: ImageFormat, isOpaque: Bool, encoders: ImageEncoderRegistry
    ) -> ImageFormat {
        switch choice {
        case .explicit(let format), .negotiated(let format): return format
        case .sourceDerived:
            if sourceFormatsKept.contains(source), encoders.encoder(for: source) != nil { return source }
            return isOpaque && encoders.encoder(for: .jpeg) != nil ? .jpeg : .png
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
