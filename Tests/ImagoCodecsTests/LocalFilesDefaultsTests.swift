import Foundation
import Imago
import Testing

/// Issue 23 item 3: `withDefaults` loads local files from the directories the caller names, and never copies
/// them into the disk cache.
@Suite("withDefaults and local files")
struct LocalFilesDefaultsTests {
    @Test("Issue 23 item 3: withDefaults(localDirectories:) loads file URLs there only, never storing them on disk")
    func withDefaultsLoadsLocalFilesWithoutCopyingThem() async throws {
        // Given a PNG in an allowed directory, one outside it, and a pipeline with a disk cache
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("imago-local-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let assets = root.appendingPathComponent("assets")
        let elsewhere = root.appendingPathComponent("elsewhere")
        for directory in [assets, elsewhere] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let png = try corpusData("formats/TestImage.png")
        try png.write(to: assets.appendingPathComponent("a.png"))
        try png.write(to: elsewhere.appendingPathComponent("b.png"))
        let configuration = try ImagePipeline.Configuration.withDefaults(
            diskCacheDirectory: root.appendingPathComponent("cache"), localDirectories: [assets])
        let pipeline = ImagePipeline(configuration: configuration)

        // When both are requested
        let image = try await pipeline.image(for: assets.appendingPathComponent("a.png"))
        await #expect(throws: ImagePipeline.Error.self) {
            try await pipeline.image(for: elsewhere.appendingPathComponent("b.png"))
        }
        await pipeline.flushCaches()

        // Then the allowed one loaded and sits in memory only; the disk cache holds nothing
        #expect(image.image.width > 0)
        #expect(pipeline.cachedImage(for: ImageRequest(url: assets.appendingPathComponent("a.png"))) != nil)
        let disk = try #require(configuration.dataCache as? DiskCache)
        #expect(disk.statistics.entryCount == 0)
        disk.close()
    }
}
