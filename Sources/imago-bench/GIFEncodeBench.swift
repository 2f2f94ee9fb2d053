import Foundation
import Imago

/// `gif-encode`: writing GIF (GIFEncoder) against Pillow's GIF writer (bench/peer.py `encode-gif`: `Image.save`,
/// which quantizes each frame to an adaptive palette and writes the changed box of each frame), in CPU
/// milliseconds per file, side by side in one run. Both sides get the frames already decoded: Imago's RGBA
/// canvases, Pillow's images (RGB for a still photo, RGBA canvases for animations).
///
/// Files from the corpus: a Kodak photo (768×512, a dithered 256-colour still), the 380-frame GIF
/// `gifplayer-muybridge.gif` (472×298; every frame has at most 256 colours, kept exactly), and the animated
/// lossy WebP `random_lossy.webp` (99×87, 4 frames of random colours: dithered animation frames), and two small
/// GIFs as a proxy meets them (`moon_impact.gif`, 14 frames of 116×100; `sample_1.gif`, a 10×10 still).
enum GIFEncodeBench {
    static func run() throws {
        guard let env = PeerEnvironment.fromEnvironment() else { return }
        let files = [
            ("Kodak 23 768×512 still photo", env.corpus + "/kodak/23.png", 5),
            ("muybridge 472×298 380 frames (GIF)", env.corpus + "/gif/samples/gifplayer-muybridge.gif", 1),
            ("random_lossy animated WebP", env.corpus + "/webp/images/animated/random_lossy.webp", 5),
            ("moon_impact 116×100 14 frames (GIF)", env.corpus + "/gif/samples/moon_impact.gif", 20),
            ("sample_1 10×10 still (GIF)", env.corpus + "/gif/samples/sample_1.gif", 200),
        ]
        let decoders = ImageDecoderRegistry.makeDefault()
        // IMAGO_BENCH_GIF=TEXT runs only the files whose label contains TEXT (to profile one).
        let only = ProcessInfo.processInfo.environment["IMAGO_BENCH_GIF"]
        for (label, path, n) in files where only.map({ label.contains($0) }) ?? true {
            let decoded = try decoders.decode(Data(contentsOf: URL(fileURLWithPath: path)))
            // Every frame in memory, as Pillow's side holds them.
            let container = ImageContainer(
                frames: try (0..<decoded.frameCount).map { try decoded.frame(at: $0) }, format: decoded.format,
                loopCount: decoded.loopCount)
            let bytes = try GIFEncoder().encode(container, options: EncodingOptions()).count
            let peerBytes = try env.runPeer(["encode-gif", path, "1"]).figure("bytes")
            print("gif-encode: \(label): Imago \(bytes) bytes, Pillow \(Int(peerBytes)) bytes")
            try compare(
                "peers: GIF encode, \(label), vs Pillow", unit: "ms CPU", goal: 1.0,
                peerName: "Pillow Image.save(GIF)", rounds: 5,
                imago: {
                    try DecodeBench.msPerOp(n) { _ = try GIFEncoder().encode(container, options: EncodingOptions()) }
                },
                peer: { try env.runPeer(["encode-gif", path, "\(n)"]).figure("cpu_seconds") * 1000 })
        }
        try paletteRows(env, decoders: decoders, only: only)
    }

    /// Palette PNGs (`PNGEncoder(paletteColors:)`, imgproxy's `IMGPROXY_PNG_QUANTIZE`) against Pillow's
    /// `quantize()` then PNG save, on the same Kodak photo (the hard case for a palette), at 256 and 64 colours;
    /// with the lossless file's size for scale.
    static func paletteRows(_ env: PeerEnvironment, decoders: ImageDecoderRegistry, only: String?) throws {
        let path = env.corpus + "/kodak/23.png"
        let image = try decoders.decode(Data(contentsOf: URL(fileURLWithPath: path))).image
        let lossless = try PNGEncoder().encode(image, options: EncodingOptions()).count
        for colors in [256, 64] where only.map({ "png palette".contains($0) }) ?? true {
            let encoder = PNGEncoder(paletteColors: colors)
            let bytes = try encoder.encode(image, options: EncodingOptions()).count
            let peerBytes = try env.runPeer(["encode-png-palette", path, "1", "\(colors)"]).figure("bytes")
            print(
                "png-palette: Kodak 23, \(colors) colours: Imago \(bytes) bytes, Pillow \(Int(peerBytes)) bytes, lossless \(lossless) bytes"
            )
            try compare(
                "peers: PNG palette encode, Kodak 23 768×512, \(colors) colours, vs Pillow", unit: "ms CPU", goal: 1.0,
                peerName: "Pillow quantize() + save(PNG)", rounds: 5,
                imago: { try DecodeBench.msPerOp(5) { _ = try encoder.encode(image, options: EncodingOptions()) } },
                peer: { try env.runPeer(["encode-png-palette", path, "5", "\(colors)"]).figure("cpu_seconds") * 1000 })
        }
    }
}
