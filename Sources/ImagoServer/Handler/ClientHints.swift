import Foundation

/// The client hints imgproxy reads with `IMGPROXY_ENABLE_CLIENT_HINTS`: the device pixel ratio (`Sec-CH-DPR`, else
/// `DPR`) and the image's width in device pixels (`Sec-CH-Width`, else `Width`), as defaults a URL's own `dpr` and
/// `width` override (``ImageProxy/Configuration/usesClientHints``).
struct ClientHints: Sendable, Hashable {
    /// The largest DPR taken from a hint (imgproxy's); larger or unparsable values are ignored.
    static let maxDPR = 8.0
    /// The request fields the hints come from, for `Vary`.
    static let varyFields = ["Sec-CH-DPR", "DPR", "Sec-CH-Width", "Width"]

    /// The hinted device pixel ratio, in (0, ``maxDPR``].
    var dpr: Double?
    /// The hinted width in device pixels, above 0.
    var width: Int?

    /// The hints of a request's `headers` (names lowercased).
    init(headers: [String: String]) {
        if let text = headers["sec-ch-dpr"] ?? headers["dpr"],
            let value = Double(text.trimmingCharacters(in: .whitespaces)),
            value > 0, value <= Self.maxDPR
        {
            dpr = value
        }
        if let text = headers["sec-ch-width"] ?? headers["width"],
            let value = Int(text.trimmingCharacters(in: .whitespaces)),
            value > 0, value <= 1 << 20
        {
            width = value
        }
    }

    /// `options` with the hints as defaults, as imgproxy applies them before the `default` preset and the URL's
    /// options: the DPR where neither set `dpr`, and the width (in CSS pixels: the hinted width divided by the
    /// hinted DPR, rounded) where neither set a width (`set`: what they set; `dpr:1` and `w:0` count). A hint that
    /// would take the box times the DPR past ``OptionParser/maximumSide``, the bound a URL's own sizes are held
    /// to, is not taken.
    func applied(to options: ProcessingOptions, set: OptionParser.HintedFields = []) -> ProcessingOptions {
        func withinBounds(_ candidate: ProcessingOptions) -> Bool {
            let box = candidate.scaledBox
            return box.width <= OptionParser.maximumSide && box.height <= OptionParser.maximumSide
        }
        var hinted = options
        if let dpr, !set.contains(.dpr) {
            hinted.dpr = dpr
            if !withinBounds(hinted) { hinted.dpr = 1 }
        }
        if let width, !set.contains(.width) {
            hinted.width = max(1, Int((Double(width) / (dpr ?? 1)).rounded()))
            if !withinBounds(hinted) { hinted.width = 0 }
        }
        return hinted
    }
}
