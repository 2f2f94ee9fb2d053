import Foundation

extension ImageDecoderRegistry {
    /// The order formats are listed in an `Accept` header, most preferred first: the smallest files for the
    /// same picture first (AVIF, WebP, JPEG XL), then the rest. Formats not listed here (plug-ins') follow in
    /// name order.
    public static let acceptPreference: [ImageFormat] = [
        .avif, .webp, .jpegXL, .heic, .heif, .apng, .png, .jpeg, .gif, .svg, .bmp, .ico, .tiff,
    ]

    /// An HTTP `Accept` header value naming the formats the registered decoders read, in the order of
    /// ``acceptPreference``, then `image/*;q=0.8` (so a server with none of them still answers with an image):
    /// `image/avif,image/webp,image/png,image/jpeg,image/gif,image/*;q=0.8` for a registry of those four.
    ///
    /// `Imago`'s default pipeline configuration sends it with every HTTP request, so content-negotiating image
    /// servers answer in the best format the pipeline can decode.
    public var acceptHeader: String {
        let formats = supportedFormats.subtracting([.unknown])
        let known = Self.acceptPreference.filter { formats.contains($0) }
        let others = formats.subtracting(Self.acceptPreference).sorted { $0.rawValue < $1.rawValue }
        var types: [String] = []
        for format in known + others where !types.contains(format.mimeType) { types.append(format.mimeType) }
        return (types + ["image/*;q=0.8"]).joined(separator: ",")
    }
}

extension HTTPDataLoader.Configuration {
    /// Sets the `Accept` header to `registry`'s ``ImageDecoderRegistry/acceptHeader``, unless
    /// ``additionalHeaders`` already has one (any capitalisation), which is kept.
    public mutating func acceptImages(decodableBy registry: ImageDecoderRegistry) {
        guard !additionalHeaders.keys.contains(where: { $0.lowercased() == "accept" }) else { return }
        additionalHeaders["Accept"] = registry.acceptHeader
    }
}
