import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// jpeg/reference: each file decodes close to its PNG (decoders differ slightly in IDCT and upsampling);
/// jpeg/malformed: each decodes or throws, never crashes or hangs.
@Suite struct JPEGConformanceTests {
    let jpeg = JPEGDecoder()
    let png = PNGDecoder()

    /// Reference files, as paths relative to jpeg/reference, minus those in disabled.list.
    func referenceFiles() throws -> [String] {
        let disabled = try String(contentsOf: corpusURL("jpeg/reference/disabled.list"), encoding: .utf8)
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        let top = try corpusFiles("jpeg/reference", ext: "jpg").map { $0.lastPathComponent }
        let mozilla = try corpusFiles("jpeg/reference/mozilla", ext: "jpg").map { "mozilla/\($0.lastPathComponent)" }
        return (top + mozilla).filter { !disabled.contains($0) }
    }

    @Test func everyReferenceFileDecodesCloseToItsPNG() throws {
        // Given the reference JPEGs that reference decoders agree on (33 of 37)
        let files = try referenceFiles()
        #expect(files.count == 33)
        var failures: [String] = []
        var worst = (name: "", mae: 0.0)
        for name in files {
            // When the JPEG and its PNG are decoded
            let decoded: PixelBuffer
            do {
                // The references of CMYK files without a profile are naive conversions (no colour management);
                // by default such files go through the standard CMYK profile (CMYKDefaultProfileTests).
                var options = DecodingOptions()
                if name.contains("cmyk") { options.colorPolicy = .ignore }
                decoded = try jpeg.decode(corpusData("jpeg/reference/\(name)"), options: options).image
            } catch {
                failures.append("\(name): threw \(error)")
                continue
            }
            let pngName = name.replacingOccurrences(of: ".jpg", with: ".png")
            let expected = try png.decode(corpusData("jpeg/reference/\(pngName)"), options: DecodingOptions()).image
            // Then the mean absolute error per channel is at most 2
            guard let mae = meanChannelError(decoded, expected) else {
                failures.append("\(name): \(decoded.size) but the reference is \(expected.size)")
                continue
            }
            if mae > worst.mae { worst = (name, mae) }
            if mae > 2 { failures.append("\(name): mean absolute error \(mae)") }
        }
        print(
            "jpeg/reference: \(files.count - failures.count)/\(files.count) within MAE 2; worst \(worst.name) \(worst.mae)"
        )
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test func grayscaleFilesDecodeToGray8AndColourFilesToRGBA8() throws {
        let gray = try jpeg.decode(corpusData("jpeg/reference/mozilla/jpg-gray.jpg"), options: DecodingOptions())
        let colour = try jpeg.decode(corpusData("jpeg/reference/rgb.jpg"), options: DecodingOptions())
        let cmyk = try jpeg.decode(corpusData("jpeg/reference/mozilla/jpg-cmyk-1.jpg"), options: DecodingOptions())
        #expect(gray.image.format == .gray8)
        #expect(colour.image.format == .rgba8)
        #expect(cmyk.image.format == .rgba8)
    }

    @Test func everyMalformedFileDecodesOrThrowsWithoutCrashing() throws {
        // Given the 111 malformed JPEGs (fuzzer finds, truncated and corrupt files, an empty file)
        let folder = corpusURL("jpeg/malformed")
        let files =
            try corpusFiles("jpeg/malformed", ext: "jpg") + corpusFiles("jpeg/malformed/imagetestsuite", ext: "jpg")
        #expect(files.count == 111)
        var decoded = 0
        var previews = 0
        var errors: [String: Int] = [:]
        for file in files {
            // When each is decoded, also as a thumbnail and with partial data allowed
            let data = try Data(contentsOf: file)
            for options in [
                DecodingOptions(), DecodingOptions(targetSize: PixelSize(width: 16, height: 16)),
                DecodingOptions(allowsPartialData: true),
            ] {
                do {
                    let container = try jpeg.decode(data, options: options)
                    // Then whatever decodes is a well-formed image
                    #expect(
                        container.image.byteCount == container.image.width * container.image.height
                            * container.image.format.bytesPerPixel)
                    if options.allowsPartialData {
                        decoded += 1
                        if container.isPreview { previews += 1 }
                    }
                } catch let error as CodecError {
                    // or a CodecError with a sentence
                    #expect(!error.description.isEmpty)
                    if options.allowsPartialData {
                        errors[String(describing: error).prefix(24).description, default: 0] += 1
                    }
                } catch {
                    Issue.record("\(file.lastPathComponent) threw a non-CodecError: \(error)")
                }
            }
        }
        print("jpeg/malformed in \(folder.path): \(decoded) decoded (\(previews) as previews), errors: \(errors)")
    }
}
