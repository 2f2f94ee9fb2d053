import Foundation
import ImagoCore

/// The disk cache against Python's `diskcache.Cache` with its defaults (bench/peer.py `diskcache`): the same 100
/// sets and then 100 gets of 200 KB values under URL keys, into a fresh folder each round; wall µs per operation
/// on both sides (both wait for their own writes: diskcache's `set` is synchronous, so Imago's side uses
/// `storeSynchronously`).
extension PeersBench {
    static func diskCache(_ env: PeerEnvironment) throws {
        let count = 100
        let size = 200 * 1024
        let values = (0..<count).map { DiskCacheBench.payload(size, seed: $0) }
        let key = { (i: Int) in String(format: "https://images.example.com/photos/%08d.jpg", i) }
        let medians = try interleave(
            rounds: 7,
            [
                {
                    let folder = try freshTemporaryDirectory("diskcache-imago")
                    defer { try? FileManager.default.removeItem(at: folder) }
                    let cache = try DiskCache(directory: folder)
                    defer { cache.close() }
                    let set = try time { for i in 0..<count { try cache.storeSynchronously(values[i], for: key(i)) } }
                    var bytes = 0
                    let get = time { for i in 0..<count { bytes += cache.entry(for: key(i))?.data.count ?? 0 } }
                    guard bytes == count * size else { throw PeerProcessError.missingFigure("entries", in: [:]) }
                    return [set * 1e6 / Double(count), get * 1e6 / Double(count)]
                },
                {
                    let folder = try freshTemporaryDirectory("diskcache-peer")
                    defer { try? FileManager.default.removeItem(at: folder) }
                    let figures = try env.runPeer(["diskcache", folder.path, "\(count)", "\(size)"])
                    return [try figures.figure("set_seconds") * 1e6, try figures.figure("get_seconds") * 1e6]
                },
            ])
        record(
            "peers: disk cache set 200 KB vs Python diskcache", unit: "µs/op", goal: 0.5,
            peerName: "diskcache.Cache() defaults, set()", imago: medians[0][0], peer: medians[1][0])
        record(
            "peers: disk cache get 200 KB vs Python diskcache", unit: "µs/op", goal: 0.5,
            peerName: "diskcache.Cache() defaults, get()", imago: medians[0][1], peer: medians[1][1])
    }
}
