import CGIF
import CPNG
import CWebP
import Foundation
import Imago

/// `decode-webp-gif`: WebP decode through `WebPDecoder` against libwebp's `WebPDecodeRGBA` called directly
/// (lossy and lossless, a Kodak photo re-encoded with `WebPEncoder` at startup), and animated GIF decode
/// (record-by-record with compositing) against giflib's `DGifSlurp` alone (palette indices, no compositing).
enum WebPGIFBench {
    static func run() throws {
        let corpus = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            .deletingLastPathComponent().appendingPathComponent("shared/corpus")
        let photo = try loadPNG(corpus.appendingPathComponent("kodak/01.png"))
        let lossy = try WebPEncoder().encode(photo, options: EncodingOptions(quality: 0.85))
        let lossless = try WebPEncoder().encode(photo, options: EncodingOptions(isLossless: true))
        let size = "\(photo.width)x\(photo.height)"

        for (name, data) in [("lossy", lossy), ("lossless", lossless)] {
            let iterations = 20
            try compare(
                "webp \(name) decode \(size) (\(data.count / 1024) KB)", unit: "ms", goal: 1.1,
                peerName: "libwebp WebPDecodeRGBA",
                imago: { try msPerIteration(iterations) { _ = try WebPDecoder().decode(data, options: .init()) } },
                peer: { try msPerIteration(iterations) { try decodeWithLibwebp(data) } })
        }
        let target = DecodingOptions(targetSize: PixelSize(width: 256, height: 256))
        try compare(
            "webp lossy decode to fit 256 (libwebp scaling)", unit: "ms", goal: nil,
            peerName: "libwebp WebPDecodeRGBA full size",
            imago: { try msPerIteration(20) { _ = try WebPDecoder().decode(lossy, options: target) } },
            peer: { try msPerIteration(20) { try decodeWithLibwebp(lossy) } })

        for file in ["sample_big.gif", "moon_impact.gif", "gifplayer-muybridge.gif"] {
            let data = try Data(contentsOf: corpus.appendingPathComponent("gif/samples/\(file)"))
            let frames = try GIFDecoder().decode(data, options: .init()).frames.count
            let result = try compare(
                "gif decode \(file) (\(frames) frames)", unit: "ms", goal: nil,
                peerName: "giflib DGifSlurp (indices only)",
                imago: { try msPerIteration(3) { _ = try GIFDecoder().decode(data, options: .init()) } },
                peer: { try msPerIteration(3) { try slurpWithGiflib(data) } })
            print(
                String(
                    format: "    %@: %.0f frames/s composited (giflib alone: %.0f frames/s)", file,
                    Double(frames) / (result.imago / 1000), Double(frames) / (result.peer / 1000)))
        }
    }

    struct BenchError: Error, CustomStringConvertible {
        var description: String
    }

    private static func msPerIteration(_ n: Int, _ body: () throws -> Void) throws -> Double {
        try time { for _ in 0..<n { try body() } } * 1000 / Double(n)
    }

    /// The baseline: libwebp's one-call decoder, output freed with `WebPFree`.
    private static func decodeWithLibwebp(_ data: Data) throws {
        let pixels = data.withUnsafeBytes { raw -> UnsafeMutablePointer<UInt8>? in
            var width: Int32 = 0
            var height: Int32 = 0
            return WebPDecodeRGBA(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, &width, &height)
        }
        guard let pixels else { throw BenchError(description: "WebPDecodeRGBA failed") }
        WebPFree(pixels)
    }

    /// The baseline: giflib decoding every frame's indices into memory (`DGifSlurp`), no colour, no canvas.
    private static func slurpWithGiflib(_ data: Data) throws {
        final class Source {
            let data: Data
            var offset = 0
            init(_ data: Data) { self.data = data }
        }
        let source = Source(data)
        try withExtendedLifetime(source) {
            var error: Int32 = 0
            let read: InputFunc = { gif, buffer, count in
                guard let gif, let buffer, let user = gif.pointee.UserData else { return 0 }
                let source = Unmanaged<Source>.fromOpaque(user).takeUnretainedValue()
                let n = min(Int(count), source.data.count - source.offset)
                source.data.copyBytes(to: buffer, from: source.offset..<(source.offset + n))
                source.offset += n
                return Int32(n)
            }
            guard let gif = DGifOpen(Unmanaged.passUnretained(source).toOpaque(), read, &error) else {
                throw BenchError(description: "DGifOpen failed")
            }
            defer { DGifCloseFile(gif, nil) }
            guard DGifSlurp(gif) == GIF_OK else { throw BenchError(description: "DGifSlurp failed") }
        }
    }

    /// Loads a PNG with libpng's simplified API (this branch has no PNG decoder yet; use `PNGDecoder` once merged).
    private static func loadPNG(_ url: URL) throws -> PixelBuffer {
        let data = try Data(contentsOf: url)
        var image = png_image()
        image.version = png_uint_32(PNG_IMAGE_VERSION)
        defer { png_image_free(&image) }
        guard data.withUnsafeBytes({ png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }) != 0 else {
            throw BenchError(description: "cannot read \(url.path)")
        }
        image.format = png_uint_32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)
        let width = Int(image.width)
        return try PixelBuffer(width: width, height: Int(image.height), format: .rgba8) { out in
            guard png_image_finish_read(&image, nil, out.baseAddress, Int32(width * 4), nil) != 0 else {
                throw BenchError(description: "libpng failed on \(url.path)")
            }
        }
    }
}
