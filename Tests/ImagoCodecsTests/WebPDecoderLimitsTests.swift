import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// Hostile and broken WebP: limits hold before allocation, damage gives typed errors.
@Suite struct WebPDecoderLimitsTests {
    /// A RIFF container around one chunk.
    static func riff(_ fourCC: String, _ payload: [UInt8]) -> Data {
        var chunk = Data(fourCC.utf8)
        chunk.append(le32(payload.count))
        chunk.append(contentsOf: payload)
        if payload.count % 2 == 1 { chunk.append(0) }
        var data = Data("RIFF".utf8)
        data.append(le32(4 + chunk.count))
        data.append(Data("WEBP".utf8))
        data.append(chunk)
        return data
    }

    static func le32(_ v: Int) -> Data { Data((0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) }) }

    @Test func losslessHeaderWithHugeDimensionsFailsBeforeAllocating() throws {
        // Given a VP8L header declaring 16384x16384 (268 megapixels) and a few bytes of nothing
        let bits = UInt32(16383) | UInt32(16383) << 14  // width-1, height-1, no alpha, version 0
        let header: [UInt8] = [0x2F] + (0..<4).map { UInt8((bits >> (8 * $0)) & 0xFF) } + [0, 0, 0, 0, 0, 0]
        let data = Self.riff("VP8L", header)

        // Then the pixel limit stops it
        #expect(throws: CodecError.tooManyPixels(width: 16384, height: 16384, limit: 100_000_000)) {
            try WebPDecoder().decode(data, options: DecodingOptions())
        }
    }

    @Test func animationCanvasWithHugeDimensionsFailsBeforeAllocating() throws {
        // Given a VP8X header with the animation flag and a 60,000 x 60,000 canvas (libwebp itself rejects
        // canvases of 2^32 pixels or more, so stay below that to reach our own check)
        let w = 59_999
        let h = 59_999
        let vp8x: [UInt8] =
            [0x02, 0, 0, 0] + [UInt8(w & 0xFF), UInt8((w >> 8) & 0xFF), UInt8(w >> 16)]
            + [UInt8(h & 0xFF), UInt8((h >> 8) & 0xFF), UInt8(h >> 16)]
        var data = Self.riff("VP8X", vp8x)
        data.append(contentsOf: Array("ANIM".utf8) + [6, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        let riffSize = data.count - 8
        data.replaceSubrange(4..<8, with: Self.le32(riffSize))
        #expect(throws: CodecError.tooManyPixels(width: 60_000, height: 60_000, limit: 100_000_000)) {
            try WebPDecoder().decode(data, options: DecodingOptions())
        }
    }

    @Test func animationFrameAndByteLimitsAreCheckedFromTheHeader() throws {
        let data = try Data(
            contentsOf: corpusURL("webp/images/animated").appendingPathComponent("random_lossy.webp"))
        #expect(throws: CodecError.tooManyFrames(limit: 3)) {
            try WebPDecoder().decode(data, options: DecodingOptions(frameLimit: 3))
        }
        // 4 frames of 99x87x4 = 34,452 bytes need 137,808 bytes
        #expect(throws: CodecError.animationTooLarge(limit: 137_807)) {
            try WebPDecoder().decode(data, options: DecodingOptions(animationByteLimit: 137_807))
        }
        #expect(try WebPDecoder().decode(data, options: DecodingOptions(animationByteLimit: 137_808)).frames.count == 4)
    }

    @Test func animationWorkLimitCountsFramesTimesCanvasEvenWithASmallTarget() throws {
        // Given a 4-frame 99x87 animation (4 × 8,613 = 34,452 canvas pixels to composite) and a tiny target
        let data = try Data(
            contentsOf: corpusURL("webp/images/animated").appendingPathComponent("random_lossy.webp"))
        let target = PixelSize(width: 8, height: 8)

        // When the work limit is one pixel short, Then it is refused before any frame is decoded
        #expect(throws: CodecError.animationTooMuchWork(limit: 34_451)) {
            try WebPDecoder().decode(data, options: DecodingOptions(targetSize: target, animationWorkLimit: 34_451))
        }
        // and at the exact amount it decodes
        let image = try WebPDecoder().decode(
            data, options: DecodingOptions(targetSize: target, animationWorkLimit: 34_452))
        #expect(image.frames.count == 4)
    }

    @Test func stillImagesHonourThePixelLimit() throws {
        let data = try Data(contentsOf: corpusURL("webp/images/gallery1").appendingPathComponent("1.webp"))
        #expect(throws: CodecError.tooManyPixels(width: 550, height: 368, limit: 200_000)) {
            try WebPDecoder().decode(data, options: DecodingOptions(pixelLimit: 200_000))
        }
    }

    @Test func truncatedAndDamagedFilesThrowTypedErrors() throws {
        let data = try Data(
            contentsOf: corpusURL("webp/images/gallery2").appendingPathComponent("1_webp_a.webp"))
        #expect(throws: CodecError.empty) { try WebPDecoder().decode(Data(), options: DecodingOptions()) }
        #expect(throws: CodecError.truncated(format: .webp)) {
            try WebPDecoder().decode(Data(data.prefix(data.count / 2)), options: DecodingOptions())
        }
        #expect(throws: CodecError.self) {
            try WebPDecoder().decode(Data(data.prefix(20)), options: DecodingOptions())
        }
        var damaged = data
        for i in stride(from: 40, to: damaged.count, by: 7) { damaged[i] ^= 0x5A }
        do {
            _ = try WebPDecoder().decode(damaged, options: DecodingOptions())
        } catch is CodecError {}
    }

    @Test func everyTruncationOfTheAnimationsDecodesOrThrows() throws {
        for url in try corpusFiles("webp/images/animated", ext: "webp") {
            let data = try Data(contentsOf: url)
            for step in 1..<32 {
                do {
                    _ = try WebPDecoder().decode(Data(data.prefix(data.count * step / 32)), options: DecodingOptions())
                } catch is CodecError {}
            }
        }
    }
}
