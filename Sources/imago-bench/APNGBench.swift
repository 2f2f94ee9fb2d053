import Foundation
import Imago

/// `apng`: animated PNG decode (every frame composited) against Pillow's APNG reader (bench/peer.py `frames`:
/// `seek(i)` + `load()` for every frame, which composites too, and `convert("RGBA")` to keep each frame as
/// Imago does: Pillow reuses one image for all frames), in CPU milliseconds per file (Imago's thread CPU time
/// here, Pillow's `thread_time()` in the peer), side by side in one run.
///
/// Files: `kodak-8frames.png` (bench/make-apng.py: 8 Kodak photos 768×512 written by Pillow's APNG encoder),
/// the corpus' apngasm output (4 Kodak frames) and `formats/TestImageAnimated.apng` (320×240, 101 frames).
enum APNGBench {
    static func run() throws {
        guard let env = PeerEnvironment.fromEnvironment() else { return }
        let files = [
            ("8 Kodak frames 768×512 (Pillow encoder)", env.data + "/apng/kodak-8frames.png", 5),
            ("apngasm 4 Kodak frames", env.corpus + "/apng/gen-apngasm-kodak-4frames-loop2.png", 10),
            ("TestImageAnimated 320×240 101 frames", env.corpus + "/formats/TestImageAnimated.apng", 3),
        ]
        for (label, path, n) in files {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let frames = try APNGDecoder().decode(data, options: DecodingOptions()).frames.count
            try compare(
                "peers: APNG \(label) decode, all \(frames) frames, vs Pillow", unit: "ms CPU", goal: 1.0,
                peerName: "Pillow seek()+load()+convert(RGBA) every frame", rounds: 7,
                imago: {
                    try DecodeBench.msPerOp(n) { _ = try APNGDecoder().decode(data, options: DecodingOptions()) }
                },
                peer: { try env.runPeer(["frames", path, "\(n)"]).figure("cpu_seconds") * 1000 })
            // For reference: Pillow compositing into its one reused image and keeping no frame (less output).
            try compare(
                "peers: APNG \(label) decode vs Pillow without per-frame copies", unit: "ms CPU", goal: nil,
                peerName: "Pillow seek()+load() every frame, one reused image", rounds: 7,
                imago: {
                    try DecodeBench.msPerOp(n) { _ = try APNGDecoder().decode(data, options: DecodingOptions()) }
                },
                peer: { try env.runPeer(["frames-reused", path, "\(n)"]).figure("cpu_seconds") * 1000 })
        }
    }
}
