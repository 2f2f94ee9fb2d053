import Foundation
import ImagoTesting
import Testing

@Suite("Gzip stream builder", .timeLimit(.minutes(1)))
struct GzipTests {
    /// Inflates `data` with the system's `gzip -dc`, which also checks the CRC and length trailer.
    private func gunzip(_ data: Data) throws -> Data {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("imago-\(UUID().uuidString).gz")
        try data.write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gzip")
        process.arguments = ["-dc", input.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let inflated = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return inflated
    }

    @Test(arguments: [0, 1, 65_535, 65_536, 200_001])
    func storedStreamInflatesToTheInput(count: Int) throws {
        let payload = patternData(count: count)

        let inflated = try gunzip(ImagoTesting.Gzip.stored(payload))

        #expect(inflated == payload)
    }

    @Test(arguments: [0, 1, 258, 259, 1_000_000])
    func zerosStreamInflatesToZerosAndIsSmall(count: Int) throws {
        let compressed = ImagoTesting.Gzip.zeros(count: count)

        let inflated = try gunzip(compressed)

        #expect(inflated == Data(count: count))
        #expect(compressed.count <= 20 + 2 + count / 150 + 260)
    }
}
