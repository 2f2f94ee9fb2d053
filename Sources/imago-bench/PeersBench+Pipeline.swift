import CJPEGTurbo
import Foundation
import Imago

/// The whole pipeline over the 500 gallery URLs served by nginx: download, decode downsampled towards 256 px,
/// resize to fit 256, store in the disk and memory caches, 6 requests in flight.
///
/// - Cold (fresh cache folder each round, memory limit 64 MB): Imago (`--child cold`, a fresh process) against
///   bench/peer.py `cold` (goal ≤ 0.5), and against the floor: `curl --parallel --parallel-max 6` fetching the
///   same 500 files to /dev/null, plus TurboJPEG decoding them at the same DCT scale, CPU time divided over the
///   cores (goal ≤ 1.3). The same runs give both sides' peak RSS (goal ≤ 200 MB for Imago).
/// - Warm: the same 500 from the disk cache a cold round filled (a new process, memory empty), and from memory
///   (a second pass in the same process), against the peer's `warm-disk` and `warm-memory` (goal ≤ 0.3).
extension PeersBench {
    static func pipeline(_ env: PeerEnvironment) throws {
        let urls = env.galleryURLs
        let work = try freshTemporaryDirectory("pipeline")
        defer { try? FileManager.default.removeItem(at: work) }
        let urlsFile = work.appendingPathComponent("urls.txt").path
        try urls.map(\.absoluteString).joined(separator: "\n").write(toFile: urlsFile, atomically: true, encoding: .utf8)
        let floor = try Floor(env: env, work: work)

        // Each cold round leaves its cache folder for the warm rounds (the previous one is removed).
        var imagoDirectory: URL?
        var peerDirectory: URL?
        func coldFolder(_ previous: inout URL?, _ label: String) throws -> URL {
            if let previous { try? FileManager.default.removeItem(at: previous) }
            let folder = try freshTemporaryDirectory(label)
            previous = folder
            return folder
        }
        let cold = try interleave(
            rounds: 5,
            [
                {
                    let folder = try coldFolder(&imagoDirectory, "cold-imago")
                    let figures = try env.runChild(["cold", urlsFile, folder.path])
                    return [try figures.figure("seconds"), try figures.figure("peak_rss_kb") / 1024]
                },
                {
                    let folder = try coldFolder(&peerDirectory, "cold-peer")
                    let figures = try env.runPeer(["cold", urlsFile, folder.path])
                    return [try figures.figure("seconds"), try figures.figure("peak_rss_kb") / 1024]
                },
                { try floor.round() },
            ])
        defer {
            for folder in [imagoDirectory, peerDirectory].compactMap({ $0 }) {
                try? FileManager.default.removeItem(at: folder)
            }
        }
        record(
            "peers: cold pipeline 500 URLs vs Python peer", unit: "s", goal: 0.5,
            peerName: "peer.py cold: ThreadPoolExecutor(6), requests, Pillow draft, diskcache, LRU",
            imago: cold[0][0], peer: cold[1][0])
        record(
            "peers: cold pipeline 500 URLs vs floor (curl + TurboJPEG/cores)", unit: "s", goal: 1.3,
            peerName: "curl --parallel-max 6 + tjDecompress2 at the same scale ÷ \(Floor.cores) cores",
            imago: cold[0][0], peer: cold[2][0])
        print(
            String(
                format: "  floor parts (medians): curl %.3f s, TurboJPEG %.3f s CPU ÷ %d cores", cold[2][1], cold[2][2],
                Floor.cores))
        record(
            "peers: peak RSS, cold pipeline, 64 MB memory cache", unit: "MB", goal: 200, goalOnImago: true,
            peerName: "peer.py cold, fresh process", imago: cold[0][1], peer: cold[1][1])

        guard let imagoDirectory, let peerDirectory else { return }
        let warm = try interleave(
            rounds: 5,
            [
                { [try env.runChild(["warm-disk", urlsFile, imagoDirectory.path]).figure("seconds")] },
                { [try env.runPeer(["warm-disk", urlsFile, peerDirectory.path]).figure("seconds")] },
                { [try env.runChild(["warm-memory", urlsFile, imagoDirectory.path]).figure("seconds")] },
                { [try env.runPeer(["warm-memory", urlsFile, peerDirectory.path]).figure("seconds")] },
            ])
        record(
            "peers: warm pipeline 500 from disk (memory empty) vs Python", unit: "s", goal: 0.3,
            peerName: "peer.py warm-disk", imago: warm[0][0], peer: warm[1][0])
        record(
            "peers: warm pipeline 500 from memory vs Python", unit: "s", goal: 0.3,
            peerName: "peer.py warm-memory", imago: warm[2][0], peer: warm[3][0])
    }
}

/// The floor of the cold pipeline: the network part as fast as curl does it, plus the decode part as fast as
/// TurboJPEG does it at the DCT scale Imago's decoder picks for a 256-px target, spread perfectly over the cores.
private struct Floor {
    static let cores = ProcessInfo.processInfo.activeProcessorCount
    let curlConfig: String
    let files: [[UInt8]]
    let sizes: [PixelSize]

    init(env: PeerEnvironment, work: URL) throws {
        curlConfig = work.appendingPathComponent("curl.conf").path
        try env.galleryURLs.map { "url = \"\($0.absoluteString)\"\noutput = \"/dev/null\"\n" }.joined()
            .write(toFile: curlConfig, atomically: true, encoding: .utf8)
        let target = DecodingOptions(targetSize: PixelSize(width: 256, height: 256))
        var files: [[UInt8]] = []
        var sizes: [PixelSize] = []
        for i in 0..<500 {
            let data = try Data(contentsOf: URL(fileURLWithPath: env.gallery + String(format: "/jpeg/%03d.jpg", i)))
            files.append([UInt8](data))
            sizes.append(try JPEGDecoder().decode(data, options: target).image.size)
        }
        (self.files, self.sizes) = (files, sizes)
    }

    /// [floor seconds, curl wall seconds, TurboJPEG CPU seconds].
    func round() throws -> [Double] {
        let t0 = now()
        let (status, _) = try runProcess(
            "/usr/bin/curl", ["--silent", "--parallel", "--parallel-max", "6", "--config", curlConfig])
        let curl = now() - t0
        guard status == 0 else { throw PeerProcessError.failed(command: "curl --parallel", status: status) }
        let cpu0 = DecodeBench.threadCPUTime()
        for (file, size) in zip(files, sizes) { try decode(file, size) }
        let decode = DecodeBench.threadCPUTime() - cpu0
        return [curl + decode / Double(Self.cores), curl, decode]
    }

    /// tjDecompress2 to `size` (TurboJPEG picks the DCT scale that fits), into a fresh, unzeroed buffer as a
    /// decoder must.
    private func decode(_ file: [UInt8], _ size: PixelSize) throws {
        guard let handle = tjInitDecompress() else { throw PeerProcessError.failed(command: "tjInitDecompress", status: -1) }
        defer { tjDestroy(handle) }
        var status: Int32 = 0
        let output = [UInt8](unsafeUninitializedCapacity: size.width * size.height * 4) { out, count in
            status = tjDecompress2(
                handle, file, UInt(file.count), out.baseAddress, Int32(size.width), 0, Int32(size.height),
                TJPF_RGBA.rawValue, 0)
            count = out.count
        }
        guard status == 0, output.count > 0 else { throw PeerProcessError.failed(command: "tjDecompress2", status: status) }
    }
}
