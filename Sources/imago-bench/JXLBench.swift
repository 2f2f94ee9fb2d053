import Foundation
import Imago

/// `decode-jxl`: JPEG XL decode of a 12 MP photo and a 768×512 Kodak photo (both cjxl 0.7 `-d 1` files made by
/// scripts/bench.sh under `$IMAGO_BENCH_DATA/jxl/`) against Pillow with pillow-jxl-plugin (bench/peer.py
/// `decode`) and against `djxl` (libjxl's own command-line decoder, `--num_reps`).
///
/// CPU milliseconds per image for the whole process (all threads: libjxl, djxl and the plugin decode on thread
/// pools, so the calling thread's time would undercount), djxl's by `RUSAGE_CHILDREN` over one process decoding
/// N times (start-up amortised). Wall milliseconds are reported beside them.
enum JXLBench {
    static func run() throws {
        guard let env = PeerEnvironment.fromEnvironment() else { return }
        let files = [
            ("12 MP TestJFIF", env.data + "/jxl/photo-12mp-d1.jxl", 3),
            ("768×512 Kodak 01", env.data + "/jxl/kodim01-d1.jxl", 10),
        ]
        for (label, path, n) in files {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let size = try JPEGXLDecoder().decode(data, options: DecodingOptions()).image.size
            let name = "jxl: \(label) \(size) d1 decode"
            let decode = { (decoder: JPEGXLDecoder) in
                try processCPU(n) { _ = try decoder.decode(data, options: DecodingOptions()) }
            }
            try compare(
                "\(name) vs Pillow", unit: "ms CPU", goal: 1.0, peerName: "Pillow + pillow-jxl-plugin", rounds: 5,
                imago: { try decode(JPEGXLDecoder()).cpu },
                peer: { try env.runPeer(["decode", path, "\(n)"]).figure("process_cpu_seconds") * 1000 })
            try compare(
                "\(name) vs djxl", unit: "ms CPU", goal: 1.0, peerName: "djxl --num_reps=\(n)", rounds: 5,
                imago: { try decode(JPEGXLDecoder()).cpu },
                peer: { try djxl(path, n).cpu })
            try compare(
                "\(name) vs djxl, wall", unit: "ms", goal: nil, peerName: "djxl --num_reps=\(n), process wall / N",
                rounds: 5,
                imago: { try decode(JPEGXLDecoder()).wall },
                peer: { try djxl(path, n).wall })
            try compare(
                "\(name), 1 thread vs thread pool", unit: "ms CPU", goal: nil,
                peerName: "JPEGXLDecoder() (pool)", rounds: 5,
                imago: { try decode(JPEGXLDecoder(maximumThreads: 1)).cpu },
                peer: { try decode(JPEGXLDecoder()).cpu })
        }
    }

    /// Process CPU and wall milliseconds per call of `body` over `n` calls.
    private static func processCPU(_ n: Int, _ body: () throws -> Void) throws -> (cpu: Double, wall: Double) {
        let c0 = processCPUTime()
        let t0 = now()
        for _ in 0..<n { try body() }
        return ((processCPUTime() - c0) * 1000 / Double(n), (now() - t0) * 1000 / Double(n))
    }

    /// djxl decoding `path` `n` times in one process (no output file): CPU and wall milliseconds per decode.
    private static func djxl(_ path: String, _ n: Int) throws -> (cpu: Double, wall: Double) {
        let c0 = childrenCPUTime()
        let t0 = now()
        let (status, _) = try runProcess("/usr/bin/djxl", [path, "--num_reps=\(n)"])
        guard status == 0 else { throw PeerProcessError.failed(command: "djxl", status: status) }
        return ((childrenCPUTime() - c0) * 1000 / Double(n), (now() - t0) * 1000 / Double(n))
    }

    private static func processCPUTime() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
