import CPNG
import Foundation
import ImagoCore
import Testing

/// Decodes a reference PNG to RGBA8 with libpng's simplified API, independently of the PNGDecoder under test
/// (which ignores gAMA and may return gray8), so the references stay a second opinion.
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
