import Foundation
import Imago

/// AVIF and HEIC (issue 17): decode against Pillow with its plugins (`pillow-avif-plugin`, `pillow-heif`) and
/// against the reference command-line decoders (`avifdec`, `heif-convert`), on a 12 MP photo and a 768×512 one
/// (`bench.sh` encodes them from formats/TestJFIF.jpg and kodak/01.png with avifenc/heif-enc); AVIF encoding at
/// speed 6 against `avifenc` with the same settings; and 256-px thumbnails of the 12 MP files: CPU and peak RSS.
///
/// CPU milliseconds per image, as in the decode facet, except that both sides count every thread of their
/// process: libheif runs libde265 on a worker thread even with one decoding thread, and the plugins' decoders
/// may use several. The command-line decoders are whole processes (start-up
/// included, a few ms) writing `.y4m`, which skips their YUV → RGB conversion: a generous baseline.
extension PeersBench {
    static func modern(_ env: PeerEnvironment) throws {
        let folder = env.data + "/modern"
        guard FileManager.default.fileExists(atPath: folder + "/photo12.avif") else {
            print("peers: modern skipped: \(folder) has no encoded files (make bench creates them)")
            return
        }
        let output = try freshTemporaryDirectory("modern")
        defer { try? FileManager.default.removeItem(at: output) }
        // IMAGO_BENCH_MODERN=heic,jpeg (say) runs only those formats' rows (default: all).
        let only = ProcessInfo.processInfo.environment["IMAGO_BENCH_MODERN"].map {
            Set($0.lowercased().split(separator: ",").map(String.init))
        }
        let wanted = { (format: String) in only?.contains(format.lowercased()) ?? true }
        for (label, file, n) in [("12 MP", "photo12", 2), ("768×512 Kodak", "kodak01", 10)] {
            if wanted("avif") {
                try modernDecode(
                    env, label: label, path: "\(folder)/\(file).avif", n: n, tool: "/usr/bin/avifdec",
                    arguments: { [$0, output.appendingPathComponent("out.y4m").path] }, decoder: AVIFDecoder())
            }
            if wanted("heic") {
                try modernDecode(
                    env, label: label, path: "\(folder)/\(file).heic", n: n, tool: "/usr/bin/heif-convert",
                    arguments: { [$0, output.appendingPathComponent("out.y4m").path] }, decoder: HEIFDecoder())
            }
        }
        if wanted("avif") { try avifEncode(env, folder: folder, output: output) }
        try modernThumbnails(env, folder: folder, wanted: wanted)
    }

    /// CPU milliseconds of this whole process per call of `body` (the bench runs nothing else meanwhile).
    private static func processMsPerOp(_ iterations: Int, _ body: () throws -> Void) rethrows -> Double {
        let t0 = ChildMode.processCPUTime()
        for _ in 0..<iterations { try body() }
        return (ChildMode.processCPUTime() - t0) * 1000 / Double(iterations)
    }

    private static func modernDecode(
        _ env: PeerEnvironment, label: String, path: String, n: Int, tool: String,
        arguments: (String) -> [String], decoder: some ImageDecoding
    ) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let format = decoder.formats.contains(.avif) ? "AVIF" : "HEIC"
        let imago = { try processMsPerOp(n) { _ = try decoder.decode(data, options: DecodingOptions()) } }
        // The photos carry the 12 MP JPEG's Display P3 profile: by default Imago converts to sRGB, which Pillow's
        // load() does not (it keeps the profile beside the stored pixels). Like for like: `.keep`.
        var keep = DecodingOptions()
        keep.colorPolicy = .keep
        try compare(
            "peers: \(format) \(label) decode, profile kept (as Pillow), vs Pillow", unit: "ms CPU", goal: 1.0,
            peerName: "Pillow Image.open().load() (\(format == "AVIF" ? "pillow-avif-plugin" : "pillow-heif"))",
            rounds: 5, imago: { try processMsPerOp(n) { _ = try decoder.decode(data, options: keep) } },
            peer: { try env.runPeer(["decode", path, "\(n)"]).figure("process_cpu_seconds") * 1000 })
        try compare(
            "peers: \(format) \(label) decode vs Pillow", unit: "ms CPU", goal: 1.0,
            peerName: "Pillow Image.open().load() (\(format == "AVIF" ? "pillow-avif-plugin" : "pillow-heif"))",
            rounds: 5, imago: imago,
            peer: { try env.runPeer(["decode", path, "\(n)"]).figure("process_cpu_seconds") * 1000 })
        try compare(
            "peers: \(format) \(label) decode vs \(URL(fileURLWithPath: tool).lastPathComponent)", unit: "ms CPU",
            goal: 1.0, peerName: "\(URL(fileURLWithPath: tool).lastPathComponent) to .y4m, per process", rounds: 5,
            imago: imago,
            peer: {
                let cpu0 = childrenCPUTime()
                for _ in 0..<n {
                    let (status, _) = try runProcess(tool, arguments(path))
                    guard status == 0 else { throw PeerProcessError.failed(command: tool, status: status) }
                }
                return (childrenCPUTime() - cpu0) * 1000 / Double(n)
            })
    }

    /// AVIFEncoder at speed 6, quantizer 24, one thread, against `avifenc -s 6 --min 24 --max 24 -j 1` on the
    /// same 768×512 photo (avifenc reads the PNG; its PNG decode is part of its figure, a few ms).
    private static func avifEncode(_ env: PeerEnvironment, folder: String, output: URL) throws {
        let png = env.corpus + "/kodak/01.png"
        let image = try PNGDecoder().decode(Data(contentsOf: URL(fileURLWithPath: png)), options: DecodingOptions())
            .image
        let quality = 1 - 24.0 / 63
        let n = 2
        try compare(
            "peers: AVIF encode 768×512 Kodak speed 6 q24 vs avifenc", unit: "ms CPU", goal: 1.05,
            peerName: "avifenc -s 6 --min 24 --max 24 -j 1, per process", rounds: 5,
            imago: {
                try processMsPerOp(n) {
                    _ = try AVIFEncoder(speed: 6).encode(image, options: EncodingOptions(quality: quality))
                }
            },
            peer: {
                let cpu0 = childrenCPUTime()
                for _ in 0..<n {
                    let (status, _) = try runProcess(
                        "/usr/bin/avifenc",
                        [
                            "-s", "6", "--min", "24", "--max", "24", "-j", "1", png,
                            output.appendingPathComponent("o.avif").path,
                        ])
                    guard status == 0 else { throw PeerProcessError.failed(command: "avifenc", status: status) }
                }
                return (childrenCPUTime() - cpu0) * 1000 / Double(n)
            })
    }

    /// 256-px thumbnails of the 12 MP AVIF and HEIC (decoded full size, then fitted: neither codec can scale)
    /// and of the JPEG they were encoded from (DCT-scaled): CPU per thumbnail against Pillow, and peak RSS above
    /// baseline in a fresh process (the pipeline, as the JPEG row of the memory facet).
    private static func modernThumbnails(_ env: PeerEnvironment, folder: String, wanted: (String) -> Bool) throws {
        let resize: ImageProcessors.Resize = .resize(width: 256, height: 256)
        // The JPEG row is the same photo, in the same run, as the baseline the issue compares with.
        for (format, decoder) in [
            ("AVIF", AVIFDecoder() as any ImageDecoding), ("HEIC", HEIFDecoder()), ("JPEG", JPEGDecoder()),
        ] where wanted(format) {
            let path =
                format == "JPEG" ? env.corpus + "/formats/TestJFIF.jpg" : "\(folder)/photo12.\(format.lowercased())"
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            try compare(
                "peers: \(format) 12 MP thumbnail 256 px vs Pillow thumbnail", unit: "ms CPU", goal: 1.0,
                peerName: "Pillow thumbnail(256²)", rounds: 5,
                imago: {
                    try processMsPerOp(2) {
                        let decoded = try decoder.decode(
                            data, options: DecodingOptions(targetSize: PixelSize(width: 256, height: 256)))
                        _ = try resize.process(decoded.image)
                    }
                },
                peer: { try env.runPeer(["thumbnail", path, "2"]).figure("process_cpu_seconds") * 1000 })
            func delta(_ figures: [String: Double]) throws -> [Double] {
                [(try figures.figure("peak_rss_kb") - figures.figure("baseline_rss_kb")) / 1024]
            }
            let medians = try interleave(
                rounds: 3,
                [
                    { try delta(env.runChild(["rss-thumbnail", path])) },
                    { try delta(env.runPeer(["rss-thumbnail", path])) },
                ])
            record(
                "peers: peak RSS above baseline, 12 MP \(format) → 256 px", unit: "MB", goal: nil, goalOnImago: true,
                peerName: "Pillow thumbnail, fresh process", imago: medians[0][0], peer: medians[1][0])
        }
        let withThumbnail = folder + "/photo12-thumb.heic"
        if wanted("heic"), FileManager.default.fileExists(atPath: withThumbnail) {
            try embeddedThumbnails(env, path: withThumbnail, resize: resize)
        }
    }

    /// The 12 MP HEIC with a 320 × 240 embedded thumbnail (as phones write them) to a 256-px thumbnail: with
    /// ``DecodingOptions/embeddedThumbnails`` at its default against the same decode with `.never`, and against
    /// Pillow's `thumbnail()` on the same file.
    private static func embeddedThumbnails(
        _ env: PeerEnvironment, path: String, resize: ImageProcessors.Resize
    ) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        func thumbnail(_ usesEmbedded: Bool) throws -> Double {
            var options = DecodingOptions(targetSize: PixelSize(width: 256, height: 256))
            options.embeddedThumbnails = usesEmbedded ? .whenLargeEnough : .never
            return try processMsPerOp(2) { _ = try resize.process(HEIFDecoder().decode(data, options: options).image) }
        }
        try compare(
            "peers: HEIC 12 MP with a 320-px embedded thumbnail → 256 px, embedded thumbnail vs the full image",
            unit: "ms CPU", goal: nil, peerName: "Imago, embeddedThumbnails = .never", rounds: 5,
            imago: { try thumbnail(true) }, peer: { try thumbnail(false) })
        try compare(
            "peers: HEIC 12 MP with a 320-px embedded thumbnail → 256 px vs Pillow thumbnail", unit: "ms CPU",
            goal: 1.0, peerName: "Pillow thumbnail(256²) (pillow-heif)", rounds: 5, imago: { try thumbnail(true) },
            peer: { try env.runPeer(["thumbnail", path, "2"]).figure("process_cpu_seconds") * 1000 })
    }
}
