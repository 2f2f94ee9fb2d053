import CImagoShims
import CJPEGTurbo
import CPNG
import Foundation
import Imago

/// `decode`: JPEG and PNG decoding through Imago's codecs against the C libraries called directly, and
/// downsampled-while-decoding against full decodes.
///
/// Peers: TurboJPEG `tjDecompress2` into one buffer reused across calls (the fastest a caller can do: no page
/// faults), and libpng's simplified API into a reused buffer. Imago returns a fresh buffer each time, as a
/// decoder must.
enum DecodeBench {
    static func run() throws {
        let large = try corpus("formats/TestJFIF.jpg")  // 4032x3024, 12 MP
        let kodakPNG = try corpus("kodak/01.png")  // 768x512
        let kodakPixels = try PNGDecoder().decode(kodakPNG, options: DecodingOptions()).image
        let kodakJPEG = try JPEGEncoder().encode(kodakPixels, options: EncodingOptions(quality: 0.85))
        let thumbnail = DecodingOptions(targetSize: PixelSize(width: 256, height: 256))

        for (label, data, iterations) in [("12 MP TestJFIF.jpg", large, 2), ("768x512 Kodak q85", kodakJPEG, 20)] {
            let turbo = try TurboJPEGPeer(data)
            try compare(
                "decode: JPEG \(label) full, JPEGDecoder vs tjDecompress2", unit: "ms CPU", goal: 1.05,
                peerName: "TurboJPEG, reused buffer", rounds: 9,
                imago: { try msPerOp(iterations) { _ = try JPEGDecoder().decode(data, options: DecodingOptions()) } },
                peer: { try msPerOp(iterations) { try turbo.decode() } })
            // The same work as a decoder that returns its image: a new buffer per decode, whose pages the kernel
            // must fault in and zero (for 12 MP, 48 MB: the whole gap to the reused-buffer row above).
            try compare(
                "decode: JPEG \(label) full, JPEGDecoder vs tjDecompress2 into a new buffer", unit: "ms CPU",
                goal: 1.05, peerName: "TurboJPEG, malloc'd buffer per decode", rounds: 9,
                imago: { try msPerOp(iterations) { _ = try JPEGDecoder().decode(data, options: DecodingOptions()) } },
                peer: { try msPerOp(iterations) { try turbo.decodeIntoNewBuffer() } })
            try compare(
                "decode: JPEG \(label) to fit 256 vs full decode", unit: "ms CPU", goal: nil,
                peerName: "JPEGDecoder full size", rounds: 9,
                imago: { try msPerOp(iterations) { _ = try JPEGDecoder().decode(data, options: thumbnail) } },
                peer: { try msPerOp(iterations) { _ = try JPEGDecoder().decode(data, options: DecodingOptions()) } })
            // The same thumbnail made the naive way: decode everything, then area-average.
            let size = try JPEGDecoder().decode(data, options: thumbnail).image.size
            try compare(
                "decode: JPEG \(label) to fit 256 vs full decode + resample", unit: "ms CPU", goal: nil,
                peerName: "JPEGDecoder full size, then resampled(to:)", rounds: 9,
                imago: { try msPerOp(iterations) { _ = try JPEGDecoder().decode(data, options: thumbnail) } },
                peer: {
                    try msPerOp(iterations) {
                        _ = try JPEGDecoder().decode(data, options: DecodingOptions()).image.resampled(to: size)
                    }
                })
        }

        try jpegToWebP()

        let png = try LibPNGPeer(kodakPNG)
        try compare(
            "decode: PNG 768x512 Kodak, PNGDecoder vs libpng simplified", unit: "ms CPU", goal: 1.05,
            peerName: "libpng png_image_*, reused buffer", rounds: 9,
            imago: { try msPerOp(10) { _ = try PNGDecoder().decode(kodakPNG, options: DecodingOptions()) } },
            peer: { try msPerOp(10) { try png.decode() } })
    }

    /// A 256-px WebP (q80, method 4) and a 256-px JPEG (q80) of each of eight Kodak photos as q90 4:2:0 JPEGs,
    /// the work of `imago serve`'s cold thumbnails: from the JPEG's YCbCr planes (`JPEGDecoder.decodeYCbCr`, the
    /// planes into the encoder) against the RGB path (`JPEGDecoder.decode` fitted, RGB into the encoder), in the
    /// same run.
    static func jpegToWebP() throws {
        let box = DecodingOptions(targetSize: PixelSize(width: 256, height: 256))
        let options = EncodingOptions(quality: 0.8)
        let jpegs = try ["01", "03", "05", "08", "13", "17", "21", "23"].map { name in
            let photo = try PNGDecoder().decode(try corpus("kodak/\(name).png"), options: DecodingOptions()).image
            return try JPEGEncoder().encode(photo, options: EncodingOptions(quality: 0.9))
        }
        let encoders: [(name: String, encoder: any YCbCrEncoding, iterations: Int)] = [
            ("WebP", WebPEncoder(), 3), ("JPEG", JPEGEncoder(), 5),
        ]
        for (name, encoder, iterations) in encoders {
            try compare(
                "decode: Kodak JPEG to a 256-px \(name), from the YCbCr planes vs through RGB", unit: "ms CPU",
                goal: 1.0, peerName: "JPEGDecoder.decode + \(name)Encoder.encode", rounds: 9,
                imago: {
                    try msPerOp(iterations) {
                        for jpeg in jpegs {
                            guard let planes = try JPEGDecoder().decodeYCbCr(jpeg, options: box) else {
                                throw CocoaError(.featureUnsupported)
                            }
                            _ = try encoder.encode(planes.image, options: options)
                        }
                    } / Double(jpegs.count)
                },
                peer: {
                    try msPerOp(iterations) {
                        for jpeg in jpegs {
                            _ = try encoder.encode(JPEGDecoder().decode(jpeg, options: box).image, options: options)
                        }
                    } / Double(jpegs.count)
                })
        }
    }

    static func corpus(_ path: String) throws -> Data {
        let candidates = [
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("../shared/corpus"),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "../../../shared/corpus"),
        ]
        for root in candidates where FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path) {
            return try Data(contentsOf: root.appendingPathComponent(path))
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "../shared/corpus/\(path)"])
    }

    /// CPU milliseconds (user + system, this thread) per call of `body`, averaged over `iterations` calls.
    ///
    /// CPU time rather than wall time: the benchmark machine is shared, and other people's builds stretch wall
    /// time by 2-3x without changing the work done. Page faults are counted (system time in this thread).
    static func msPerOp(_ iterations: Int, _ body: () throws -> Void) rethrows -> Double {
        let t0 = threadCPUTime()
        for _ in 0..<iterations { try body() }
        return (threadCPUTime() - t0) * 1000 / Double(iterations)
    }

    /// CPU seconds used by the calling thread.
    static func threadCPUTime() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// TurboJPEG called directly: one handle per decode (as JPEGDecoder does), output into a buffer kept across calls.
private final class TurboJPEGPeer {
    let data: [UInt8]
    let width: Int32
    let height: Int32
    var output: [UInt8]

    init(_ data: Data) throws {
        self.data = [UInt8](data)
        guard let handle = tjInitDecompress() else { throw BenchError.peerFailed("tjInitDecompress") }
        defer { tjDestroy(handle) }
        var w: Int32 = 0
        var h: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, self.data, UInt(self.data.count), &w, &h, &subsampling, &colorspace) == 0
        else { throw BenchError.peerFailed("tjDecompressHeader3") }
        (width, height) = (w, h)
        output = [UInt8](repeating: 0, count: Int(w) * Int(h) * 4)
    }

    /// Decodes into the buffer kept across calls (its pages were faulted in once).
    func decode() throws {
        try output.withUnsafeMutableBufferPointer { out in
            guard let base = out.baseAddress else { throw BenchError.peerFailed("empty output buffer") }
            try decode(into: base)
        }
    }

    /// Decodes into a buffer malloc'd for this call and freed after it, as a caller keeping the image must.
    func decodeIntoNewBuffer() throws {
        guard let buffer = malloc(Int(width) * Int(height) * 4) else { throw BenchError.peerFailed("malloc") }
        defer { free(buffer) }
        try decode(into: buffer.assumingMemoryBound(to: UInt8.self))
    }

    /// One tjDecompress2 of the whole image as RGBA into `destination`, with a handle of its own.
    private func decode(into destination: UnsafeMutablePointer<UInt8>) throws {
        guard let handle = tjInitDecompress() else { throw BenchError.peerFailed("tjInitDecompress") }
        defer { tjDestroy(handle) }
        let status = tjDecompress2(
            handle, data, UInt(data.count), destination, width, width * 4, height, TJPF_RGBA.rawValue, 0)
        guard status == 0 else { throw BenchError.peerFailed("tjDecompress2") }
    }
}

/// libpng's simplified API called directly, RGBA output into a buffer kept across calls.
private final class LibPNGPeer {
    let data: [UInt8]
    var output: [UInt8] = []

    init(_ data: Data) throws {
        self.data = [UInt8](data)
        try decode()
    }

    func decode() throws {
        var image = png_image()
        image.version = cimago_png_image_version
        defer { png_image_free(&image) }
        guard png_image_begin_read_from_memory(&image, data, data.count) != 0 else {
            throw BenchError.peerFailed("png_image_begin_read_from_memory")
        }
        image.format = cimago_png_format_rgba
        let count = Int(image.width) * Int(image.height) * 4
        if output.count != count { output = [UInt8](repeating: 0, count: count) }
        let ok = output.withUnsafeMutableBytes { out in
            png_image_finish_read(&image, nil, out.baseAddress, Int32(image.width * 4), nil)
        }
        guard ok != 0 else { throw BenchError.peerFailed("png_image_finish_read") }
    }
}

private enum BenchError: Error {
    case peerFailed(String)
}
