import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// PngSuite: every valid file decodes to the reference pixels, every `x*` file fails with an error.
@Suite struct PngSuiteConformanceTests {
    let decoder = PNGDecoder()

    /// The reference for `name`: `NAME_to8.json` (16-bit files reduced to 8 bits, tolerance 1) when it exists,
    /// else `NAME.json`, whose values are 16-bit for the few 16-bit files without a `_to8` (scaled, tolerance 1),
    /// otherwise 8-bit and exact.
    func reference(for name: String) throws -> (pixels: [Int], tolerance: Int) {
        let folder = corpusURL("pngsuite/json")
        let to8 = folder.appendingPathComponent("\(name)_to8.json")
        if FileManager.default.fileExists(atPath: to8.path) {
            return (try JSONDecoder().decode([Int].self, from: Data(contentsOf: to8)), 1)
        }
        let values = try JSONDecoder().decode(
            [Int].self, from: Data(contentsOf: folder.appendingPathComponent("\(name).json")))
        if values.contains(where: { $0 > 255 }) {
            return (values.map { ($0 * 255 + 32767) / 65535 }, 1)
        }
        return (values, 0)
    }

    @Test func everyValidFileDecodesToTheReferencePixels() throws {
        // Given every PngSuite file whose name does not start with x
        let files = try corpusFiles("pngsuite/png", ext: "png").filter { !$0.lastPathComponent.hasPrefix("x") }
        #expect(files.count == 161)
        var failures: [String] = []
        for file in files {
            let name = file.deletingPathExtension().lastPathComponent
            // When it is decoded
            let image: PixelBuffer
            do {
                // The references are the stored sample values: colour management (gAMA) off.
                var options = DecodingOptions()
                options.colorPolicy = .ignore
                image = try decoder.decode(Data(contentsOf: file), options: options).image
            } catch {
                failures.append("\(name): threw \(error)")
                continue
            }
            // Then every channel of every pixel matches the reference within its tolerance
            let (expected, tolerance) = try reference(for: name)
            guard expected.count == image.width * image.height * 4 else {
                failures.append("\(name): \(image.width)x\(image.height) but \(expected.count / 4) reference pixels")
                continue
            }
            // Interlaced 16-bit files with alpha take PNGDecoder's 16-bit path (libpng bug #853 workaround), whose
            // premultiplied samples keep no colour under fully transparent pixels: only there is colour ignored.
            let name4 = Array(name)
            let hidesTransparentColour = name4[3] == "i" && name.hasSuffix("a16")
            var worst = 0
            var firstBad = ""
            for y in 0..<image.height {
                for x in 0..<image.width {
                    let p = image[pixel: x, y]
                    let i = (y * image.width + x) * 4
                    let got = [Int(p.r), Int(p.g), Int(p.b), Int(p.a)]
                    for c in 0..<4 {
                        if c < 3 && hidesTransparentColour && expected[i + 3] == 0 { continue }
                        let d = abs(got[c] - expected[i + c])
                        if d > worst {
                            worst = d
                            if d > tolerance && firstBad.isEmpty {
                                firstBad = "(\(x),\(y)) got \(got) want \(Array(expected[i..<i + 4]))"
                            }
                        }
                    }
                }
            }
            if worst > tolerance { failures.append("\(name): max difference \(worst), first at \(firstBad)") }
        }
        #expect(failures.isEmpty, "\(failures.count) files differ:\n\(failures.joined(separator: "\n"))")
    }

    @Test func everyCorruptFileFailsWithAnError() throws {
        // Given the 14 deliberately corrupt PngSuite files
        let files = try corpusFiles("pngsuite/png", ext: "png").filter { $0.lastPathComponent.hasPrefix("x") }
        #expect(files.count == 14)
        for file in files {
            // When decoded, then each throws a CodecError with a message
            #expect(throws: CodecError.self, "\(file.lastPathComponent)") {
                try decoder.decode(Data(contentsOf: file), options: DecodingOptions())
            }
        }
    }
}
