import Foundation
import Imago

/// Decoding and thumbnails against Pillow (bench/peer.py `decode`/`thumbnail`) and vipsthumbnail in batch mode.
///
/// All figures are CPU milliseconds per image (user + system): Imago's thread CPU time in this process, Pillow's
/// `time.thread_time()` in the peer (Pillow decodes on the calling thread), vipsthumbnail's whole-process CPU
/// time (`RUSAGE_CHILDREN`) over a batch of N files, divided by N. CPU time, because the machine is shared and
/// wall time there measures the neighbours.
extension PeersBench {
    static func decode(_ env: PeerEnvironment) throws {
        let jfif = env.corpus + "/formats/TestJFIF.jpg"  // 4032 × 3024, 12 MP
        let jfifData = try Data(contentsOf: URL(fileURLWithPath: jfif))
        let n = 4
        try compare(
            "peers: JPEG 12 MP TestJFIF.jpg full decode vs Pillow", unit: "ms CPU", goal: 1.0,
            peerName: "Pillow Image.open().load()", rounds: 7,
            imago: {
                try DecodeBench.msPerOp(n) { _ = try JPEGDecoder().decode(jfifData, options: DecodingOptions()) }
            },
            peer: { try env.runPeer(["decode", jfif, "\(n)"]).figure("cpu_seconds") * 1000 })

        let thumbnailN = 10
        let resize: ImageProcessors.Resize = .resize(width: 256, height: 256)
        let thumbnail = { (data: Data) throws -> Void in
            let decoded = try JPEGDecoder().decode(
                data, options: DecodingOptions(targetSize: PixelSize(width: 256, height: 256)))
            _ = try resize.process(decoded.image)
        }
        try compare(
            "peers: JPEG 12 MP thumbnail 256 px vs Pillow draft+thumbnail", unit: "ms CPU", goal: 1.0,
            peerName: "Pillow draft(\"RGB\", 256²) + thumbnail(256²)", rounds: 7,
            imago: { try DecodeBench.msPerOp(thumbnailN) { try thumbnail(jfifData) } },
            peer: { try env.runPeer(["thumbnail", jfif, "\(thumbnailN)"]).figure("cpu_seconds") * 1000 })

        // vipsthumbnail over N distinct paths (symlinks) to the same file, output in vips' own uncompressed
        // format so that no JPEG encode is charged to it.
        let batch = 20
        let folder = try freshTemporaryDirectory("vips")
        defer { try? FileManager.default.removeItem(at: folder) }
        var paths: [String] = []
        for i in 0..<batch {
            let path = folder.appendingPathComponent("in-\(i).jpg").path
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: jfif)
            paths.append(path)
        }
        let output = folder.appendingPathComponent("%s.v").path
        try compare(
            "peers: JPEG 12 MP thumbnail 256 px vs vipsthumbnail batch", unit: "ms CPU", goal: 0.7,
            peerName: "vipsthumbnail -s 256 over \(batch) files, per file", rounds: 7,
            imago: { try DecodeBench.msPerOp(thumbnailN) { try thumbnail(jfifData) } },
            peer: {
                let cpu0 = childrenCPUTime()
                let (status, _) = try runProcess("/usr/bin/vipsthumbnail", ["-s", "256", "-o", output] + paths)
                guard status == 0 else { throw PeerProcessError.failed(command: "vipsthumbnail", status: status) }
                return (childrenCPUTime() - cpu0) * 1000 / Double(batch)
            })

        let png = env.gallery + "/png/000.png"
        let pngData = try Data(contentsOf: URL(fileURLWithPath: png))
        try compare(
            "peers: PNG 768×512 Kodak decode vs Pillow", unit: "ms CPU", goal: 1.0,
            peerName: "Pillow Image.open().load()", rounds: 7,
            imago: { try DecodeBench.msPerOp(10) { _ = try PNGDecoder().decode(pngData, options: DecodingOptions()) } },
            peer: { try env.runPeer(["decode", png, "10"]).figure("cpu_seconds") * 1000 })

        let webp = env.gallery + "/webp/000.webp"
        let webpData = try Data(contentsOf: URL(fileURLWithPath: webp))
        try compare(
            "peers: WebP 768×512 Kodak q85 decode vs Pillow", unit: "ms CPU", goal: 1.0,
            peerName: "Pillow Image.open().load()", rounds: 7,
            imago: {
                try DecodeBench.msPerOp(10) { _ = try WebPDecoder().decode(webpData, options: DecodingOptions()) }
            },
            peer: { try env.runPeer(["decode", webp, "10"]).figure("cpu_seconds") * 1000 })
    }
}
