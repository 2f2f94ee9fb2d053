import Foundation
import ImagoCodecs
import ImagoCore
import ImagoTesting
import Testing

/// The `icc/` corpus: every file converted to sRGB matches its colour-managed reference, and decoded with
/// ``ColorPolicy/ignore`` matches its raw one (tolerances from `icc/README.md`).
@Suite struct ColorManagementCorpusTests {
    /// The corpus references were made with relative colorimetric intent and no black-point compensation.
    static func options(_ policy: ColorPolicy) -> DecodingOptions {
        var options = DecodingOptions()
        options.colorPolicy = policy
        options.renderingIntent = .relativeColorimetric
        options.usesBlackPointCompensation = false
        return options
    }

    static func decode(_ url: URL, policy: ColorPolicy) throws -> ImageContainer {
        try ImageDecoderRegistry(ImagoCodecs.decoders).decode(Data(contentsOf: url), options: options(policy))
    }

    @Test func everyFileConvertedMatchesTheColourManagedReference() throws {
        // Given every JPEG, PNG and WebP file of icc/
        let files = try ["jpg", "png", "webp"].flatMap { try corpusFiles("icc", ext: $0) }
        #expect(files.count == 20)
        var failures: [String] = []
        for file in files {
            // When it is decoded with conversion to sRGB
            let image = try Self.decode(file, policy: .convertToSRGB).image
            // Then it is within MAE 1.0 of reference/NAME.png
            let reference = try decodeReferencePNG(
                corpusURL("icc/reference").appendingPathComponent(file.lastPathComponent + ".png"))
            let error = referenceError(image, reference)
            if error > 1.0 { failures.append("\(file.lastPathComponent): MAE \(error)") }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test func everyFileIgnoredMatchesTheRawReference() throws {
        let files = try ["jpg", "png", "webp"].flatMap { try corpusFiles("icc", ext: $0) }
        var failures: [String] = []
        var compared = 0
        for file in files {
            let folder = corpusURL("icc/reference")
            let raw = folder.appendingPathComponent(file.lastPathComponent + ".raw.png")
            // CMYK files have no raw reference; sRGB files' raw values are their reference.
            let url =
                FileManager.default.fileExists(atPath: raw.path)
                ? raw : folder.appendingPathComponent(file.lastPathComponent + ".png")
            if file.lastPathComponent.contains("cmyk") || file.lastPathComponent.contains("CMYK") { continue }
            // When it is decoded ignoring its profile
            let image = try Self.decode(file, policy: .ignore).image
            // Then it matches the values as stored
            let tolerance = file.pathExtension == "png" ? 0.5 : 1.0
            let error = referenceError(image, try decodeReferencePNG(url))
            compared += 1
            if error > tolerance { failures.append("\(file.lastPathComponent): MAE \(error)") }
        }
        #expect(compared == 18)
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test func convertingReportsTheProfileDescription() throws {
        // Given a Display P3 JPEG
        let url = corpusURL("icc").appendingPathComponent("gen-kodim03-displayp3-v4.jpg")
        // When it is decoded with each policy
        let converted = try Self.decode(url, policy: .convertToSRGB)
        let kept = try Self.decode(url, policy: .keep)
        let ignored = try Self.decode(url, policy: .ignore)
        // Then the description is reported unless ignored, and only `keep` keeps the profile (and the pixels)
        #expect(converted.sourceColorProfileDescription?.contains("P3") == true)
        #expect(converted.colorProfile == nil)
        #expect(kept.colorProfile?.description?.contains("P3") == true)
        #expect(kept.image == ignored.image)
        #expect(kept.image != converted.image)
        #expect(ignored.sourceColorProfileDescription == nil)
    }

    /// A declaration that cannot be used is the container's `colorWarning`, for the program to show; decoders
    /// write nothing to standard error (a server's closed stderr made that write end the process).
    @Test func anUnusableDeclarationIsTheContainersWarning() throws {
        let cases: [(path: String, says: String?)] = [
            ("icc/pillow-icc-after-SOF.jpg", "ICC_PROFILE segments are out of sequence"),  // parsed from the markers
            ("jxl/reference/conformance-grayscale.jxl.raw.png", "does not match the image's colour space"),  // lcms2
            ("icc/reference/pillow-icc-after-SOF.jpg.png", "does not parse"),
            ("icc/gen-kodim03-displayp3-v4.jpg", nil),  // used
            ("kodak/01.png", nil),  // none declared
        ]
        for (path, says) in cases {
            let item = SharedCorpus.item(path)
            if let missing = item.missing { Issue.record(Comment(rawValue: missing)) }
            let warning = try Self.decode(item.url, policy: .convertToSRGB).colorWarning
            if let says {
                #expect(warning?.contains(says) == true, "\(path): \(String(describing: warning))")
            } else {
                #expect(warning == nil, "\(path): \(String(describing: warning))")
            }
            #expect(try Self.decode(item.url, policy: .ignore).colorWarning == nil, "ignore reads no declaration")
        }
    }
}
