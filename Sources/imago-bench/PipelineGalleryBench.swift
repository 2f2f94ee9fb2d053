import Dispatch
import Foundation
import Imago
import ImagoTesting

/// Throughput of the whole pipeline on a served gallery: 500 JPEGs made from the 24 Kodak photos (768×512, each
/// photo at several qualities so that every file differs), served on loopback, requested as 256-px thumbnails
/// (decoded downsampled, then resized). Cold (empty caches), disk-warm (a new pipeline over the filled disk
/// cache) and memory-warm (the same pipeline again).
enum PipelineGalleryBench {
    static let count = 500

    static func run() throws {
        let kodak = URL(fileURLWithPath: "../shared/corpus/kodak")
        let photos = try (1...24).map { i -> PixelBuffer in
            let data = try Data(contentsOf: kodak.appendingPathComponent(String(format: "%02d.png", i)))
            return try PNGDecoder().decode(data, options: DecodingOptions()).image
        }
        let server = try LoopbackServer()
        defer { server.stop() }
        var urls: [URL] = []
        var bytes = 0
        for i in 0..<count {
            let quality = 0.60 + Double(i / photos.count) * 0.015
            let data = try JPEGEncoder().encode(photos[i % photos.count], options: EncodingOptions(quality: quality))
            bytes += data.count
            server.setRoute("/g/\(i).jpg", .bytes(data, contentType: "image/jpeg"))
            urls.append(server.url(for: "/g/\(i).jpg"))
        }
        print("  gallery: \(count) JPEGs, \(bytes / 1024) KB in all")
        let requests = urls.map {
            ImageRequest(
                url: $0, processors: [.resize(width: 256, height: 256)],
                targetSize: PixelSize(width: 256, height: 256))
        }

        func makePipeline(_ disk: DiskCache) -> ImagePipeline {
            var configuration = ImagePipeline.Configuration(
                dataLoader: HTTPDataLoader(), imageCache: MemoryCache(), dataCache: disk)
            configuration.decoders = .makeDefault()
            configuration.encoders = .makeDefault()
            return ImagePipeline(configuration: configuration)
        }
        func loadAll(_ pipeline: ImagePipeline) throws -> Double {
            try PipelineBench.blocking {
                let t0 = now()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for request in requests { group.addTask { _ = try await pipeline.image(for: request) } }
                    try await group.waitForAll()
                }
                return now() - t0
            }
        }
        func temporaryDisk() throws -> (DiskCache, URL) {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imago-gallery-\(UUID())")
            return (try DiskCache(directory: dir), dir)
        }
        /// A cold run into a fresh disk cache; returns it filled (writes waited for and flushed).
        func cold() throws -> (seconds: Double, disk: DiskCache, dir: URL) {
            let (disk, dir) = try temporaryDisk()
            let pipeline = makePipeline(disk)
            let seconds = try loadAll(pipeline)
            try PipelineBench.blocking { await pipeline.waitForPendingCacheWrites() }
            disk.flush()
            return (seconds, disk, dir)
        }

        let warm = try cold()
        defer { try? FileManager.default.removeItem(at: warm.dir) }
        compare(
            "pipeline: 500 thumbnails from loopback, disk-warm vs cold", unit: "s", goal: nil,
            peerName: "cold: HTTP + decode + resize", rounds: 3,
            imago: { (try? loadAll(makePipeline(warm.disk))) ?? .nan },
            peer: {
                guard let run = try? cold() else { return .nan }
                try? FileManager.default.removeItem(at: run.dir)
                return run.seconds
            })
        let pipeline = makePipeline(warm.disk)
        _ = try loadAll(pipeline)
        compare(
            "pipeline: 500 thumbnails, memory-warm vs disk-warm", unit: "s", goal: nil,
            peerName: "disk-warm: read + decode + resize", rounds: 3,
            imago: { (try? loadAll(pipeline)) ?? .nan },
            peer: { (try? loadAll(makePipeline(warm.disk))) ?? .nan })
        let stats = pipeline.statistics
        print("  memory-warm pipeline: \(stats.memoryHits) memory hits, \(stats.networkLoads) network loads")
        warm.disk.close()
    }
}
