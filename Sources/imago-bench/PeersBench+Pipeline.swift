import CJPEGTurbo
import Foundation
import Imago

/// The whole pipeline over the 500 gallery URLs served by nginx: download, decode downsampled towards 256 px,
/// resize to fit 256, store in the disk and memory caches, 6 requests in flight.
///
/// - Cold (fresh cache folder each round, memory limit 64 MB): Imago (`--child cold`, a fresh process) against
///   bench/peer.py `cold` (goal ≤ 0.5), and against the floor (issue 19's definition): `curl --parallel
///   --parallel-max 6` writing the same 500 files to disk, plus TurboJPEG decoding them at the DCT scale Imago's
///   decoder and Pillow's `draft()` pick (the smallest power-of-two scale covering the 256-px fit), CPU time
///   divided over the cores (goal ≤ 1.5). The same rounds also time the floor as it was first defined (curl to
///   /dev/null, TurboJPEG asked for the final size, which decodes at 1/4: below the target) and print it beside.
///   The same runs give both sides' peak RSS (goal ≤ 200 MB for Imago).
/// - Warm: the same 500 from the disk cache a cold round filled (a new process, memory empty), and from memory
///   (a second pass in the same process), against the peer's `warm-disk` and `warm-memory` (goal ≤ 0.3).
extension PeersBench {
    static func pipeline(_ env: PeerEnvironment) throws {
        let urls = env.galleryURLs
        let work = try freshTemporaryDirectory("pipeline")
        defer { try? FileManager.default.removeItem(at: work) }
        let rounds = ColdRoundFolders(work: work)
        let urlsFile = work.appendingPathComponent("urls.txt").path
        try urls.map(\.absoluteString).joined(separator: "\n").write(
            toFile: urlsFile, atomically: true, encoding: .utf8)
        let floor = try Floor(env: env, work: work, folders: rounds)

        // Each cold round leaves its cache folder for the warm rounds (the previous one is retired).
        var imagoDirectory: URL?
        var peerDirectory: URL?
        func coldFolder(_ previous: inout URL?, _ label: String) throws -> URL {
            let folder = try rounds.next(label, retiring: previous)
            previous = folder
            return folder
        }
        func figures(_ f: [String: Double]) throws -> [Double] {
            [try f.figure("seconds"), try f.figure("peak_rss_kb") / 1024, try f.figure("cpu_seconds")]
        }
        var cpuPerRound: [[Double]] = [[], []]
        let cold = try interleave(
            rounds: 5,
            [
                {
                    let f = try figures(
                        env.runChild(["cold", urlsFile, coldFolder(&imagoDirectory, "cold-imago").path]))
                    cpuPerRound[0].append(f[2])
                    return f
                },
                { try figures(env.runPeer(["cold", urlsFile, coldFolder(&peerDirectory, "cold-peer").path])) },
                {
                    let f = try floor.round()
                    cpuPerRound[1].append(f[3])
                    return f
                },
            ])
        let pythonPeer = "peer.py cold: ThreadPoolExecutor(6), requests, Pillow draft, diskcache, LRU"
        record(
            "peers: cold pipeline 500 URLs vs Python peer", unit: "s", goal: 0.5, peerName: pythonPeer,
            imago: cold[0][0], peer: cold[1][0])
        record(
            "peers: cold pipeline 500 URLs vs Python peer, CPU", unit: "s CPU", goal: 0.5, peerName: pythonPeer,
            imago: cold[0][2], peer: cold[1][2])
        record(
            "peers: cold pipeline 500 URLs vs floor (curl + TurboJPEG/cores)", unit: "s", goal: 1.5,
            peerName: "curl --parallel-max 6 to files, wall + tjDecompress2 (same scale) CPU ÷ \(Floor.cores) cores",
            imago: cold[0][0], peer: cold[2][0])
        record(
            "peers: cold pipeline 500 URLs vs floor, CPU", unit: "s CPU", goal: 1.5,
            peerName: "curl process CPU + tjDecompress2 (same scale) CPU", imago: cold[0][2], peer: cold[2][3])
        print(
            String(
                format: "  floor parts (medians): curl to files %.3f s wall, %.3f s CPU; TurboJPEG %.3f s CPU",
                cold[2][1], cold[2][4], cold[2][2]))
        // The warm-up round first, then the 5 timed ones.
        print(
            "  CPU s per round (warm-up first): Imago "
                + cpuPerRound[0].map { String(format: "%.3f", $0) }.joined(separator: " ") + "; floor "
                + cpuPerRound[1].map { String(format: "%.3f", $0) }.joined(separator: " "))
        print(
            String(
                format:
                    "  first floor (curl to /dev/null, TurboJPEG at 1/4), medians: %.3f s wall (ratio %.2f), %.3f s CPU"
                    + " (ratio %.2f)", cold[2][5], cold[0][0] / cold[2][5], cold[2][6], cold[0][2] / cold[2][6]))
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
private final class Floor {
    static let cores = ProcessInfo.processInfo.activeProcessorCount
    let curlConfig: String
    let nullConfig: String
    let urls: [URL]
    let folders: ColdRoundFolders
    /// This round's download folder (a new one each round, the previous one retired).
    var downloads: URL?
    let files: [[UInt8]]
    /// The size TurboJPEG decodes to: the DCT-scaled size Imago's decoder (and Pillow's draft) decodes at.
    let sizes: [PixelSize]
    /// The final (fitted) sizes, which the first floor asked TurboJPEG for (it then decodes at 1/4: 192 × 128).
    let finalSizes: [PixelSize]

    init(env: PeerEnvironment, work: URL, folders: ColdRoundFolders) throws {
        curlConfig = work.appendingPathComponent("curl.conf").path
        nullConfig = work.appendingPathComponent("curl-null.conf").path
        urls = env.galleryURLs
        self.folders = folders
        try env.galleryURLs.map { "url = \"\($0.absoluteString)\"\noutput = \"/dev/null\"\n" }.joined()
            .write(toFile: nullConfig, atomically: true, encoding: .utf8)
        let target = DecodingOptions(targetSize: PixelSize(width: 256, height: 256))
        var files: [[UInt8]] = []
        var sizes: [PixelSize] = []
        var finalSizes: [PixelSize] = []
        for i in 0..<500 {
            let data = try Data(contentsOf: URL(fileURLWithPath: env.gallery + String(format: "/jpeg/%03d.jpg", i)))
            files.append([UInt8](data))
            let image = try JPEGDecoder().decode(data, options: target)
            finalSizes.append(image.image.size)
            sizes.append(Self.coveringScale(of: image.originalSize, fitted: image.image.size))
        }
        (self.files, self.sizes, self.finalSizes) = (files, sizes, finalSizes)
    }

    /// The smallest power-of-two DCT scale (1/8, 1/4, 1/2, 1) of `full` that covers `fitted`, sized as TurboJPEG
    /// sizes it (rounded up): the scale Imago's decoder and Pillow's `draft()` choose.
    static func coveringScale(of full: PixelSize, fitted: PixelSize) -> PixelSize {
        for denominator in [8, 4, 2] {
            let size = PixelSize(
                width: (full.width + denominator - 1) / denominator,
                height: (full.height + denominator - 1) / denominator)
            if size.width >= fitted.width && size.height >= fitted.height { return size }
        }
        return full
    }

    /// [floor seconds, curl wall seconds, TurboJPEG CPU seconds, floor CPU seconds, curl CPU seconds,
    ///  first floor seconds, first floor CPU seconds].
    func round() throws -> [Double] {
        let downloads = try folders.next("floor-files", retiring: downloads)
        self.downloads = downloads
        try urls.enumerated().map { i, url in
            "url = \"\(url.absoluteString)\"\noutput = \"\(downloads.path)/\(String(format: "%03d.jpg", i))\"\n"
        }.joined().write(toFile: curlConfig, atomically: true, encoding: .utf8)
        let (curl, curlCPU) = try fetch(config: curlConfig)
        let cpu0 = DecodeBench.threadCPUTime()
        for (file, size) in zip(files, sizes) { try decode(file, size) }
        let decodeCPU = DecodeBench.threadCPUTime() - cpu0
        // The first floor, in the same round: curl to /dev/null, TurboJPEG asked for the final size.
        let (nullCurl, nullCurlCPU) = try fetch(config: nullConfig)
        let cpu1 = DecodeBench.threadCPUTime()
        for (file, size) in zip(files, finalSizes) { try decode(file, size) }
        let finalDecode = DecodeBench.threadCPUTime() - cpu1
        return [
            curl + decodeCPU / Double(Self.cores), curl, decodeCPU, curlCPU + decodeCPU, curlCPU,
            nullCurl + finalDecode / Double(Self.cores), nullCurlCPU + finalDecode,
        ]
    }

    /// `curl --parallel` over a config file: (wall seconds, the curl process's CPU seconds).
    private func fetch(config: String) throws -> (Double, Double) {
        let children0 = childrenCPUTime()
        let t0 = now()
        let (status, _) = try runProcess(
            "/usr/bin/curl",
            ["--silent", "--no-progress-meter", "--fail", "--parallel", "--parallel-max", "6", "--config", config])
        let wall = now() - t0
        guard status == 0 else { throw PeerProcessError.failed(command: "curl --parallel", status: status) }
        return (wall, childrenCPUTime() - children0)
    }

    /// tjDecompress2 to `size` (TurboJPEG picks the largest DCT scale that fits in it), into a fresh, unzeroed
    /// buffer as a decoder must.
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

/// The cold rounds' output folders (Imago's cache, the Python peer's cache, the floor's downloads), made so that
/// every side creates its 500 files in the same conditions.
///
/// On an ext4 file system without a journal (as on the bench machine), the inode allocator skips every inode of
/// the block group that was freed in the last 5 s, or 5 minutes while its inode-table block is not yet written
/// back (`recently_deleted` in fs/ext4/ialloc.c), re-checking each one for every file it creates. A folder made
/// in /tmp lands in /tmp's block group, where this bench and every other process deletes its temporary files: a
/// side's 500 creates then cost from nothing to about 0.7 s of kernel CPU, by chance. So:
/// - `work` is marked as a top of a directory hierarchy (`chattr +T`), which makes ext4 place each new folder in
///   it as it places a top-level one: in a little-used block group picked from its name (each folder gets a
///   new one);
/// - a finished round's folder is moved into `work/retired` rather than deleted, so the bench frees no inodes
///   until the end; `work` is removed with everything in it afterwards.
/// Nothing else changes: every side still creates and writes its 500 files on the same file system.
private final class ColdRoundFolders {
    let work: URL
    let retired: URL

    init(work: URL) {
        self.work = work
        retired = work.appendingPathComponent("retired")
        try? FileManager.default.createDirectory(at: retired, withIntermediateDirectories: true)
        // ext4's FS_TOPDIR_FL; on another file system chattr fails and the folders are placed as before.
        if (try? runProcess("/usr/bin/chattr", ["+T", work.path]).status) != 0 {
            print("  (chattr +T failed: the cold rounds' folders are placed by the file system's default)")
        }
    }

    /// A new, empty folder named after `label` in `work`; `previous` (if any) is moved into `retired`.
    func next(_ label: String, retiring previous: URL?) throws -> URL {
        if let previous {
            try FileManager.default.moveItem(
                at: previous, to: retired.appendingPathComponent(previous.lastPathComponent))
        }
        let folder = work.appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        return folder
    }
}
