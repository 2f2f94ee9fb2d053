import CWebP
import Foundation
import ImagoCodecs
import ImagoCore
import ImagoTesting
import Testing

/// Images over the pixel limit: decoded at a reduced codec scale when a target size (or a decoded-byte limit)
/// asks for one and the codec can produce it without the full size, refused with `tooManyPixels` otherwise.
@Suite(.serialized) struct HugeImageScaleDownTests {
    static let thumbnail = PixelSize(width: 256, height: 256)

    /// A 20000×20000 gray baseline JPEG of one flat level (128): one-code Huffman tables, two bits a block
    /// (1.5 MB).
    static let hugeJPEG: Data = {
        let side = 20_000
        var d: [UInt8] = [0xFF, 0xD8]
        d += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)  // DQT 0: all ones
        d += [0xFF, 0xC0, 0x00, 0x0B, 0x08, UInt8(side >> 8), UInt8(side & 255), UInt8(side >> 8), UInt8(side & 255)]
        d += [0x01, 0x01, 0x11, 0x00]  // one component, 1×1 sampling, table 0
        for tableClass: UInt8 in [0x00, 0x10] {  // DC 0 and AC 0: a single 1-bit code for symbol 0
            d += [0xFF, 0xC4, 0x00, 0x14, tableClass, 1] + [UInt8](repeating: 0, count: 15) + [0x00]
        }
        d += [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00]  // SOS
        let blocks = (side / 8) * (side / 8)
        d += [UInt8](repeating: 0, count: (blocks * 2 + 7) / 8)  // DC difference 0, EOB: "0" "0"
        d += [0xFF, 0xD9]
        return Data(d)
    }()

    /// A 12000×12000 lossy WebP of a flat colour, encoded from YUV planes (216 MB while encoding, a few KB after).
    static let hugeWebP: Data? = {
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { return nil }
        picture.width = 12_000
        picture.height = 12_000
        picture.use_argb = 0
        guard WebPPictureAlloc(&picture) != 0 else { return nil }
        defer { WebPPictureFree(&picture) }
        let ySize = Int(picture.y_stride) * 12_000
        let uvSize = Int(picture.uv_stride) * 6_000
        picture.y.update(repeating: 90, count: ySize)
        picture.u.update(repeating: 100, count: uvSize)
        picture.v.update(repeating: 160, count: uvSize)
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { return nil }
        config.quality = 50
        config.method = 0
        let writer = UnsafeMutablePointer<WebPMemoryWriter>.allocate(capacity: 1)
        defer { writer.deallocate() }
        WebPMemoryWriterInit(writer)
        defer { WebPMemoryWriterClear(writer) }
        picture.writer = WebPMemoryWrite
        picture.custom_ptr = UnsafeMutableRawPointer(writer)
        guard WebPEncode(&config, &picture) != 0, let mem = writer.pointee.mem else { return nil }
        return Data(bytes: mem, count: writer.pointee.size)
    }()

    /// A PNG whose IHDR declares 20000×20000 gray (the image data is a token empty stream: the size is refused
    /// first).
    static let hugePNG: Data = {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let typeAndData = Array(type.utf8) + data
            return ColorProfileRoundTripTests.bigEndian(UInt32(data.count)) + typeAndData
                + ColorProfileRoundTripTests.bigEndian(ColorProfileRoundTripTests.crc32(typeAndData))
        }
        let side = ColorProfileRoundTripTests.bigEndian(20_000)
        var d: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        d += chunk("IHDR", side + side + [8, 0, 0, 0, 0])
        d += chunk("IDAT", [0x78, 0x9C, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x01])
        d += chunk("IEND", [])
        return Data(d)
    }()

    func options(target: PixelSize?) -> DecodingOptions { DecodingOptions(targetSize: target) }

    @Test(.timeLimit(.minutes(1))) func aHugeBaselineJPEGIsDecodedAtAnEighthForAThumbnail() throws {
        // When the 20000×20000 JPEG is decoded for a 256-pixel thumbnail
        let image = try JPEGDecoder().decode(Self.hugeJPEG, options: options(target: Self.thumbnail))
        // Then it arrives at 256×256, flat 128, with the original size reported
        #expect(image.image.size == Self.thumbnail)
        #expect(image.originalSize == PixelSize(width: 20_000, height: 20_000))
        #expect(image.image[pixel: 128, 128] == RGBA(r: 128, g: 128, b: 128))
        // And without a target it is refused with the typed error
        #expect(throws: CodecError.tooManyPixels(width: 20_000, height: 20_000, limit: 100_000_000)) {
            try JPEGDecoder().decode(Self.hugeJPEG, options: options(target: nil))
        }
        // And a target whose 1/8 scale is still over the limit is refused too
        var tight = options(target: Self.thumbnail)
        tight.pixelLimit = 1_000_000  // 2500×2500 at 1/8 is 6.25 MP
        #expect(throws: CodecError.tooManyPixels(width: 20_000, height: 20_000, limit: 1_000_000)) {
            try JPEGDecoder().decode(Self.hugeJPEG, options: tight)
        }
    }

    @Test(.timeLimit(.minutes(1))) func aHugeLossyWebPIsDecodedScaled() throws {
        let webp = try #require(Self.hugeWebP)
        let image = try WebPDecoder().decode(webp, options: options(target: Self.thumbnail))
        #expect(image.image.size == Self.thumbnail)
        #expect(image.originalSize == PixelSize(width: 12_000, height: 12_000))
        #expect(throws: CodecError.tooManyPixels(width: 12_000, height: 12_000, limit: 100_000_000)) {
            try WebPDecoder().decode(webp, options: options(target: nil))
        }
    }

    @Test func aHugePNGIsRefusedEvenWithATarget() throws {
        #expect(throws: CodecError.tooManyPixels(width: 20_000, height: 20_000, limit: 100_000_000)) {
            try PNGDecoder().decode(Self.hugePNG, options: options(target: Self.thumbnail))
        }
    }

    @Test func theDecodedByteLimitScalesJPEGWebPAndPNG() throws {
        // Given a 768×512 photo as JPEG, WebP and PNG, and a limit of 400 KB of pixels
        let png = try corpusData("kodak/01.png")
        let pixels = try PNGDecoder().decode(png, options: DecodingOptions()).image
        var limited = DecodingOptions()
        limited.decodedByteLimit = 400_000
        for data in [
            try JPEGEncoder().encode(pixels, options: EncodingOptions()),
            try WebPEncoder().encode(pixels, options: EncodingOptions()),
            png,
        ] {
            // When decoded under the limit, Then the result fits it with the aspect kept (PNG: read at full size,
            // since a quarter would be under twice the limit's size, then area-averaged; PNGShrinkTests covers the
            // shrink while reading)
            let image = try ImageDecoderRegistry(ImagoCodecs.decoders).decode(data, options: limited).image
            #expect(image.byteCount <= 400_000)
            #expect(image.width >= 300 && abs(image.width * 2 - image.height * 3) <= 3)
        }
    }

    // MARK: - imago decode in a child process: peak RSS

    @Test(.timeLimit(.minutes(2))) func imagoDecodeMaxSizeStaysUnder100MB() throws {
        let tool = try #require(Self.imagoExecutable(), "build the imago executable first (swift build)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-huge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var files: [(String, Data)] = [("huge.jpg", Self.hugeJPEG), ("huge.png", Self.hugePNG)]
        files.append(("huge.webp", try #require(Self.hugeWebP)))
        for (name, data) in files {
            let path = folder.appendingPathComponent(name).path
            try data.write(to: URL(fileURLWithPath: path))
            let scaled = try Self.runMeasured(tool, ["decode", "--json", "--max-size", "256x256", path])
            let refused = try Self.runMeasured(tool, ["decode", "--json", path])
            #expect(refused.status == 1 && refused.output.contains("pixel"), "\(name): \(refused.output)")
            if name.hasSuffix("png") {
                #expect(scaled.status == 1 && scaled.output.contains("pixel"), "\(name): \(scaled.output)")
            } else {
                #expect(scaled.status == 0 && scaled.output.contains("\"width\":256"), "\(name): \(scaled.output)")
                #expect(scaled.peakRSSKB < 100_000, "\(name): peak RSS \(scaled.peakRSSKB) KB")
                print("imago decode --max-size 256x256 \(name): peak RSS \(scaled.peakRSSKB) KB")
            }
        }
    }

    /// Runs `tool arguments` under `/usr/bin/time -v`: exit status, standard output and peak RSS in KB.
    static func runMeasured(
        _ tool: URL, _ arguments: [String]
    ) throws -> (status: Int32, output: String, peakRSSKB: Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        process.arguments = ["-v", tool.path] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let line = errors.split(separator: "\n").first { $0.contains("Maximum resident set size") }
        let rss = line.flatMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }
        // /usr/bin/time exits with the child's status.
        return (process.terminationStatus, output, rss ?? .max)
    }

    /// The plain `imago` build, for the peak-RSS budgets (a sanitizer build takes several times the memory;
    /// ``ImagoTesting/builtExecutable(named:environmentVariable:preferringPlainBuild:filePath:)``; `$IMAGO_CLI`
    /// overrides).
    static func imagoExecutable(filePath: String = #filePath) -> URL? {
        ImagoTesting.builtExecutable(
            named: "imago", environmentVariable: "IMAGO_CLI", preferringPlainBuild: true, filePath: filePath)
    }
}
