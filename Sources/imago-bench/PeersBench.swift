import Foundation

/// `peers`: Imago against what a Linux user would otherwise pick, side by side in one run (issue 7): Pillow
/// and vipsthumbnail for decoding and thumbnails, Python's diskcache, a Python pipeline written the way a
/// competent user would (bench/peer.py), the floor of curl --parallel plus TurboJPEG, coalescing against nginx,
/// and peak RSS. Needs the environment `make bench` sets up (nginx, the virtualenv, the gallery); skipped with
/// a message otherwise.
///
/// Each theme is its own facet (`PeersBench+Decode.swift` …). `IMAGO_BENCH_PEERS=decode,diskcache,pipeline,
/// coalescing,memory` runs only those (all by default).
enum PeersBench {
    static func run() throws {
        guard let env = PeerEnvironment.fromEnvironment() else { return }
        let parts = ProcessInfo.processInfo.environment["IMAGO_BENCH_PEERS"].map {
            Set($0.split(separator: ",").map(String.init))
        }
        let themes: [(String, (PeerEnvironment) throws -> Void)] = [
            ("decode", decode), ("diskcache", diskCache), ("pipeline", pipeline), ("coalescing", coalescing),
            ("memory", memory),
            ("modern", modern),
        ]
        for (name, theme) in themes where parts?.contains(name) ?? true {
            do { try theme(env) } catch { print("peers: \(name) failed: \(error)") }
        }
    }
}
