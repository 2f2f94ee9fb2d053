import Foundation
import ImagoCodecs

extension FuzzTargets {
    /// AVIFDecoder at full size, downsampled, and with partial data allowed and orientation returned, under a
    /// 4 MP limit (as `jpeg`); sequences decode every frame.
    static func avif(_ data: Data) {
        decodeEveryWay(AVIFDecoder(), data)
    }

    /// HEIFDecoder, as `avif`.
    static func heif(_ data: Data) {
        decodeEveryWay(HEIFDecoder(), data)
    }

    /// TIFFDecoder, as `avif`.
    static func tiff(_ data: Data) {
        decodeEveryWay(TIFFDecoder(), data)
    }

    /// SVGDecoder (librsvg, with Imago's check of embedded `data:` images first), as `avif`.
    static func svg(_ data: Data) {
        decodeEveryWay(SVGDecoder(), data)
    }

    /// SVGSanitizer (libxml2): a document it accepts must come out in a form it accepts again unchanged, so that
    /// nothing the first pass kept is removed by a second (something the first pass missed).
    static func svgSanitize(_ data: Data) {
        guard let first = try? SVGSanitizer().sanitize(data) else { return }
        guard let second = try? SVGSanitizer().sanitize(first.data), second == first else {
            fatalError("SVGSanitizer is not idempotent on this input")
        }
    }
}
