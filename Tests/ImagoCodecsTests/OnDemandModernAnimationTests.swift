import CAVIF
import CJXL
import Foundation
import ImagoCore
import Testing

@testable import ImagoCodecs

/// APNG, AVIF and JPEG XL animations over ``DecodingOptions/animationMemoryBudget`` are decoded on demand, as GIF
/// and WebP ones are: every frame, played in order or after seeks (backwards, forwards past key frames, repeats),
/// equals the up-front decode of the same file, and the container costs what it holds.
@Suite struct OnDemandModernAnimationTests {
    static let registry = ImageDecoderRegistry(ImagoCodecs.decoders)

    static func options(budget: Int, target: PixelSize? = nil) -> DecodingOptions {
        var options = DecodingOptions(targetSize: target)
        options.animationMemoryBudget = budget
        return options
    }

    /// Decodes `data` up front and on demand (budget 1 byte, or `budget`) and compares every frame in order, then
    /// at `seeks` (default: a mix of backward, forward and repeated requests).
    static func expectOnDemandMatchesUpFront(
        _ data: Data, budget: Int = 1, target: PixelSize? = nil, seeks: [Int]? = nil, label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let upFront = try registry.decode(data, options: options(budget: .max, target: target))
        let onDemand = try registry.decode(data, options: options(budget: budget, target: target))
        let count = upFront.frames.count
        #expect(upFront.frameSource == nil, "\(label)", sourceLocation: sourceLocation)
        #expect(onDemand.frameSource != nil && onDemand.frames.count == 1, "\(label)", sourceLocation: sourceLocation)
        #expect(onDemand.frameCount == count, "\(label)", sourceLocation: sourceLocation)
        #expect(onDemand.frameDurations == upFront.frameDurations, "\(label)", sourceLocation: sourceLocation)
        #expect(onDemand.loopCount == upFront.loopCount, "\(label)", sourceLocation: sourceLocation)
        #expect(onDemand.originalSize == upFront.originalSize, "\(label)", sourceLocation: sourceLocation)
        #expect(onDemand.image == upFront.image, "\(label) still image", sourceLocation: sourceLocation)
        for index in 0..<count {
            let frame = try onDemand.frame(at: index)
            #expect(
                frame.buffer == upFront.frames[index].buffer, "\(label) frame \(index)", sourceLocation: sourceLocation)
            #expect(frame.duration == upFront.frames[index].duration, sourceLocation: sourceLocation)
        }
        let jumps =
            seeks ?? [count - 1, 0, count / 2, count / 2 - 1, 1, count - 2, count - 2, 2, count / 3, count - 1]
        for index in jumps where index >= 0 && index < count {
            #expect(
                try onDemand.frame(at: index).buffer == upFront.frames[index].buffer, "\(label) seek to \(index)",
                sourceLocation: sourceLocation)
        }
        #expect(throws: CodecError.self, sourceLocation: sourceLocation) { try onDemand.frame(at: count) }
    }

    // MARK: - Corpus files

    static let corpusAnimations: [String] = {
        let apng = (try? FileManager.default.contentsOfDirectory(atPath: corpusURL("apng").path)) ?? []
        return apng.filter { $0.hasSuffix(".png") && !$0.contains(".frame") }.sorted().map { "apng/\($0)" } + [
            "avif/gen-anim-4frames.avif", "avif/libavif-colors-animated-8bpc.avif",
            "avif/libavif-colors-animated-8bpc-alpha-exif-xmp.avif", "avif/linku-star-10bpc.avifs",
            "jxl/gen-anim-4frames-loop2.jxl", "jxl/conformance-animation_icos4d.jxl",
        ]
    }()

    @Test(.timeLimit(.minutes(2)), arguments: corpusAnimations)
    func corpusAnimationOnDemandEqualsUpFront(_ path: String) throws {
        let data = try corpusData(path)
        let upFront = try Self.registry.decode(data, options: Self.options(budget: .max))
        // Stills and broken animations (shown as their default image) are not animations to play
        guard upFront.frames.count > 1 else { return }
        try Self.expectOnDemandMatchesUpFront(data, label: path)
        try Self.expectOnDemandMatchesUpFront(data, target: PixelSize(width: 24, height: 24), label: "\(path) fitted")
    }

    @Test func corpusAnimationsIncludeEachFormat() throws {
        // The parameterised test above must really exercise APNG, AVIF and JPEG XL animations
        var animated: Set<ImageFormat> = []
        for path in Self.corpusAnimations {
            let container = try Self.registry.decode(try corpusData(path), options: Self.options(budget: .max))
            if container.frames.count > 1 { animated.insert(container.format) }
        }
        #expect(animated == [.apng, .avif, .jpegXL])
    }

    // MARK: - Generated animations with key frames in the middle

    @Test(.timeLimit(.minutes(1))) func apngWithKeyFramesSeeksCorrectly() throws {
        let data = try Self.animatedPNG(width: 64, height: 48, frames: 30)
        try Self.expectOnDemandMatchesUpFront(
            data, seeks: [29, 0, 12, 11, 10, 9, 26, 3, 27, 15, 15, 5, 20], label: "APNG")
    }

    @Test(.timeLimit(.minutes(1))) func avifSequenceWithKeyFramesSeeksCorrectly() throws {
        let data = try Self.animatedAVIF(width: 64, height: 48, frames: 24, keyFrameInterval: 5)
        try Self.expectOnDemandMatchesUpFront(
            data, seeks: [23, 0, 12, 11, 10, 9, 20, 3, 22, 15, 15, 5, 19], label: "AVIF")
    }

    @Test(.timeLimit(.minutes(1))) func jpegXLAnimationSeeksCorrectly() throws {
        let data = try Self.animatedJPEGXL(width: 64, height: 48, frames: 20)
        try Self.expectOnDemandMatchesUpFront(
            data, seeks: [19, 0, 12, 11, 10, 9, 17, 3, 18, 15, 15, 5, 16], label: "JXL")
    }

    @Test(.timeLimit(.minutes(1))) func colourManagedAVIFSequenceConvertsEveryFrameOnDemand() throws {
        // An AVIF sequence tagged Display P3 (CICP 12/13): every on-demand frame goes through the colour stage
        let data = try Self.animatedAVIF(width: 48, height: 32, frames: 6, keyFrameInterval: 3, primaries: 12)
        let upFront = try Self.registry.decode(data, options: Self.options(budget: .max))
        #expect(upFront.sourceColorProfileDescription != nil)
        try Self.expectOnDemandMatchesUpFront(data, label: "AVIF P3")
    }

    // MARK: - Over the default budget

    /// 640×480 animations over the default 32 MiB budget: an APNG of 40 frames (49 MB decoded up front), an AVIF
    /// sequence of 30 with a key frame every 8 and a JPEG XL animation of 30 (37 MB each).
    @Test(.timeLimit(.minutes(2)), arguments: ["apng", "avif", "jxl"])
    func anAnimationOverTheDefaultBudgetPlaysOnDemandWithinIt(_ format: String) throws {
        let size = (width: 640, height: 480)
        let data =
            switch format {
            case "apng": try Self.animatedPNG(width: size.width, height: size.height, frames: 40)
            case "avif": try Self.animatedAVIF(width: size.width, height: size.height, frames: 30, keyFrameInterval: 8)
            default: try Self.animatedJPEGXL(width: size.width, height: size.height, frames: 30)
            }
        let defaults = DecodingOptions()
        let onDemand = try Self.registry.decode(data, options: defaults)
        let upFront = try Self.registry.decode(data, options: Self.options(budget: .max))
        let count = upFront.frames.count
        // Then with default options it is decoded on demand, and the memory cache charges less than the budget
        #expect(onDemand.frameSource != nil && onDemand.frameCount == count && count >= 30)
        #expect(upFront.cost > defaults.animationMemoryBudget)
        // When it is played in order and seeked
        for index in Array(0..<count) + [count - 1, 0, 25, 24, 7, count - 2, count - 2, 13] {
            #expect(try onDemand.frame(at: index).buffer == upFront.frames[index].buffer, "\(format) frame \(index)")
            #expect(onDemand.cost < defaults.animationMemoryBudget, "cost \(onDemand.cost) at frame \(index)")
        }
    }

    @Test func truncatedJPEGXLAnimationsBehaveAsBeforeUnderTheBudget() throws {
        // A truncated animation cannot be scanned: it is decoded up front, with the same outcome as before
        for name in [
            "truncated-gen-anim-4frames-loop2-at-60-percent.jxl", "truncated-gen-anim-4frames-loop2-at-20-percent.jxl",
        ] {
            let data = try corpusData("hostile-modern/\(name)")
            var partial = Self.options(budget: 1)
            partial.allowsPartialData = true
            var reference = partial
            reference.animationMemoryBudget = .max
            let a = try? Self.registry.decode(data, options: partial)
            let b = try? Self.registry.decode(data, options: reference)
            #expect(a?.frames.map(\.buffer) == b?.frames.map(\.buffer), "\(name)")
            #expect((try? Self.registry.decode(data, options: Self.options(budget: 1))) == nil, "\(name) strict")
        }
    }

    // MARK: - Makers

    /// Frame makers: Kodak photos scaled to a size, each frame one of them with a square of a shade depending
    /// on its index, and one transparent pixel unless opaque (so that PNG stores every frame as 8-bit RGBA).
    struct Pictures {
        private var photos: [PixelSize: [PixelBuffer]] = [:]

        mutating func picture(_ size: PixelSize, index: Int, opaque: Bool = false) throws -> PixelBuffer {
            if photos[size] == nil {
                photos[size] = try (1...4).map { n in
                    try PNGDecoder().decode(corpusData("kodak/0\(n).png"), options: DecodingOptions()).image
                        .convertedToRGBA().resampled(to: size)
                }
            }
            var photo =
                try photos[size]?[index % 4] ?? PixelBuffer(width: size.width, height: size.height, format: .rgba8)
            let side = max(4, min(size.width, size.height) / 4)
            let x0 = (index * 7) % max(1, size.width - side)
            let y0 = (index * 5) % max(1, size.height - side)
            photo.withUnsafeMutableBytes { bytes in
                for y in y0..<(y0 + side) {
                    for x in x0..<(x0 + side) {
                        let i = (y * size.width + x) * 4
                        bytes[i] = UInt8((index * 37) & 255)
                        bytes[i + 3] = opaque ? 255 : 160
                    }
                }
                if !opaque { bytes[3] = 0 }
            }
            return photo
        }
    }

    /// An APNG of `frames` frames: every fifth frame covers the canvas with blend op source (a key frame), the
    /// others are sub-regions blended over with dispose ops none, background and previous in turn.
    static func animatedPNG(width: Int, height: Int, frames: Int) throws -> Data {
        var out = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var sequence: UInt32 = 0
        func be32(_ v: Int) -> [UInt8] {
            [UInt8(v >> 24 & 255), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)]
        }
        func chunk(_ type: String, _ payload: [UInt8]) {
            let body = Array(type.utf8) + payload
            out.append(contentsOf: be32(payload.count) + body + be32(Int(CRC.crc32(body))))
        }
        var wroteHeader = false
        var pictures = Pictures()
        for index in 0..<frames {
            let isKey = index % 5 == 0
            let region =
                isKey
                ? (x: 0, y: 0, w: width, h: height)
                : (x: index % 3 * 4, y: index % 2 * 4, w: width / 2 + index % 4, h: height / 2 + index % 3)
            let pixels = try pictures.picture(PixelSize(width: region.w, height: region.h), index: index)
            let png = [UInt8](try PNGEncoder().encode(pixels, options: EncodingOptions()))
            let (ihdr, idat) = try Self.chunks(of: png)
            guard ihdr[8] == 8, ihdr[9] == 6 else { throw OnDemandAnimationTests.TestFailure("PNG not RGBA8") }
            if !wroteHeader {
                chunk("IHDR", be32(width) + be32(height) + Array(ihdr[8...]))
                chunk("acTL", be32(frames) + be32(0))
                wroteHeader = true
            }
            let dispose: UInt8 = isKey ? 0 : UInt8(index % 3)
            let blend: UInt8 = isKey ? 0 : 1
            chunk(
                "fcTL",
                be32(Int(sequence)) + be32(region.w) + be32(region.h) + be32(region.x) + be32(region.y)
                    + [0, UInt8(3 + index % 4), 0, 100, dispose, blend])
            sequence += 1
            if index == 0 {
                chunk("IDAT", idat)
            } else {
                chunk("fdAT", be32(Int(sequence)) + idat)
                sequence += 1
            }
        }
        chunk("IEND", [])
        return out
    }

    /// The `IHDR` payload and the concatenated `IDAT` payloads of a PNG.
    static func chunks(of png: [UInt8]) throws -> (ihdr: [UInt8], idat: [UInt8]) {
        var offset = 8
        var ihdr: [UInt8] = []
        var idat: [UInt8] = []
        while offset + 8 <= png.count {
            let length =
                Int(png[offset]) << 24 | Int(png[offset + 1]) << 16 | Int(png[offset + 2]) << 8 | Int(png[offset + 3])
            let type = String(decoding: png[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let payload = Array(png[(offset + 8)..<(offset + 8 + length)])
            if type == "IHDR" { ihdr = payload }
            if type == "IDAT" { idat += payload }
            offset += 12 + length
        }
        guard ihdr.count == 13, !idat.isEmpty else { throw OnDemandAnimationTests.TestFailure("PNG chunks") }
        return (ihdr, idat)
    }

    /// An AVIF sequence (8-bit 4:2:0, libaom at its fastest) with a key frame every `keyFrameInterval` frames,
    /// tagged with CICP `primaries` and the sRGB transfer.
    static func animatedAVIF(
        width: Int, height: Int, frames: Int, keyFrameInterval: Int, primaries: Int = 1
    ) throws -> Data {
        guard let encoder = avifEncoderCreate() else { throw OnDemandAnimationTests.TestFailure("encoder") }
        defer { avifEncoderDestroy(encoder) }
        encoder.pointee.speed = 10
        encoder.pointee.maxThreads = 1
        encoder.pointee.minQuantizer = 20
        encoder.pointee.maxQuantizer = 20
        encoder.pointee.timescale = 1000
        encoder.pointee.keyframeInterval = Int32(keyFrameInterval)
        var pictures = Pictures()
        for index in 0..<frames {
            let pixels = try pictures.picture(PixelSize(width: width, height: height), index: index, opaque: true)
            guard let image = avifImageCreate(UInt32(width), UInt32(height), 8, AVIF_PIXEL_FORMAT_YUV420) else {
                throw OnDemandAnimationTests.TestFailure("image")
            }
            defer { avifImageDestroy(image) }
            image.pointee.colorPrimaries = avifColorPrimaries(UInt16(primaries))
            image.pointee.transferCharacteristics = avifTransferCharacteristics(AVIF_TRANSFER_CHARACTERISTICS_SRGB)
            image.pointee.matrixCoefficients = avifMatrixCoefficients(AVIF_MATRIX_COEFFICIENTS_BT601)
            image.pointee.yuvRange = AVIF_RANGE_FULL
            var rgb = avifRGBImage()
            avifRGBImageSetDefaults(&rgb, image)
            rgb.format = AVIF_RGB_FORMAT_RGBA
            rgb.depth = 8
            rgb.ignoreAlpha = AVIF_TRUE
            let converted = pixels.withUnsafeBytes { bytes in
                rgb.pixels = UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self))
                rgb.rowBytes = UInt32(width * 4)
                return avifImageRGBToYUV(image, &rgb)
            }
            guard converted == AVIF_RESULT_OK,
                avifEncoderAddImage(encoder, image, UInt64(30 + index % 3 * 10), avifAddImageFlags(0)) == AVIF_RESULT_OK
            else { throw OnDemandAnimationTests.TestFailure("frame \(index)") }
        }
        var output = avifRWData(data: nil, size: 0)
        defer { avifRWDataFree(&output) }
        guard avifEncoderFinish(encoder, &output) == AVIF_RESULT_OK, let bytes = output.data else {
            throw OnDemandAnimationTests.TestFailure("finish")
        }
        return Data(bytes: bytes, count: output.size)
    }

    /// A lossless JPEG XL animation (libjxl at effort 1): full frames, each a different photo and square.
    static func animatedJPEGXL(width: Int, height: Int, frames: Int) throws -> Data {
        guard let encoder = JxlEncoderCreate(nil) else { throw OnDemandAnimationTests.TestFailure("encoder") }
        defer { JxlEncoderDestroy(encoder) }
        var info = JxlBasicInfo()
        JxlEncoderInitBasicInfo(&info)
        info.xsize = UInt32(width)
        info.ysize = UInt32(height)
        info.bits_per_sample = 8
        info.num_color_channels = 3
        info.alpha_bits = 8
        info.num_extra_channels = 1
        info.uses_original_profile = 1
        info.have_animation = 1
        info.animation.tps_numerator = 1000
        info.animation.tps_denominator = 1
        info.animation.num_loops = 3
        guard JxlEncoderSetBasicInfo(encoder, &info) == JXL_ENC_SUCCESS else {
            throw OnDemandAnimationTests.TestFailure("info")
        }
        var colour = JxlColorEncoding()
        JxlColorEncodingSetToSRGB(&colour, 0)
        guard JxlEncoderSetColorEncoding(encoder, &colour) == JXL_ENC_SUCCESS,
            let settings = JxlEncoderFrameSettingsCreate(encoder, nil)
        else { throw OnDemandAnimationTests.TestFailure("colour") }
        _ = JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, 1)
        _ = JxlEncoderSetFrameLossless(settings, 1)
        var format = JxlPixelFormat(num_channels: 4, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
        var pictures = Pictures()
        for index in 0..<frames {
            var header = JxlFrameHeader()
            JxlEncoderInitFrameHeader(&header)
            header.duration = UInt32(30 + index % 3 * 10)
            guard JxlEncoderSetFrameHeader(settings, &header) == JXL_ENC_SUCCESS else {
                throw OnDemandAnimationTests.TestFailure("header \(index)")
            }
            let pixels = try pictures.picture(PixelSize(width: width, height: height), index: index, opaque: true)
            let status = pixels.withUnsafeBytes { JxlEncoderAddImageFrame(settings, &format, $0.baseAddress, $0.count) }
            guard status == JXL_ENC_SUCCESS else { throw OnDemandAnimationTests.TestFailure("frame \(index)") }
        }
        JxlEncoderCloseInput(encoder)
        return try JPEGXLEncoder().drain(encoder)
    }
}

/// The PNG/zlib CRC-32, bit by bit (test data only).
enum CRC {
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            c ^= UInt32(byte)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return c ^ 0xFFFF_FFFF
    }
}
