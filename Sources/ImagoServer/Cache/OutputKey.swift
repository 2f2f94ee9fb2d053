import Foundation
import ImagoCore

/// What identifies an encoded output: the source, the processing options and the format choice. A typed key for
/// the memory cache and for coalescing; ``diskKey`` is its stable text for the disk cache.
struct OutputKey: Hashable, Sendable {
    /// The source URL as given (absolute string).
    var source: String
    var options: ProcessingOptions
    var format: FormatChoice
    /// The ``WatermarkImage/id`` of the watermark drawn, when one is: a new watermark file makes new outputs.
    var watermark: String? = nil
    /// How an animated source is rendered, when the proxy keeps animations
    /// (``ImageProxy/Configuration/maxAnimationFrames`` above 1); `nil`: as its first frame.
    var animation: Animation? = nil
    /// The server settings the output depends on beyond its URL (``OutputSettings/keyText(for:options:)``), when
    /// they differ from those of the first version-2 keys; `nil`: those.
    var settings: String? = nil
    /// The client's `Cookie` header passed on to the origin (``ImageProxy/Configuration/cookiePassthrough``), when it
    /// is: the output is the client's own, and ``OutputCache`` neither keeps nor answers it.
    var cookie: String? = nil

    /// How many frames an animated source may keep, and the format they are encoded in.
    struct Animation: Hashable, Sendable {
        /// The most frames decoded (``ImageProxy/Configuration/maxAnimationFrames``).
        var frames: Int
        /// The format whose encoder keeps the frames: the URL's, the first `Accept` allows (WebP), or the first of
        /// the server's preferred formats that keeps them (GIF by default) when the format is derived from the
        /// source (``FormatNegotiation/animatedFormat(for:accept:encoders:preferred:)``); `nil`: the first frame.
        var format: ImageFormat?
        /// The largest frame kept, in canvas pixels (``ImageProxy/Configuration/maxAnimationFramePixels`` or a
        /// URL's `mafr`, the smaller); `nil`: none but the server's rule.
        var framePixels: Int? = nil
    }

    /// A stable name for the disk cache (which keys by string): the versioned fields on separate lines. Version 2:
    /// outputs derived from the source changed (a GIF source gives a GIF, WebP, AVIF and JPEG XL sources give
    /// JPEG or PNG, animations a GIF).
    var diskKey: String {
        var text = "imago-serve-output/v2\n\(source)\n\(options.canonicalDescription)\n\(format.keyText)"
        if let watermark { text += "\nwatermark=" + watermark }
        if let animation {
            text += "\nanimation=\(animation.frames):\(animation.format?.rawValue ?? "none")"
            if let pixels = animation.framePixels { text += ":frame-pixels=\(pixels)" }
        }
        if let settings { text += "\nsettings=" + settings }
        if let cookie { text += "\ncookie=" + SHA256.hash(cookie).hex }
        return text
    }
}

/// One encoded output with what a response needs.
struct Rendition: Sendable {
    /// The encoded bytes.
    var data: Data
    /// Their format.
    var format: ImageFormat
    /// The strong entity tag, quoted.
    var etag: String
    /// The source's `Last-Modified`, verbatim, when the render recorded it
    /// (``ImageProxy/Configuration/usesLastModified``).
    var sourceLastModified: String? = nil
    /// When the source stops being fresh, when the render recorded it
    /// (``ImageProxy/Configuration/passesSourceCacheControl``).
    var sourceExpiresAt: Date? = nil
    /// What else the render learnt (the source's validators, byte count and size, the result's size), kept in
    /// every tier.
    var facts = RenditionFacts()

    /// The rendition of `data` in `format` for `key`, its ETag a digest of the key, the format and the bytes.
    init(data: Data, format: ImageFormat, key: OutputKey) {
        var hashed = Data("\(key.diskKey)\n\(format)\n".utf8)
        hashed.append(data)
        let digest = hashed.withUnsafeBytes { SHA256.hash($0) }
        self.init(data: data, format: format, etag: "\"\(digest.hex.prefix(32))\"")
    }

    init(data: Data, format: ImageFormat, etag: String) {
        self.data = data
        self.format = format
        self.etag = etag
    }
}
