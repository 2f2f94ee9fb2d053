import Foundation
import Imago
import ImagoCodecs

/// `colour`: the cost of colour management (issue 18). A 12 MP Display P3 JPEG (the corpus 4032×3024 photo
/// re-encoded with the Display P3 profile of `icc/gen-kodim03-displayp3-v4.jpg`) decoded with conversion to sRGB
/// against the same decode with ``ColorPolicy/ignore``; the same pixels tagged with an sRGB profile against
/// untagged; and, when `IMAGO_BENCH_PYTHON`/`IMAGO_BENCH_PEER` are set (`make bench`), against Pillow's decode plus
/// `ImageCms.profileToProfile` to sRGB (bench/peer.py `decode-icc`).
enum ColourBench {
    static func run() throws {
        let photo = try JPEGDecoder().decode(DecodeBench.corpus("formats/TestJFIF.jpg"), options: ignoring).image
        var keep = DecodingOptions()
        keep.colorPolicy = .keep
        let p3 = try JPEGDecoder().decode(DecodeBench.corpus("icc/gen-kodim03-displayp3-v4.jpg"), options: keep)
        guard let p3Profile = p3.colorProfile, let sRGBData = ColorManagement.iccProfile(cicpPrimaries: 1, transfer: 13)
        else { throw BenchError("no Display P3 or sRGB profile") }
        let p3JPEG = try JPEGEncoder().encode(photo, options: EncodingOptions(quality: 0.9, colorProfile: p3Profile))
        let sRGBJPEG = try JPEGEncoder().encode(
            photo, options: EncodingOptions(quality: 0.9, colorProfile: ColorProfile(data: sRGBData)))
        let untagged = try JPEGEncoder().encode(photo, options: EncodingOptions(quality: 0.9))
        let converting = DecodingOptions()
        let iterations = 2

        try compare(
            "colour: JPEG 12 MP Display P3 decode, converted to sRGB vs ignored", unit: "ms CPU", goal: 1.15,
            peerName: "JPEGDecoder, colorPolicy .ignore", rounds: 9,
            imago: {
                try DecodeBench.msPerOp(iterations) { _ = try JPEGDecoder().decode(p3JPEG, options: converting) }
            },
            peer: { try DecodeBench.msPerOp(iterations) { _ = try JPEGDecoder().decode(p3JPEG, options: ignoring) } })
        // The same in wall time: the conversion runs on the decoding thread only (no helper threads), so wall and
        // CPU should agree on an idle machine; on a loaded one wall time also counts waiting for a core.
        compare(
            "colour: JPEG 12 MP Display P3 converted vs ignored (wall)", unit: "ms wall", goal: 1.15,
            peerName: "JPEGDecoder, colorPolicy .ignore", rounds: 9,
            imago: {
                1000 * time { for _ in 0..<iterations { _ = try? JPEGDecoder().decode(p3JPEG, options: converting) } }
                    / Double(iterations)
            },
            peer: {
                1000 * time { for _ in 0..<iterations { _ = try? JPEGDecoder().decode(p3JPEG, options: ignoring) } }
                    / Double(iterations)
            })
        try compare(
            "colour: JPEG 12 MP sRGB-tagged decode vs untagged", unit: "ms CPU", goal: 1.02,
            peerName: "JPEGDecoder, same pixels without a profile", rounds: 9,
            imago: {
                try DecodeBench.msPerOp(iterations) { _ = try JPEGDecoder().decode(sRGBJPEG, options: converting) }
            },
            peer: {
                try DecodeBench.msPerOp(iterations) { _ = try JPEGDecoder().decode(untagged, options: converting) }
            })

        let env = ProcessInfo.processInfo.environment
        guard let python = env["IMAGO_BENCH_PYTHON"], let peer = env["IMAGO_BENCH_PEER"], !python.isEmpty else {
            print("colour: Pillow row skipped, IMAGO_BENCH_PYTHON / IMAGO_BENCH_PEER not set (run `make bench`)")
            return
        }
        let folder = try freshTemporaryDirectory("colour")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("p3-12mp.jpg").path
        try p3JPEG.write(to: URL(fileURLWithPath: path))
        let n = 3
        try compare(
            "colour: JPEG 12 MP Display P3 decode + convert to sRGB vs Pillow + ImageCms", unit: "ms CPU", goal: 0.8,
            peerName: "Pillow Image.open().load() + ImageCms.profileToProfile(sRGB)", rounds: 7,
            imago: { try DecodeBench.msPerOp(n) { _ = try JPEGDecoder().decode(p3JPEG, options: converting) } },
            peer: {
                let (status, output) = try runProcess(python, [peer, "decode-icc", path, "\(n)"])
                guard status == 0, let line = output.split(separator: "\n").last,
                    let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let seconds = object["cpu_seconds"] as? Double
                else { throw PeerProcessError.failed(command: "peer.py decode-icc", status: status) }
                return seconds * 1000
            })
    }

    static var ignoring: DecodingOptions {
        var options = DecodingOptions()
        options.colorPolicy = .ignore
        return options
    }

    struct BenchError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
