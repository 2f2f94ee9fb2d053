import Foundation
import ImagoCore  // not @testable: a plug-in sees only the public API
import ImagoTesting
import Testing

// A toy format a plug-in adds from outside ImagoCore: "TOYI", width and height (u16 little-endian), RGBA pixels.
extension ImageFormat {
    fileprivate static let toy = ImageFormat(rawValue: "toy")
}

private struct ToyDecoder: ImageDecoding {
    var formats: Set<ImageFormat> { [.toy] }

    func sniffFormat(in data: Data) -> ImageFormat? {
        data.starts(with: Array("TOYI".utf8)) ? .toy : nil
    }

    func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        let b = [UInt8](data)
        guard b.count >= 8 else { throw CodecError.truncated(format: .toy) }
        let width = Int(b[4]) | Int(b[5]) << 8
        let height = Int(b[6]) | Int(b[7]) << 8
        try options.checkDimensions(width: width, height: height, format: .toy)
        guard b.count >= 8 + width * height * 4 else { throw CodecError.truncated(format: .toy) }
        let pixels = try PixelBuffer(width: width, height: height, bytes: Array(b[8..<(8 + width * height * 4)]))
        return ImageContainer(image: pixels, format: .toy)
    }

    static func encode(width: Int, height: Int, color: RGBA) -> Data {
        var out =
            Array("TOYI".utf8) + [UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF), UInt8(height >> 8)]
        for _ in 0..<(width * height) { out += [color.r, color.g, color.b, color.a] }
        return Data(out)
    }
}

@Suite struct ImageFormatPluginTests {
    @Test func builtInSniffingDoesNotKnowThePluginFormat() {
        let data = ToyDecoder.encode(width: 2, height: 1, color: RGBA(r: 1, g: 2, b: 3))
        #expect(ImageFormat(sniffing: data) == .unknown)
        #expect(throws: CodecError.unsupportedFormat(.unknown)) { try ImageDecoderRegistry().decode(data) }
    }

    @Test func registeredSnifferLetsTheRegistryDecodeANewFormat() throws {
        // Given a registry with the toy decoder registered from outside the module
        let registry = ImageDecoderRegistry([MockImageDecoder(), ToyDecoder()])
        let data = ToyDecoder.encode(width: 3, height: 2, color: RGBA(r: 200, g: 100, b: 50, a: 255))
        // When
        let format = registry.format(of: data)
        let image = try registry.decode(data)
        // Then
        #expect(format == .toy)
        #expect(registry.supportedFormats.contains(.toy))
        #expect(image.format == .toy)
        #expect(image.image.size == PixelSize(width: 3, height: 2))
        #expect(image.image[pixel: 2, 1] == RGBA(r: 200, g: 100, b: 50, a: 255))
        // Formats the sniffer does not claim still go to the built-in sniffing
        #expect(registry.format(of: Data([0xFF, 0xD8, 0xFF, 0xE0])) == .jpeg)
    }

    @Test(.timeLimit(.minutes(1))) func pipelineDecodesThePluginFormat() async throws {
        let url = URL(string: "https://example.com/a.toy")!
        let loader = MockDataLoader()
        loader.setResponse(ToyDecoder.encode(width: 4, height: 4, color: RGBA(r: 9, g: 8, b: 7, a: 6)), for: url)
        var configuration = ImagePipeline.Configuration(dataLoader: loader)
        configuration.decoders = ImageDecoderRegistry([ToyDecoder()])
        configuration.imageCache = nil
        configuration.dataCache = nil
        let pipeline = ImagePipeline(configuration: configuration)

        let image = try await pipeline.image(for: url)

        #expect(image.format == .toy)
        #expect(image.image[pixel: 0, 3] == RGBA(r: 9, g: 8, b: 7, a: 6))
    }

    @Test func acceptHeaderListsTheRegisteredFormatsInPreferenceOrder() {
        let registry = ImageDecoderRegistry([MockImageDecoder(), ToyDecoder()])
        #expect(registry.acceptHeader == "image/toy,image/*;q=0.8")  // .unknown (the mock's) is not a type
        struct Formats: ImageDecoding {
            var formats: Set<ImageFormat>
            func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer { throw CodecError.empty }
        }
        registry.register(Formats(formats: [.png, .jpeg, .webp, .avif, .svg, .ico]))
        #expect(
            registry.acceptHeader
                == "image/avif,image/webp,image/png,image/jpeg,image/svg+xml,image/x-icon,image/toy,image/*;q=0.8")
        var loader = HTTPDataLoader.Configuration()
        loader.additionalHeaders["accept"] = "image/png"
        loader.acceptImages(decodableBy: registry)
        #expect(loader.additionalHeaders == ["accept": "image/png"])  // the caller's own header is kept
    }

    @Test func formatsKeepTheirNamesAndCodableForm() throws {
        #expect(ImageFormat.jpegXL.rawValue == "jxl")
        #expect(ImageFormat(rawValue: "jxl") == .jpegXL)
        #expect(ImageFormat.ico.description == "ico")
        #expect(ImageFormat.jpeg.fileExtension == "jpg")
        #expect(ImageFormat.toy.fileExtension == "toy")
        let json = try JSONEncoder().encode([ImageFormat.jpegXL, .toy])
        #expect(String(decoding: json, as: UTF8.self) == #"["jxl","toy"]"#)
        #expect(try JSONDecoder().decode([ImageFormat].self, from: json) == [.jpegXL, .toy])
    }
}
