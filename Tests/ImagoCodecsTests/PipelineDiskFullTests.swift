import Foundation
import Imago
import ImagoCore
import ImagoTesting
import Testing

/// A full file system under the pipeline's disk cache: loads keep succeeding from the network and the memory
/// cache, the disk cache reports `diskFull`, and it stores again once space returns. (The DiskCache-level
/// ENOSPC behaviour is DiskCacheDiskFullTests.)
@Suite(.serialized, .timeLimit(.minutes(1))) struct PipelineDiskFullTests {
    @Test(.enabled(if: TmpfsMount.isAvailable, "needs root to mount a tmpfs"))
    func fullDiskKeepsThePipelineServingFromNetworkAndMemoryThenRecovers() async throws {
        // Given a pipeline whose disk cache sits on a 512 KB tmpfs filled up by another file
        let mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent("full-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: mountPoint) }
        try #require(TmpfsMount.mount(size: "512k", at: mountPoint))
        defer { TmpfsMount.unmount(mountPoint) }
        let errors = Locked<[DiskCache.Error]>([])
        var diskConfiguration = DiskCache.Configuration()
        diskConfiguration.onError = { error in errors.withLock { $0.append(error) } }
        let disk = try DiskCache(
            directory: mountPoint.appendingPathComponent("cache"), configuration: diskConfiguration)
        let filler = mountPoint.appendingPathComponent("filler")
        try #require(FileManager.default.createFile(atPath: filler.path, contents: nil))
        let handle = try FileHandle(forWritingTo: filler)
        let block = Data(count: 16_384)
        while (try? handle.write(contentsOf: block)) != nil {}
        try handle.close()

        let server = try LoopbackServer()
        defer { server.stop() }
        let png = try corpusData("formats/TestImage.png")
        for i in 0..<5 { server.setRoute("/\(i).png", .bytes(png, contentType: "image/png")) }
        var configuration = ImagePipeline.Configuration(dataLoader: HTTPDataLoader(), dataCache: disk)
        configuration.decoders = .makeDefault()
        let pipeline = ImagePipeline(configuration: configuration)

        // When five images load, twice
        for i in 0..<5 { _ = try await pipeline.image(for: server.url(for: "/\(i).png")) }
        #expect(await ImagoTesting.eventually { !errors.withLock { $0 }.isEmpty }, "the full disk was reported")
        for i in 0..<5 {
            let response = try await pipeline.response(for: ImageRequest(url: server.url(for: "/\(i).png")))
            #expect(response.source == .memory)
        }

        // Then every load succeeded from the network, the errors say diskFull, nothing went on disk
        #expect(pipeline.statistics.networkLoads == 5)
        #expect(errors.withLock { $0 }.allSatisfy { if case .diskFull = $0 { true } else { false } })
        #expect(disk.statistics.entryCount == 0)

        // And once space returns, the next image is stored
        try FileManager.default.removeItem(at: filler)
        server.setRoute("/after.png", .bytes(png, contentType: "image/png"))
        let after = server.url(for: "/after.png")
        _ = try await pipeline.image(for: after)
        #expect(await ImagoTesting.eventually { disk.containsData(for: after.absoluteString) })
    }
}
