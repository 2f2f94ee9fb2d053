import Foundation
import Imago
import Testing

@testable import ImagoCore

/// Every way of making a pipeline in a program that links `Imago` decodes every format Imago ships (issue 22 §2).
@Suite("Default codecs of every pipeline made with Imago")
struct ImagoDefaultCodecsTests {
    /// One file per family of decoders: libjpeg-turbo, libpng, GIF, libwebp, libheif, libjxl.
    static let samples = [
        "formats/TestImage.jpg", "formats/TestImage.png", "formats/TestImage.gif", "formats/TestImageStatic.webp",
        "formats/TestImage.heic", "formats/TestHDR.jxl",
    ]

    /// The ways a user makes a pipeline, by name (`.shared` is `withDefaults` with a disk cache).
    static func pipelines() throws -> [(String, ImagePipeline)] {
        [
            ("ImagePipeline { … }", ImagePipeline { $0.imageCache = nil }),
            ("ImagePipeline(configuration: .init())", ImagePipeline(configuration: .init())),
            ("Configuration()", ImagePipeline(configuration: ImagePipeline.Configuration())),
            ("Configuration(dataLoader:)", ImagePipeline(configuration: .init(dataLoader: HTTPDataLoader()))),
            ("withDefaults()", ImagePipeline(configuration: try .withDefaults())),
        ]
    }

    @Test func providerIsFoundUnderItsMangledName() {
        #expect(_mangledTypeName(ImagoDefaultCodecs.self) == DefaultCodecs.providerTypeName)
        #expect(DefaultCodecs.provider == ImagoDefaultCodecs.self)
    }

    @Test func everyConfigurationRegistersEveryShippedCodec() throws {
        // Given every codec Imago ships
        let decodable = ImageDecoderRegistry(ImagoCodecs.decoders).supportedFormats
        // Then every configuration starts with all of them registered
        for (name, pipeline) in try Self.pipelines() {
            #expect(pipeline.configuration.decoders.supportedFormats == decodable, "\(name)")
            for encoder in ImagoCodecs.encoders {
                #expect(
                    pipeline.configuration.encoders.encoder(for: encoder.format) != nil, "\(name): \(encoder.format)")
            }
        }
    }

    @Test(.timeLimit(.minutes(1))) func everyPipelineDecodesEverySample() async throws {
        for (name, pipeline) in try Self.pipelines() {
            for sample in Self.samples {
                // When a pipeline made this way loads the sample
                let request = ImageRequest(source: .data(id: sample, try corpusData(sample)))
                let image = try await pipeline.image(for: request)
                // Then it decodes
                #expect(image.image.width > 0 && image.image.height > 0, "\(name): \(sample)")
            }
        }
    }
}
