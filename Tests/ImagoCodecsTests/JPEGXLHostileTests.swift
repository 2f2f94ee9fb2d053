import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// Every JPEG XL file in `../shared/corpus/hostile-modern`, per its `expectations.json`: crafted and empty files
/// fail with the expected typed error, truncated ones fail (partial data is not allowed by default), malformed
/// ones decode or fail; none crashes or hangs (peak RSS per file: scripts/hostile-rss.sh, RELIABILITY.md).
@Suite struct JPEGXLHostileTests {
    static let limit = DecodingOptions().pixelLimit
    /// What each crafted file must fail with.
    static let crafted: [String: CodecError] = [
        "empty.jxl": .empty,
        "jxl-size-100000x100000.jxl": .tooManyPixels(width: 100_000, height: 100_000, limit: limit),
        "jxl-size-1073741824x1073741824.jxl": .tooManyPixels(width: 1 << 30, height: 1 << 30, limit: limit),
        "jxl-container-size-1073741824x1073741824.jxl": .tooManyPixels(width: 1 << 30, height: 1 << 30, limit: limit),
    ]

    static func hostileFiles() throws -> [String] {
        try corpusFiles("hostile-modern", ext: "jxl").map(\.lastPathComponent)
    }

    @Test func everyHostileFileIsCovered() throws {
        let files = try Self.hostileFiles()
        let expectations =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: corpusURL("hostile-modern").appendingPathComponent("expectations.json")))
            as? [String: Any]
        #expect(Set(files) == Set(expectations?.keys.filter { $0.hasSuffix(".jxl") } ?? []))
        #expect(files.count == 20)
        #expect(Set(Self.crafted.keys).isSubset(of: files))
    }

    @Test(.timeLimit(.minutes(1)), arguments: try hostileFiles())
    func hostileFileFailsWithATypedError(_ name: String) throws {
        let data = try Data(contentsOf: corpusURL("hostile-modern").appendingPathComponent(name))
        let result = Result {
            try ImagoCodecs.decoders.first { $0.formats.contains(.jpegXL) }?.decode(data, options: DecodingOptions())
        }
        switch result {
        case .success(let container):
            // Only the real malformed file may decode (djxl 0.7 and Pillow decode it too)
            #expect(name.hasPrefix("malformed-"), "\(name) decoded to \(container?.image.size.description ?? "nil")")
        case .failure(let error):
            let codecError = error as? CodecError
            #expect(codecError != nil, "\(name): \(error)")
            if let expected = Self.crafted[name] { #expect(codecError == expected) }
            if name.hasPrefix("truncated-") {
                #expect(codecError == .truncated(format: .jpegXL), "\(name): \(error)")
            }
        }
    }
}
