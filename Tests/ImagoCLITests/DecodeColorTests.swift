import Foundation
import Testing

@testable import ImagoCLI

/// `imago decode --color` and the `"colorProfile"` field.
@Suite struct DecodeColorTests {
    @Test func jsonNamesTheProfileAndColorSelectsThePolicy() async throws {
        // Given a Display P3 JPEG, a PNG with an sRGB chunk and a GIF (no colour information)
        let p3 = cliCorpus("icc/gen-kodim03-displayp3-v4.jpg").path
        let srgb = cliCorpus("kodak/03.png").path
        let plain = cliCorpus("formats/TestImage.gif").path
        let scratch = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        // When both are decoded with the default policy
        let run = await runCLI(["decode", "--json", p3, srgb, plain])
        // Then the P3 file names its profile, the sRGB one says sRGB and the GIF has null
        #expect(run.status == 0)
        let lines = run.jsonObjects
        #expect((lines.first { $0["file"] as? String == p3 }?["colorProfile"] as? String)?.contains("P3") == true)
        #expect(lines.first { $0["file"] as? String == srgb }?["colorProfile"] as? String == "sRGB")
        #expect(lines.first { $0["file"] as? String == plain }?["colorProfile"] is NSNull)

        // And --color keep leaves the pixels as stored, unlike the default
        var pixels: [String: Data] = [:]
        for policy in ["srgb", "keep", "ignore"] {
            let out = scratch.appendingPathComponent("\(policy).rgba").path
            let decoded = await runCLI(["decode", "--json", "--color", policy, "--rgba", out, p3])
            #expect(decoded.status == 0)
            pixels[policy] = try Data(contentsOf: URL(fileURLWithPath: out))
        }
        #expect(pixels["keep"] == pixels["ignore"])
        #expect(pixels["keep"] != pixels["srgb"])
        // And an unknown policy is a usage error
        #expect(await runCLI(["decode", "--color", "p3", p3]).status == 2)
    }
}
