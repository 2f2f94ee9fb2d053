import CWebP
import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// WebP encode → decode: lossless is exact, lossy is close, gray is expanded.
@Suite struct WebPEncoderRoundTripTests {
    /// A photo-like RGBA test image with gradients, hard edges and an alpha ramp, including fully transparent
    /// pixels that still carry colour.
    static func sample(width: Int = 97, height: Int = 61) throws -> PixelBuffer {
        try PixelBuffer(width: width, height: height, format: .rgba8) { out in
            for y in 0..<height {
                for x in 0..<width {
                    let i = (y * width + x) * 4
                    out[i] = UInt8((x * 255) / (width - 1))
                    out[i + 1] = UInt8((y * 255) / (height - 1))
                    out[i + 2] = (x / 8 + y / 8) % 2 == 0 ? 40 : 220
                    out[i + 3] = x < 10 ? 0 : UInt8(min(255, 60 + x * 2))
                }
            }
        }
    }

    @Test func losslessRoundTripIsExactIncludingColourUnderTransparency() throws {
        let image = try Self.sample()
        let data = try WebPEncoder().encode(image, options: EncodingOptions(isLossless: true))
        #expect(data.withUnsafeBytes { ImageFormat.sniff($0) } == .webp)
        let decoded = try WebPDecoder().decode(data, options: DecodingOptions()).image
        #expect(decoded == image)
    }

    @Test func lossyRoundTripOfAPhotoIsClose() throws {
        // Given a Kodak photo (synthetic patterns are a poor test: libwebp crushes a pure-blue checkerboard)
        let photo = try decodeReferencePNG(corpusURL("kodak").appendingPathComponent("03.png"))

        // When encoded lossy at quality 0.9 and decoded
        let data = try WebPEncoder().encode(photo, options: EncodingOptions(quality: 0.9))
        let decoded = try WebPDecoder().decode(data, options: DecodingOptions()).image

        // Then it is much smaller than the pixels and close to them
        #expect(data.count < photo.byteCount / 10)
        #expect(decoded.size == photo.size)
        let error = meanAbsoluteError(decoded, photo)
        #expect(error.mean < 3, "mean \(error.mean)")
    }

    @Test func lossyKeepsAlpha() throws {
        let image = try Self.sample()
        let data = try WebPEncoder().encode(image, options: EncodingOptions(quality: 0.9))
        let decoded = try WebPDecoder().decode(data, options: DecodingOptions()).image
        // alpha is compressed losslessly by default
        #expect(decoded.bytes.enumerated().allSatisfy { $0.offset % 4 != 3 || $0.element == image.bytes[$0.offset] })
    }

    /// Lossy pictures are imported straight to YUV; the bytes must be those of libwebp's own conversion of an
    /// ARGB picture (what the encoder did before), for a photo and for odd sizes with transparent pixels.
    @Test(arguments: [false, true])
    func lossyBytesEqualAnEncodeThroughARGB(withAlpha: Bool) throws {
        let image =
            withAlpha
            ? try Self.sample()
            : try decodeReferencePNG(corpusURL("kodak").appendingPathComponent("03.png"))
        let data = try WebPEncoder().encode(image, options: EncodingOptions(quality: 0.8))
        #expect(data == (try Self.encodedThroughARGB(image, quality: 80)))
    }

    /// `image` (straight RGBA) encoded lossy at `quality` and method 4 from an ARGB picture, libwebp alone.
    static func encodedThroughARGB(_ image: PixelBuffer, quality: Float) throws -> Data {
        var config = WebPConfig()
        #expect(WebPConfigInit(&config) != 0)
        config.quality = quality
        config.method = 4
        var picture = WebPPicture()
        #expect(WebPPictureInit(&picture) != 0)
        defer { WebPPictureFree(&picture) }
        picture.use_argb = 1
        picture.width = Int32(image.width)
        picture.height = Int32(image.height)
        let imported = image.withUnsafeBytes {
            WebPPictureImportRGBA(
                &picture, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(image.bytesPerRow))
        }
        #expect(imported != 0)
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        return try withUnsafeMutablePointer(to: &writer) { pointer in
            picture.writer = WebPMemoryWrite
            picture.custom_ptr = UnsafeMutableRawPointer(pointer)
            #expect(WebPEncode(&config, &picture) != 0)
            let mem = try #require(pointer.pointee.mem)
            return Data(bytes: mem, count: pointer.pointee.size)
        }
    }

    @Test func lowerQualityGivesSmallerFiles() throws {
        let image = try Self.sample(width: 256, height: 256)
        let low = try WebPEncoder().encode(image, options: EncodingOptions(quality: 0.2))
        let high = try WebPEncoder().encode(image, options: EncodingOptions(quality: 0.95))
        #expect(low.count < high.count)
    }

    @Test func grayInputIsExpandedToOpaqueRGBA() throws {
        let gray = try PixelBuffer(width: 16, height: 8, format: .gray8) { out in
            for i in 0..<out.count { out[i] = UInt8(i * 2) }
        }
        let data = try WebPEncoder().encode(gray, options: EncodingOptions(isLossless: true))
        let decoded = try WebPDecoder().decode(data, options: DecodingOptions()).image
        #expect(decoded.format == .rgba8)
        #expect(decoded[pixel: 5, 3] == RGBA(r: 106, g: 106, b: 106, a: 255))
        #expect(decoded[pixel: 15, 7] == RGBA(r: 254, g: 254, b: 254, a: 255))
    }

    @Test func tooLargeImagesFailWithAReason() throws {
        let wide = try PixelBuffer(width: 16_384, height: 1, format: .gray8)
        #expect(throws: CodecError.self) { try WebPEncoder().encode(wide, options: EncodingOptions()) }
    }

    @Test func registryEncodesAndDecodesThroughImagoCodecs() throws {
        let encoders = ImageEncoderRegistry(ImagoCodecs.encoders)
        let data = try encoders.encode(try Self.sample(), as: .webp, options: EncodingOptions(isLossless: true))
        #expect(ImagoCodecs.decoders.contains { $0.formats.contains(.webp) })
        #expect(ImagoCodecs.decoders.contains { $0.formats.contains(.gif) })
        #expect(data.withUnsafeBytes { ImageFormat.sniff($0) } == .webp)
    }
}
