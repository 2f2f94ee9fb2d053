import CJPEGTurbo
import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// Progressive JPEG test files made with TurboJPEG (and jpegtran for restart intervals), and libjpeg's own 1/8-scale
/// decode to compare the DC reader with.
enum ProgressiveJPEGFixtures {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// libjpeg-turbo's 1/8-scale decode of `data` (tjDecompress2 at ceil(w/8) × ceil(h/8)): `gray8` for gray files,
    /// `rgba8` otherwise.
    static func libjpegEighth(_ data: Data, gray: Bool = false) throws -> PixelBuffer {
        guard let handle = tjInitDecompress() else { throw Failure(description: "tjInitDecompress") }
        defer { tjDestroy(handle) }
        let header = try self.header(data, handle)
        return try data.withUnsafeBytes { raw -> PixelBuffer in
            let bytes = raw.bindMemory(to: UInt8.self)
            let isGray = gray || header.colorspace == Int32(TJCS_GRAY.rawValue)
            let (w, h) = ((Int(header.width) + 7) / 8, (Int(header.height) + 7) / 8)
            let format: PixelBuffer.PixelFormat = isGray ? .gray8 : .rgba8
            return try PixelBuffer(width: w, height: h, format: format) { out in
                let status = tjDecompress2(
                    handle, bytes.baseAddress, UInt(bytes.count), out.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    Int32(w), Int32(w * format.bytesPerPixel), Int32(h),
                    (isGray ? TJPF_GRAY : TJPF_RGBA).rawValue, 0)
                guard status == 0 else { throw Failure(description: String(cString: tjGetErrorStr2(handle))) }
            }
        }
    }

    /// TurboJPEG's name for the file's chroma subsampling (TJSAMP_*), or −1 when its header call fails.
    static func subsampling(_ data: Data) -> Int32 {
        guard let handle = tjInitDecompress() else { return -1 }
        defer { tjDestroy(handle) }
        return (try? header(data, handle).subsampling) ?? -1
    }

    /// TurboJPEG's header call on `data` with `handle`; throws its message when it fails.
    static func header(
        _ data: Data, _ handle: tjhandle
    ) throws -> (width: Int32, height: Int32, subsampling: Int32, colorspace: Int32) {
        var (width, height, subsampling, colorspace): (Int32, Int32, Int32, Int32) = (0, 0, -1, 0)
        let status = data.withUnsafeBytes { raw in
            tjDecompressHeader3(
                handle, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt(raw.count), &width, &height,
                &subsampling, &colorspace)
        }
        guard status == 0 else { throw Failure(description: String(cString: tjGetErrorStr2(handle))) }
        return (width, height, subsampling, colorspace)
    }

    /// `image` encoded by TurboJPEG as a progressive JPEG with `subsampling`.
    static func progressive(_ image: PixelBuffer, subsampling: TJSAMP, quality: Int32 = 90) throws -> Data {
        guard let handle = tjInitCompress() else { throw Failure(description: "tjInitCompress") }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        defer { if let output { tjFree(output) } }
        let format = image.format == .gray8 ? TJPF_GRAY : TJPF_RGBA
        let status = image.withUnsafeBytes { pixels in
            tjCompress2(
                handle, pixels.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(image.width),
                Int32(image.bytesPerRow), Int32(image.height), format.rawValue, &output, &size,
                Int32(subsampling.rawValue), quality, TJFLAG_PROGRESSIVE)
        }
        guard status == 0, let output else { throw Failure(description: String(cString: tjGetErrorStr2(handle))) }
        return Data(bytes: output, count: Int(size))
    }

    /// A JPEG decoder with the DC reader off: libjpeg's own decode at every scale.
    static var libjpegOnly: JPEGDecoder {
        var decoder = JPEGDecoder()
        decoder.allowsProgressiveDC = false
        return decoder
    }

    /// `data` rewritten losslessly as progressive (tjTransform, TJXOPT_PROGRESSIVE): same coefficients and sampling.
    static func madeProgressive(_ data: Data) throws -> Data { try JPEGEncoder.losslesslyProgressive(data) }

    /// A Kodak photo (768×512) as a progressive JPEG.
    static func kodak(_ number: Int, subsampling: TJSAMP) throws -> Data {
        let name = number < 10 ? "0\(number)" : "\(number)"
        let photo = try PNGDecoder().decode(corpusData("kodak/\(name).png"), options: DecodingOptions()).image
        return try progressive(photo, subsampling: subsampling)
    }

    /// A deterministic noisy gradient of an odd size (edge blocks, partial MCUs), as a progressive JPEG.
    static func oddSized(width: Int, height: Int, subsampling: TJSAMP) throws -> Data {
        var state: UInt32 = 12345
        let image = try PixelBuffer(width: width, height: height, format: .rgba8) { out in
            for i in 0..<(width * height) {
                state = state &* 1_664_525 &+ 1_013_904_223
                let noise = Int(state >> 27)
                let (x, y) = (i % width, i / width)
                out[4 * i] = UInt8((x * 255 / width + noise) & 255)
                out[4 * i + 1] = UInt8((y * 255 / height + 2 * noise) & 255)
                out[4 * i + 2] = UInt8(((x + y) * 3 + noise) & 255)
                out[4 * i + 3] = 255
            }
        }
        return try progressive(image, subsampling: subsampling)
    }

    static let jpegtranPath = "/usr/bin/jpegtran"

    /// Whether jpegtran (Debian libjpeg-turbo-progs) is installed: the TurboJPEG 2.1 API cannot write restart
    /// intervals, jpegtran can (losslessly).
    static var hasJpegtran: Bool { FileManager.default.isExecutableFile(atPath: jpegtranPath) }

    /// `data` rewritten losslessly by jpegtran with `arguments` (e.g. `-progressive -restart 1`).
    static func jpegtran(_ data: Data, _ arguments: [String]) throws -> Data {
        guard hasJpegtran else {
            // `make test` installs it (scripts/install-deps.sh); a missing tool fails the test, never skips it.
            throw Failure(
                description: "jpegtran is missing at \(jpegtranPath): install libjpeg-turbo-progs (make deps)")
        }
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("imago-dc-\(UUID().uuidString).jpg")
        try data.write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: jpegtranPath)
        process.arguments = arguments + [input.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure(description: "jpegtran \(arguments) failed") }
        return output
    }

    /// What a decode gave: the pixels and flags, or the error's text.
    static func outcome(_ decoder: JPEGDecoder, _ data: Data, _ options: DecodingOptions) -> String {
        do {
            let container = try decoder.decode(data, options: options)
            var hasher = Hasher()
            hasher.combine(container.image)
            return "\(container.image.size) \(container.isPreview) \(container.originalSize) \(hasher.finalize())"
        } catch {
            return "error: \(error)"
        }
    }
}
