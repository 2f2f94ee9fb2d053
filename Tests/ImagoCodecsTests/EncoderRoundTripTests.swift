import Foundation
import ImagoCodecs
import ImagoCore
import Testing

@Suite struct EncoderRoundTripTests {
    /// Kodak 01 (768x512) halved, to keep the test fast.
    func kodakPhoto() throws -> PixelBuffer {
        try PNGDecoder().decode(corpusData("kodak/01.png"), options: DecodingOptions()).image
            .resampled(to: PixelSize(width: 384, height: 256))
    }

    @Test func jpegAtQuality90DecodesCloseToTheOriginal() throws {
        // Given a photo
        let photo = try kodakPhoto()
        // When encoded as JPEG at quality 0.9 and decoded
        let data = try JPEGEncoder().encode(photo, options: EncodingOptions(quality: 0.9))
        let decoded = try JPEGDecoder().decode(data, options: DecodingOptions()).image
        // Then it is a JPEG of the same size within a small mean error, and much smaller than raw
        #expect(ImageFormat(sniffing: data) == .jpeg)
        #expect(decoded.size == photo.size)
        let mae = try #require(meanChannelError(decoded, photo))
        #expect(mae < 3, "mean absolute error \(mae)")
        #expect(data.count < photo.byteCount / 4)
    }

    @Test func jpegQualityChangesTheSize() throws {
        let photo = try kodakPhoto()
        let low = try JPEGEncoder().encode(photo, options: EncodingOptions(quality: 0.3))
        let high = try JPEGEncoder().encode(photo, options: EncodingOptions(quality: 0.95))
        #expect(low.count < high.count / 2)
    }

    @Test func progressiveJPEGHasTheBaselinesPixelsInSeveralScans() throws {
        /// The start-of-frame markers before the first scan (0xC0 baseline, 0xC2 progressive) and the scans.
        func frameMarkers(_ data: Data) -> (frames: [UInt8], scans: Int) {
            let bytes = [UInt8](data)
            var frames: [UInt8] = []
            var scans = 0
            var i = 2
            while i + 3 < bytes.count {
                guard bytes[i] == 0xFF else {
                    i += 1
                    continue
                }
                let marker = bytes[i + 1]
                if marker == 0xD9 { break }
                if [0xC0, 0xC1, 0xC2].contains(marker) { frames.append(marker) }
                if marker == 0xDA { scans += 1 }
                if marker == 0x00 || marker == 0xFF || (0xD0...0xD7).contains(marker) {
                    i += 2
                    continue
                }
                i += 2 + Int(bytes[i + 2]) << 8 + Int(bytes[i + 3])
            }
            return (frames, scans)
        }
        let photo = try kodakPhoto()
        let options = EncodingOptions(quality: 0.85)
        let baseline = try JPEGEncoder().encode(photo, options: options)
        let progressive = try JPEGEncoder(isProgressive: true).encode(photo, options: options)
        #expect(frameMarkers(baseline).frames == [0xC0] && frameMarkers(baseline).scans == 1)
        let layout = frameMarkers(progressive)
        #expect(layout.frames == [0xC2] && layout.scans > 1, "\(layout)")
        // The same coefficients: the same pixels decoded, in a smaller file (optimised Huffman tables)
        let decoded = try JPEGDecoder().decode(progressive, options: DecodingOptions()).image
        #expect(decoded == (try JPEGDecoder().decode(baseline, options: DecodingOptions()).image))
        #expect(progressive.count < baseline.count, "\(progressive.count) vs \(baseline.count)")
    }

    @Test func grayImagesEncodeAsGrayscaleJPEG() throws {
        // Given a gray8 image
        let gray = try PixelBuffer(
            width: 64, height: 48, format: .gray8, bytes: (0..<(64 * 48)).map { UInt8($0 % 64 * 4) })
        // When round-tripped through JPEG
        let decoded = try JPEGDecoder().decode(
            JPEGEncoder().encode(gray, options: EncodingOptions(quality: 0.95)), options: DecodingOptions()
        ).image
        // Then it comes back as gray8, close to the original
        #expect(decoded.format == .gray8)
        let mae = try #require(meanChannelError(decoded, gray))
        #expect(mae < 3, "mean absolute error \(mae)")
    }

    @Test(arguments: [false, true])
    func pngIsLossless(withTransparency: Bool) throws {
        // Given a photo, optionally with an alpha gradient
        var photo = try kodakPhoto()
        if withTransparency {
            photo = try TestImages.pattern(width: 97, height: 61) { x, _ in UInt8(x * 255 / 96) }
        }
        // When encoded as PNG and decoded
        let data = try PNGEncoder().encode(photo, options: EncodingOptions())
        let decoded = try PNGDecoder().decode(data, options: DecodingOptions()).image
        // Then every byte is the same
        #expect(ImageFormat(sniffing: data) == .png)
        #expect(decoded == photo)
    }

    @Test func pngKeepsGray8() throws {
        let gray = try PixelBuffer(
            width: 33, height: 17, format: .gray8, bytes: (0..<(33 * 17)).map { UInt8($0 % 251) })
        let decoded = try PNGDecoder().decode(
            PNGEncoder().encode(gray, options: EncodingOptions()), options: DecodingOptions()
        ).image
        #expect(decoded == gray)
    }

    @Test func encodersAreRegistered() throws {
        let registry = ImageEncoderRegistry(ImagoCodecs.encoders)
        let image = try TestImages.pattern(width: 8, height: 8)
        #expect(ImageFormat(sniffing: try registry.encode(image, as: .jpeg)) == .jpeg)
        #expect(ImageFormat(sniffing: try registry.encode(image, as: .png)) == .png)
    }
}
