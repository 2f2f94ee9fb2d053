import CHEIF
import Foundation
import ImagoTesting
import Testing

@testable import ImagoCodecs
@testable import ImagoCore

/// HEICs written with libheif (x265) whose embedded thumbnail shows another colour than the primary image, so a
/// decode shows which of the two it read.
enum HEIFThumbnailFixture {
    /// A `width` × `height` primary image of `primary` with a thumbnail of `thumbnail` fitted in `thumbnailBox`
    /// pixels (libheif scales it), alpha on the primary only when `primaryAlpha`.
    static func make(
        width: Int, height: Int, primary: RGBA, thumbnailBox: Int, thumbnail: RGBA, primaryAlpha: Bool = false
    ) throws -> Data {
        let context = try #require(heif_context_alloc())
        defer { heif_context_free(context) }
        var encoder: OpaquePointer?
        try check(heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder))
        let hevc = try #require(encoder)
        defer { heif_encoder_release(hevc) }
        try check(heif_encoder_set_lossy_quality(hevc, 90))
        let image = try makeImage(width: width, height: height, colour: primary, alpha: primaryAlpha)
        defer { heif_image_release(image) }
        var handle: OpaquePointer?
        try check(heif_context_encode_image(context, image, hevc, nil, &handle))
        defer { heif_image_handle_release(handle) }
        let small = try makeImage(width: width, height: height, colour: thumbnail, alpha: false)
        defer { heif_image_release(small) }
        var thumbnailHandle: OpaquePointer?
        try check(
            heif_context_encode_thumbnail(context, small, handle, hevc, nil, Int32(thumbnailBox), &thumbnailHandle))
        heif_image_handle_release(thumbnailHandle)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("thumb-\(UUID().uuidString).heic")
        defer { try? FileManager.default.removeItem(at: file) }
        try check(heif_context_write_to_file(context, file.path))
        return try Data(contentsOf: file)
    }

    private static func makeImage(width: Int, height: Int, colour: RGBA, alpha: Bool) throws -> OpaquePointer {
        var image: OpaquePointer?
        let chroma = alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB
        try check(heif_image_create(Int32(width), Int32(height), heif_colorspace_RGB, chroma, &image))
        let created = try #require(image)
        try check(heif_image_add_plane(created, heif_channel_interleaved, Int32(width), Int32(height), 8))
        var stride: Int32 = 0
        let plane = try #require(heif_image_get_plane(created, heif_channel_interleaved, &stride))
        let channels = alpha ? 4 : 3
        for y in 0..<height {
            for x in 0..<width {
                let pixel = plane + y * Int(stride) + x * channels
                pixel[0] = colour.r
                pixel[1] = colour.g
                pixel[2] = colour.b
                if alpha { pixel[3] = x < width / 2 ? 0 : 255 }
            }
        }
        return created
    }

    private static func check(_ error: heif_error) throws {
        guard error.code == heif_error_Ok else {
            throw CodecError.encodingFailed(
                format: .heic, reason: error.message.map { String(cString: $0) } ?? "libheif error")
        }
    }
}

@Suite("HEIC: embedded thumbnails stand in for the image when they are large enough")
struct HEIFEmbeddedThumbnailTests {
    static let red = RGBA(r: 220, g: 30, b: 30)
    static let blue = RGBA(r: 30, g: 30, b: 220)

    static func isNear(_ pixel: RGBA, _ colour: RGBA) -> Bool {
        abs(Int(pixel.r) - Int(colour.r)) < 24 && abs(Int(pixel.g) - Int(colour.g)) < 24
            && abs(Int(pixel.b) - Int(colour.b)) < 24
    }

    func decode(
        _ data: Data, target: PixelSize?, mode: DecodingOptions.TargetMode = .fit,
        thumbnails: DecodingOptions.EmbeddedThumbnails = .whenLargeEnough
    ) throws -> ImageContainer {
        var options = DecodingOptions(targetSize: target)
        options.targetMode = mode
        options.embeddedThumbnails = thumbnails
        return try HEIFDecoder().decode(data, options: options)
    }

    @Test func theSmallestThumbnailThatCoversTheTargetIsDecodedInstead() throws {
        // A 256 × 128 red image whose 128 × 64 thumbnail is blue
        let file = try HEIFThumbnailFixture.make(
            width: 256, height: 128, primary: Self.red, thumbnailBox: 128, thumbnail: Self.blue)
        let small = try decode(file, target: PixelSize(width: 64, height: 64))
        #expect(small.image.size == PixelSize(width: 64, height: 32))
        #expect(small.originalSize == PixelSize(width: 256, height: 128), "the image's size, not the thumbnail's")
        #expect(Self.isNear(small.image[pixel: 32, 16], Self.blue), "\(small.image[pixel: 32, 16])")
        // Exactly the thumbnail's size still takes it
        #expect(Self.isNear(try decode(file, target: PixelSize(width: 128, height: 64)).image[pixel: 5, 5], Self.blue))
        // Larger than the thumbnail, cover mode past it, no target, or turned off: the image itself
        for (target, mode) in [
            (PixelSize(width: 200, height: 200), DecodingOptions.TargetMode.fit),
            (PixelSize(width: 100, height: 100), .cover),
        ] {
            let decoded = try decode(file, target: target, mode: mode)
            #expect(Self.isNear(decoded.image[pixel: 5, 5], Self.red), "\(target) \(mode)")
        }
        #expect(Self.isNear(try decode(file, target: nil).image[pixel: 5, 5], Self.red))
        let off = try decode(file, target: PixelSize(width: 64, height: 64), thumbnails: .never)
        #expect(off.image.size == PixelSize(width: 64, height: 32) && Self.isNear(off.image[pixel: 32, 16], Self.red))
    }

    @Test func alwaysTakesTheLargestThumbnailWhateverTheTarget() throws {
        let file = try HEIFThumbnailFixture.make(
            width: 256, height: 128, primary: Self.red, thumbnailBox: 128, thumbnail: Self.blue)
        // Larger than the thumbnail, or no target: the thumbnail, never enlarged
        for target in [PixelSize(width: 200, height: 200), nil] {
            let decoded = try decode(file, target: target, thumbnails: .always)
            #expect(decoded.image.size == PixelSize(width: 128, height: 64), "\(String(describing: target))")
            #expect(Self.isNear(decoded.image[pixel: 5, 5], Self.blue))
            #expect(decoded.originalSize == PixelSize(width: 256, height: 128))
        }
        // Smaller: the thumbnail, fitted
        let small = try decode(file, target: PixelSize(width: 32, height: 32), thumbnails: .always)
        #expect(
            small.image.size == PixelSize(width: 32, height: 16) && Self.isNear(small.image[pixel: 5, 5], Self.blue))
        // A file without thumbnails: the image
        let plain = try decode(try corpusData("heic/gen-kodim03-8bit-420.heic"), target: nil, thumbnails: .always)
        #expect(plain.image.size == plain.originalSize)
    }

    @Test func aThumbnailWithoutTheImagesAlphaIsNotUsed() throws {
        let file = try HEIFThumbnailFixture.make(
            width: 256, height: 128, primary: Self.red, thumbnailBox: 128, thumbnail: Self.blue, primaryAlpha: true)
        let decoded = try decode(file, target: PixelSize(width: 64, height: 64))
        #expect(decoded.image[pixel: 4, 16].a < 16 && decoded.image[pixel: 60, 16].a > 240)
        #expect(Self.isNear(decoded.image[pixel: 60, 16], Self.red))
    }

    @Test func theTargetsCacheKeysNameTheOptionOnlyWhenOff() {
        var options = DecodingOptions()
        #expect(!ImageCacheKey.Decoding(options).text.contains("thumbs"))
        options.embeddedThumbnails = .never
        #expect(ImageCacheKey.Decoding(options).text.hasSuffix(";thumbs=never"))
        options.embeddedThumbnails = .always
        #expect(ImageCacheKey.Decoding(options).text.hasSuffix(";thumbs=always"))
    }

    /// A real file (pillow_heif's, libheif-written): its 32 × 32 thumbnail stands in for the 64 × 64 image at
    /// 32 pixels, within the corpus tolerance of what downsampling the image gives.
    @Test func aCorpusThumbnailLooksLikeTheImage() throws {
        let data = try corpusData("heic/pillowheif-zPug_3.heic")
        let target = PixelSize(width: 32, height: 32)
        let fromThumbnail = try decode(data, target: target).image
        let fromImage = try decode(data, target: target, thumbnails: .never).image
        let mean = try #require(meanChannelError(fromThumbnail, fromImage))
        #expect(mean > 0 && mean < 12, "mean absolute difference \(mean)")
    }
}
