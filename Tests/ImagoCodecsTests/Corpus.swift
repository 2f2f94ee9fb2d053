import Foundation
import ImagoCore
import ImagoTesting
import Testing

/// The shared image corpus, found relative to this package's root (`../shared/corpus`). Fails the test loudly
/// when it is missing rather than passing vacuously.
func corpusURL(_ subfolder: String) -> URL {
    let (url, missing) = SharedCorpus.item(subfolder)
    if let missing { Issue.record(Comment(rawValue: missing)) }
    return url
}

/// The bytes of a corpus file, e.g. `corpusData("formats/TestJFIF.jpg")`.
func corpusData(_ path: String) throws -> Data {
    try Data(contentsOf: corpusURL(path))
}

/// The files directly in a corpus folder with extension `ext`, sorted by name.
func corpusFiles(_ folder: String, ext: String) throws -> [URL] {
    try FileManager.default.contentsOfDirectory(at: corpusURL(folder), includingPropertiesForKeys: nil)
        .filter { $0.pathExtension == ext }
        .sorted { $0.lastPathComponent < $1.lastPathComponent }
}

/// The index of the first byte where `a` and `b` differ (`nil` when they are the same; -1 when only their lengths
/// do), so that a failure names one place instead of diffing arrays of 100,000 bytes.
func firstDifference(_ a: PixelBuffer, _ b: PixelBuffer) -> Int? {
    a.bytes == b.bytes ? nil : zip(a.bytes, b.bytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1
}

/// Mean absolute difference per channel between two images of the same size, over R, G, B and A as read through
/// the RGBA pixel subscript (so gray and RGBA buffers compare). `nil` when the sizes differ.
func meanChannelError(_ a: PixelBuffer, _ b: PixelBuffer) -> Double? {
    guard a.size == b.size else { return nil }
    var total = 0
    for y in 0..<a.height {
        for x in 0..<a.width {
            let p = a[pixel: x, y]
            let q = b[pixel: x, y]
            total +=
                abs(Int(p.r) - Int(q.r)) + abs(Int(p.g) - Int(q.g)) + abs(Int(p.b) - Int(q.b))
                + abs(Int(p.a) - Int(q.a))
        }
    }
    return Double(total) / Double(a.width * a.height * 4)
}
