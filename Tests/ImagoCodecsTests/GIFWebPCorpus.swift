import CPNG
import Foundation
import ImagoCore
import Testing

/// The shared image corpus folder `subfolder` (`../shared/corpus/<subfolder>` beside the package). Records an
/// issue when it is missing, so that corpus tests never pass vacuously.
func gifWebPCorpusURL(_ subfolder: String, filePath: String = #filePath) -> URL {
    let root = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let url = root.deletingLastPathComponent().appendingPathComponent("shared/corpus/\(subfolder)")
    var isDirectory: ObjCBool = false
    if !FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) || !isDirectory.boolValue {
        Issue.record("the image corpus folder \(url.path) is missing; it must sit at ../shared/corpus")
    }
    return url
}

/// The files in a corpus folder with the extension `ext`, sorted by name.
func gifWebPCorpusFiles(_ subfolder: String, ext: String) throws -> [URL] {
    let folder = gifWebPCorpusURL(subfolder)
    return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        .filter { $0.pathExtension == ext }
        .sorted { $0.lastPathComponent < $1.lastPathComponent }
}

/// TEST-ONLY stand-in for the PNG decoder (which lives on another branch): decodes a reference PNG to RGBA8
/// with libpng's simplified API. Replace with `PNGDecoder` once both branches are merged.
func decodeReferencePNG(_ url: URL) throws -> PixelBuffer {
    struct ReferencePNGError: Error, CustomStringConvertible {
        var description: String
    }
    let data = try Data(contentsOf: url)
    var image = png_image()
    image.version = png_uint_32(PNG_IMAGE_VERSION)
    defer { png_image_free(&image) }
    let began = data.withUnsafeBytes { png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }
    guard began != 0 else { throw ReferencePNGError(description: "libpng cannot read \(url.lastPathComponent)") }
    image.format = png_uint_32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)  // PNG_FORMAT_RGBA
    let width = Int(image.width)
    let height = Int(image.height)
    var finished: Int32 = 0
    let buffer = try PixelBuffer(width: width, height: height, format: .rgba8) { output in
        finished = png_image_finish_read(&image, nil, output.baseAddress, Int32(width * 4), nil)
    }
    guard finished != 0 else { throw ReferencePNGError(description: "libpng failed on \(url.lastPathComponent)") }
    return buffer
}

/// Mean absolute difference per channel between two RGBA buffers of the same size (`.infinity` if they differ
/// in size), and the largest single-channel difference.
func meanAbsoluteError(_ a: PixelBuffer, _ b: PixelBuffer) -> (mean: Double, max: Int) {
    guard a.size == b.size, a.format == b.format else { return (.infinity, 255) }
    var sum = 0
    var largest = 0
    a.withUnsafeBytes { x in
        b.withUnsafeBytes { y in
            for i in 0..<x.count {
                let d = abs(Int(x[i]) - Int(y[i]))
                sum += d
                largest = max(largest, d)
            }
        }
    }
    return (Double(sum) / Double(max(1, a.byteCount)), largest)
}
