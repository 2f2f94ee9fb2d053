import Foundation
import Imago
import ImagoTesting

/// `still-encode`: writing HEIC, TIFF, BMP and ICO (`HEICEncoder`, `TIFFEncoder`, `BMPEncoder`, `ICOEncoder`)
/// against Pillow's writers (bench/peer.py `encode-still`: `Image.save` as BMP, as TIFF with LZW through libtiff,
/// as ICO of one size, and as HEIF with pillow-heif at quality 80), in CPU milliseconds per file (all threads),
/// side by side in one run. Both sides get the Kodak 23 photo (768×512) decoded; ICO gets it fitted into 256 × 256.
enum StillEncodeBench {
    static func run() throws {
        guard let env = PeerEnvironment.fromEnvironment() else { return }
        let path = env.corpus + "/kodak/23.png"
        let photo = try ImageDecoderRegistry.makeDefault().decode(Data(contentsOf: URL(fileURLWithPath: path))).image
        let icon = try ImageProcessors.Resize(size: PixelSize(width: 256, height: 256), mode: .aspectFit).process(photo)
        let rows: [(name: String, peer: String, encoder: any ImageEncoding, image: PixelBuffer, n: Int)] = [
            ("HEIC q80", "heic", HEICEncoder(), photo, 5),
            ("TIFF LZW", "tiff", TIFFEncoder(), photo, 20),
            ("BMP", "bmp", BMPEncoder(), photo, 100),
            ("ICO 256×171", "ico", ICOEncoder(), icon, 50),
        ]
        let options = EncodingOptions(quality: 0.8)
        for row in rows {
            let bytes = try row.encoder.encode(row.image, options: options).count
            let peerBytes = try env.runPeer(["encode-still", row.peer, path, "1"]).figure("bytes")
            print("still-encode: \(row.name): Imago \(bytes) bytes, Pillow \(Int(peerBytes)) bytes")
            try compare(
                "peers: \(row.name) encode, Kodak 23, vs Pillow", unit: "ms CPU", goal: 1.0,
                peerName: "Pillow Image.save", rounds: 5,
                imago: { try processMsPerOp(row.n) { _ = try row.encoder.encode(row.image, options: options) } },
                peer: { try env.runPeer(["encode-still", row.peer, path, "\(row.n)"]).figure("cpu_seconds") * 1000 })
        }
    }

    /// Mean CPU milliseconds of the whole process (every thread: x265 encodes on its own) per call of `body`.
    static func processMsPerOp(_ n: Int, _ body: () throws -> Void) rethrows -> Double {
        let start = ChildMode.processCPUTime()
        for _ in 0..<n { try body() }
        return (ChildMode.processCPUTime() - start) * 1000 / Double(n)
    }
}
