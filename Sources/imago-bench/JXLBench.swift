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
            ("12 MP TestJFIF", env.data + "/jxl/photo-12mp-d1.jxl", 2),
            ("768×512 Kodak 01", env.data + "/jxl/kodim01-d1.jxl", 10),
        ]
        for (label, path, n) in files {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let size = try JPEGXLDecoder().decode(data, options: DecodingOptions()).image.size
            let name = "jxl: \(label) \(size) d1 decode"
            let decode = { (decoder: JPEGXLDecoder) in
                try processCPU(n) { _ = try decoder.decode(data, options: DecodingOptions()) }
            }
            // One round measures every side once, interleaved (a 12 MP decode takes seconds of wall time on the
            // shared machine, so the sides share rounds instead of running a comparison each).
            var figures: [String: [Double]] = [:]
            for round in 0..<4 {
                let pool = try decode(JPEGXLDecoder())
                let single = try decode(JPEGXLDecoder(maximumThreads: 1))
                let pillow = try env.runPeer(["decode", path, "\(n)"]).figure("process_cpu_seconds") * 1000
                let reference = try djxl(path, n)
                guard round > 0 else { continue }  // warm-up
                for (key, value) in [
                    ("cpu", pool.cpu), ("wall", pool.wall), ("single", single.cpu), ("pillow", pillow),
                    ("djxl", reference.cpu), ("djxl-wall", reference.wall),
                ] { figures[key, default: []].append(value) }
            }
            let m = figures.mapValues(median)
            for (suffix, imago, peer, peerName, goal, unit) in [
                ("vs Pillow", m["cpu"], m["pillow"], "Pillow + pillow-jxl-plugin", 1.0 as Double?, "ms CPU"),
                ("vs djxl", m["cpu"], m["djxl"], "djxl --num_reps=\(n), per decode", 1.0, "ms CPU"),
                ("vs djxl, wall", m["wall"], m["djxl-wall"], "djxl --num_reps=\(n), process wall / N", nil, "ms"),
                ("1 thread vs thread pool", m["single"], m["cpu"], "JPEGXLDecoder() (pool)", nil, "ms CPU"),
            ] {
                let (a, b) = (imago ?? .nan, peer ?? .nan)
                BenchReport.shared.add(
                    Comparison(
                        name: "\(name) \(suffix)", imago: a, peer: b, unit: unit, ratio: a / b, goal: goal,
                        met: goal.map { a / b <= $0 }, peerName: peerName))
            }
        }
    }

    /// Process CPU and wall milliseconds per call of `body` over `n` calls.
    private static func processCPU(_ n: Int, _ body: () throws -> Void) throws -> (cpu: Double, wall: Double) {
        let c0 = ChildMode.processCPUTime()
        let t0 = now()
        for _ in 0..<n { try body() }
        return ((ChildMode.processCPUTime() - c0) * 1000 / Double(n), (now() - t0) * 1000 / Double(n))
    }

    /// djxl decoding `path` `n` times in one process (no output file): CPU and wall milliseconds per decode.
    private static func djxl(_ path: String, _ n: Int) throws -> (cpu: Double, wall: Double) {
        let c0 = childrenCPUTime()
        let t0 = now()
        let (status, _) = try runProcess("/usr/bin/djxl", [path, "--num_reps=\(n)"])
        guard status == 0 else { throw PeerProcessError.failed(command: "djxl", status: status) }
        return ((childrenCPUTime() - c0) * 1000 / Double(n), (now() - t0) * 1000 / Double(n))
    }
}
