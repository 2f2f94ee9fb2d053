import Foundation
import Imago
import ImagoTesting

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
        try translucentPaletteRows(env, image: image.convertedToRGBA(), decoders: decoders, only: only)
    }

    /// Palette PNGs of an image with soft alpha (Kodak 23 as a feathered round cut-out,
    /// `ImagoTesting.featheredCutOut`) against pngquant (libimagequant, the reference for alpha) and Pillow
    /// (`quantize()`, its fast octree, the only method it has for RGBA), at 256 and 64 colours: CPU, bytes and
    /// each output's errors against the source (``PaletteErrors``).
    static func translucentPaletteRows(
        _ env: PeerEnvironment, image: PixelBuffer, decoders: ImageDecoderRegistry, only: String?
    ) throws {
        guard only.map({ "png palette alpha thumbnail".contains($0) }) ?? true else { return }
        // IMAGO_BENCH_GIF=thumbnail runs only the thumbnail's rows.
        if only != "thumbnail" {
            try translucentPaletteRows(env, cutOut: ImagoTesting.featheredCutOut(image), label: "", decoders: decoders)
        }
        // A thumbnail's size, where the encoder's fixed costs (its tables) show.
        let small = try image.resampled(to: PixelSize(width: 192, height: 128))
        try translucentPaletteRows(
            env, cutOut: ImagoTesting.featheredCutOut(small), label: " at 192×128", decoders: decoders)
    }

    /// The rows of ``translucentPaletteRows(_:image:decoders:only:)`` for one cut-out.
    static func translucentPaletteRows(
        _ env: PeerEnvironment, cutOut: PixelBuffer, label: String, decoders: ImageDecoderRegistry
    ) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-palette-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("cutout.png").path
        try PNGEncoder().encode(cutOut, options: EncodingOptions()).write(to: URL(fileURLWithPath: source))
        func errors(_ png: Data) throws -> PaletteErrors {
            PaletteErrors(source: cutOut, decoded: try decoders.decode(png).image.convertedToRGBA(), bytes: png.count)
        }
        for colors in [256, 64] {
            let encoder = PNGEncoder(paletteColors: colors)
            print(
                "png-palette-alpha\(label): \(colors) colours, Imago: \(try errors(encoder.encode(cutOut, options: EncodingOptions())))"
            )
            for tool in ["pngquant", "pillow"] {
                let output = folder.appendingPathComponent("\(tool)-\(colors).png").path
                _ = try env.runPeer(["encode-png-palette-rgba", source, "1", "\(colors)", tool, output])
                print(
                    "png-palette-alpha\(label): \(colors) colours, \(tool): \(try errors(Data(contentsOf: URL(fileURLWithPath: output))))"
                )
            }
            for (tool, name) in [("pngquant", "pngquant (CLI, defaults)"), ("pillow", "Pillow quantize() + save(PNG)")]
            {
                try compare(
                    "peers: PNG palette encode, Kodak 23 feathered cut-out (soft alpha)\(label), \(colors) colours, vs \(tool)",
                    unit: "ms CPU", goal: 1.0, peerName: name, rounds: 5,
                    imago: {
                        try DecodeBench.msPerOp(5) { _ = try encoder.encode(cutOut, options: EncodingOptions()) }
                    },
                    peer: {
                        try env.runPeer([
                            "encode-png-palette-rgba", source, "5", "\(colors)", tool,
                            folder.appendingPathComponent("timed.png").path,
                        ]).figure("cpu_seconds") * 1000
                    })
            }
        }
    }

    /// How far a palette PNG's pixels are from its source's: the mean alpha error of the pixels whose alpha is
    /// partial, the mean error of every channel as it shows (premultiplied), and how many opaque or fully
    /// transparent pixels changed their alpha.
    struct PaletteErrors: CustomStringConvertible {
        var bytes: Int
        var alphaError = 0.0
        var colourError = 0.0
        var alphaChanged = 0

        init(source: PixelBuffer, decoded: PixelBuffer, bytes: Int) {
            self.bytes = bytes
            var translucent = 0
            for y in 0..<source.height {
                for x in 0..<source.width {
                    let (was, now) = (source[pixel: x, y], decoded[pixel: x, y])
                    if was.a == 0 || was.a == 255 {
                        if now.a != was.a { alphaChanged += 1 }
                    } else {
                        translucent += 1
                        alphaError += abs(Double(now.a) - Double(was.a))
                    }
                    for (c, d) in [(was.r, now.r), (was.g, now.g), (was.b, now.b)] {
                        colourError += abs(Double(c) * Double(was.a) - Double(d) * Double(now.a)) / 255
                    }
                }
            }
            alphaError /= Double(max(1, translucent))
            colourError /= Double(3 * source.width * source.height)
        }

        var description: String {
            "\(bytes) bytes, alpha error \(String(format: "%.2f", alphaError)) (partial-alpha pixels), "
                + "colour error \(String(format: "%.2f", colourError)) (premultiplied), "
                + "\(alphaChanged) opaque/transparent pixels changed alpha"
        }
    }
}
