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
        try urls.map(\.absoluteString).joined(separator: "\n").write(
            toFile: urlsFile, atomically: true, encoding: .utf8)
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
        func figures(_ f: [String: Double]) throws -> [Double] {
            [try f.figure("seconds"), try f.figure("peak_rss_kb") / 1024, try f.figure("cpu_seconds")]
        }
        let cold = try interleave(
            rounds: 5,
            [
                { try figures(env.runChild(["cold", urlsFile, coldFolder(&imagoDirectory, "cold-imago").path])) },
                { try figures(env.runPeer(["cold", urlsFile, coldFolder(&peerDirectory, "cold-peer").path])) },
                { try floor.round() },
            ])
        defer {
            for folder in [imagoDirectory, peerDirectory].compactMap({ $0 }) {
                try? FileManager.default.removeItem(at: folder)
            }
        }
        let pythonPeer = "peer.py cold: ThreadPoolExecutor(6), requests, Pillow draft, diskcache, LRU"
        record(
            "peers: cold pipeline 500 URLs vs Python peer", unit: "s", goal: 0.5, peerName: pythonPeer,
            imago: cold[0][0], peer: cold[1][0])
        record(
            "peers: cold pipeline 500 URLs vs Python peer, CPU", unit: "s CPU", goal: 0.5, peerName: pythonPeer,
            imago: cold[0][2], peer: cold[1][2])
        record(
            "peers: cold pipeline 500 URLs vs floor (curl + TurboJPEG/cores)", unit: "s", goal: 1.3,
            peerName: "curl --parallel-max 6 wall + tjDecompress2 (same scale) CPU ÷ \(Floor.cores) cores",
            imago: cold[0][0], peer: cold[2][0])
        record(
            "peers: cold pipeline 500 URLs vs floor, CPU", unit: "s CPU", goal: 1.3,
            peerName: "curl process CPU + tjDecompress2 (same scale) CPU", imago: cold[0][2], peer: cold[2][3])
        print(
            String(
                format: "  floor parts (medians): curl %.3f s wall, %.3f s CPU; TurboJPEG %.3f s CPU", cold[2][1],
                cold[2][4], cold[2][2]))
        record(
            "peers: peak RSS, cold pipeline, 64 MB memory cache", unit: "MB", goal: 200, goalOnImago: true,
            peerName: "peer.py cold, fresh process", imago: cold[0][1], peer: cold[1][1])

        guard let imagoDirectory, let peerDirectory else { return }
        // Imago's own warm-start path: thumbnails stored encoded (`.storeEncodedImages`), filled once, untimed.
        let encodedDirectory = try freshTemporaryDirectory("cold-encoded")
        defer { try? FileManager.default.removeItem(at: encodedDirectory) }
        _ = try env.runChild(["cold-encoded", urlsFile, encodedDirectory.path])
        func warmFigures(_ f: [String: Double]) throws -> [Double] {
            [try f.figure("seconds"), try f.figure("cpu_seconds")]
        }
        let warm = try interleave(
            rounds: 5,
            [
                { try warmFigures(env.runChild(["warm-disk", urlsFile, imagoDirectory.path])) },
                { try warmFigures(env.runPeer(["warm-disk", urlsFile, peerDirectory.path])) },
                { try warmFigures(env.runChild(["warm-memory", urlsFile, imagoDirectory.path])) },
                { try warmFigures(env.runPeer(["warm-memory", urlsFile, peerDirectory.path])) },
                { try warmFigures(env.runChild(["warm-disk-encoded", urlsFile, encodedDirectory.path])) },
            ])
        record(
            "peers: warm pipeline 500 from disk (memory empty) vs Python", unit: "s", goal: 0.3,
            peerName: "peer.py warm-disk", imago: warm[0][0], peer: warm[1][0])
        record(
            "peers: warm pipeline 500 from disk vs Python, CPU", unit: "s CPU", goal: 0.3,
            peerName: "peer.py warm-disk", imago: warm[0][1], peer: warm[1][1])
        record(
            "peers: warm 500 from disk, .storeEncodedImages vs Python", unit: "s", goal: 0.3,
            peerName: "peer.py warm-disk (stores the downloads)", imago: warm[4][0], peer: warm[1][0])
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

    /// [floor seconds, curl wall seconds, TurboJPEG CPU seconds, floor CPU seconds, curl CPU seconds].
    func round() throws -> [Double] {
        let children0 = childrenCPUTime()
        let t0 = now()
        let (status, _) = try runProcess(
            "/usr/bin/curl",
            ["--silent", "--no-progress-meter", "--fail", "--parallel", "--parallel-max", "6", "--config", curlConfig])
        let curl = now() - t0
        guard status == 0 else { throw PeerProcessError.failed(command: "curl --parallel", status: status) }
        let curlCPU = childrenCPUTime() - children0
        let cpu0 = DecodeBench.threadCPUTime()
        for (file, size) in zip(files, sizes) { try decode(file, size) }
        let decode = DecodeBench.threadCPUTime() - cpu0
        return [curl + decode / Double(Self.cores), curl, decode, curlCPU + decode, curlCPU]
    }

    /// tjDecompress2 to `size` (TurboJPEG picks the DCT scale that fits), into a fresh, unzeroed buffer as a
    /// decoder must.
    private func decode(_ file: [UInt8], _ size: PixelSize) throws {
        guard let handle = tjInitDecompress() else {
            throw PeerProcessError.failed(command: "tjInitDecompress", status: -1)
        }
        defer { tjDestroy(handle) }
        var status: Int32 = 0
        let output = [UInt8](unsafeUninitializedCapacity: size.width * size.height * 4) { out, count in
            status = tjDecompress2(
                handle, file, UInt(file.count), out.baseAddress, Int32(size.width), 0, Int32(size.height),
                TJPF_RGBA.rawValue, 0)
            count = out.count
        }
        guard status == 0, output.count > 0 else {
            throw PeerProcessError.failed(command: "tjDecompress2", status: status)
        }
    }
}
