import Foundation
import Imago

/// 1,000 concurrent requests for one nginx URL on a fresh pipeline (no disk cache): how many downloads and
/// decodes they cost (goal 1 and 1, from the pipeline's statistics), and their time against one request alone.
extension PeersBench {
    static func coalescing(_ env: PeerEnvironment) throws {
        let url = env.galleryURLs[0]
        let request = ChildMode.request(.url(url))
        let counts = Locked<(loads: Int, decodes: Int)>((0, 0))

        func round(_ count: Int) throws -> Double {
            let (pipeline, _) = try ChildMode.pipeline(directory: nil, memoryLimit: 64 << 20)
            let seconds = try PipelineBench.blocking {
                let t0 = now()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<count { group.addTask { _ = try await pipeline.image(for: request) } }
                    try await group.waitForAll()
                }
                return now() - t0
            }
            if count > 1 {
                let statistics = pipeline.statistics
                counts.withLock { $0 = (statistics.networkLoads, statistics.decodeCount) }
            }
            return seconds
        }

        try compare(
            "peers: coalescing 1,000 concurrent requests vs 1 (nginx)", unit: "s", goal: nil,
            peerName: "one request alone, fresh pipeline", rounds: 7,
            imago: { try round(1000) }, peer: { try round(1) })
        let (loads, decodes) = counts.withLock { $0 }
        record(
            "peers: coalescing 1,000 requests → downloads", unit: "count", goal: 1,
            peerName: "expected: 1", imago: Double(loads), peer: 1)
        record(
            "peers: coalescing 1,000 requests → decodes", unit: "count", goal: 1,
            peerName: "expected: 1", imago: Double(decodes), peer: 1)
    }
}
