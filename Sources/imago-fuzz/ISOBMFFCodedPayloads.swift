import Foundation
import ImagoCodecs
import ImagoCore

/// Real coded images for ``ISOBMFFFuzzFile``: a 64×64 gradient (x265's smallest picture without padding) encoded once a process by Imago's own AVIF and HEIC
/// encoders (libaom, x265), from which the codec configuration properties (`av1C`, `hvcC`) and the `mdat` payloads
/// are taken, so that a written file's items decode for real rather than failing in the codec.
struct ISOBMFFCodedPayloads: Sendable {
    /// The AV1 image's `av1C` box, whole.
    let av1Configuration: [UInt8]
    /// The AV1 image's bytes (its `mdat` payload).
    let av1: [UInt8]
    /// The HEVC image's `hvcC` box, whole.
    let hevcConfiguration: [UInt8]
    /// The HEVC image's bytes (its `mdat` payload, length-prefixed NAL units).
    let hevc: [UInt8]

    /// The images' width and height.
    static let side = 64

    /// Made on first use.
    static let shared: ISOBMFFCodedPayloads = {
        do {
            var image = try PixelBuffer(width: side, height: side)
            for y in 0..<side {
                for x in 0..<side {
                    image[pixel: x, y] = RGBA(r: UInt8(x * 4), g: UInt8(y * 4), b: UInt8(255 - x * 2), a: 255)
                }
            }
            let avif = [UInt8](try AVIFEncoder(speed: 10).encode(image, options: EncodingOptions(quality: 0.5)))
            let heic = [UInt8](try HEICEncoder().encode(image, options: EncodingOptions(quality: 0.5)))
            return ISOBMFFCodedPayloads(
                av1Configuration: try box("av1C", in: avif), av1: try Array(box("mdat", in: avif).dropFirst(8)),
                hevcConfiguration: try box("hvcC", in: heic), hevc: try Array(box("mdat", in: heic).dropFirst(8)))
        } catch {
            fatalError("the isobmff target needs Imago's AVIF and HEIC encoders: \(error)")
        }
    }()

    private struct Missing: Error { let type: String }

    /// The first box of `type` in `file` (found by its type's bytes, as the encoders' small files hold no look-alike).
    private static func box(_ type: String, in file: [UInt8]) throws -> [UInt8] {
        let name = Array(type.utf8)
        for start in 4..<max(4, file.count - 4) where Array(file[start..<start + 4]) == name {
            let size = file[start - 4..<start].reduce(0) { $0 << 8 | Int($1) }
            guard size >= 8, start - 4 + size <= file.count else { continue }
            return Array(file[start - 4..<start - 4 + size])
        }
        throw Missing(type: type)
    }
}
