import Foundation
import ImagoCore

/// The corpus READMEs' comparison for AVIF/HEIC references: mean absolute error per channel over R, G, B, A,
/// counting R, G and B only where the reference alpha is above 0 (colour under alpha 0 is undefined).
/// `.infinity` when the sizes differ.
func referenceError(_ decoded: PixelBuffer, _ reference: PixelBuffer) -> Double {
    guard decoded.size == reference.size else { return .infinity }
    var total = 0
    var counted = 0
    for y in 0..<reference.height {
        for x in 0..<reference.width {
            let p = decoded[pixel: x, y]
            let q = reference[pixel: x, y]
            total += abs(Int(p.a) - Int(q.a))
            counted += 1
            guard q.a > 0 else { continue }
            total += abs(Int(p.r) - Int(q.r)) + abs(Int(p.g) - Int(q.g)) + abs(Int(p.b) - Int(q.b))
            counted += 3
        }
    }
    return Double(total) / Double(max(1, counted))
}

/// A corpus sequence's `reference/NAME.json`: frame count, durations and loop count (`nil` = the file does not
/// say).
struct SequenceReference: Decodable {
    var frames: Int
    var durations_ms: [Int]
    var loop: Int?
    var width: Int
    var height: Int
}

/// Loads `folder/reference/NAME.json` when it exists (animated files only).
func sequenceReference(_ folder: String, _ name: String) throws -> SequenceReference? {
    let url = corpusURL("\(folder)/reference").appendingPathComponent("\(name).json")
    guard FileManager.default.fileExists(atPath: url.path) else { return nil }
    return try JSONDecoder().decode(SequenceReference.self, from: Data(contentsOf: url))
}

/// The reference picture of a still file: `NAME.png`, converted to sRGB by the independent decoder, which is what
/// the default decode (colour managed) must match.
func stillReferenceURL(_ folder: String, _ name: String) -> URL {
    corpusURL("\(folder)/reference").appendingPathComponent("\(name).png")
}
