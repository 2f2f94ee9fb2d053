import Foundation
import ImagoCodecs
import ImagoCore

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

    /// An AVIF or HEIC that ``ISOBMFFFuzzFile`` writes from the input (decisions about boxes, items, extents and
    /// properties, not a file's bytes) through the decoder of its brand, as `avif`: every image decoded must be
    /// within the pixel limit, frame by frame, whatever its items declare. With `IMAGO_ISOBMFF_OUT=PATH` (replay
    /// only), the written file is saved there, to look at a finding with other tools.
    static func isobmff(_ data: Data) {
        let file = ISOBMFFFuzzFile(data)
        if let path = isobmffOutputPath {
            _ = FileManager.default.createFile(atPath: path, contents: file.data)
        }
        let decoder: any ImageDecoding = file.isAVIF ? AVIFDecoder() : HEIFDecoder()
        decodeEveryWay(decoder, file.data) { decoded, options in
            for frame in decoded.frames {
                let size = frame.buffer.size
                precondition(size.pixelCount <= options.pixelLimit, "decoded \(size) over \(options.pixelLimit)")
            }
        }
    }

    /// `IMAGO_ISOBMFF_OUT`, read once a process rather than once an input.
    private static let isobmffOutputPath = ProcessInfo.processInfo.environment["IMAGO_ISOBMFF_OUT"]

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
        let second = Result { try SVGSanitizer().sanitize(first.data) }
        guard case .success(let again) = second, again == first else {
            let text = String(decoding: first.data, as: UTF8.self)
            fatalError("SVGSanitizer is not idempotent on this input; first pass:\n\(text)\nsecond pass: \(second)")
        }
    }
}
