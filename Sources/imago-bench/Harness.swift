import Foundation

/// One side-by-side comparison: Imago against a peer (or a baseline), interleaved A, B, A, B … after a warm-up,
/// reported as medians and the ratio imago / peer (lower is better for times).
struct Comparison: Codable {
    var name: String
    var imago: Double
    var peer: Double
    var unit: String
    var ratio: Double
    /// The goal for the ratio (met when ratio ≤ goal), or nil when the comparison is only reported.
    var goal: Double?
    var met: Bool?
    var peerName: String
    /// `"imago"` when the goal bounds Imago's own figure (peak RSS in MB …) rather than the ratio; nil: the ratio.
    var goalOn: String? = nil
    /// What else the reader needs to weigh the figures (the conditions they were measured under), or nil.
    var note: String? = nil
}

/// Collects comparisons, prints them as a table and writes `bench-results.json`.
final class BenchReport: @unchecked Sendable {  // used from the main task only
    static let shared = BenchReport()
    private(set) var results: [Comparison] = []

    func add(_ c: Comparison) {
        results.append(c)
        let goal = c.goal.map { String(format: c.goalOn == "imago" ? "imago≤%.3g" : "≤ %.3g", $0) } ?? "—"
        let met = c.met.map { $0 ? "yes" : "NO" } ?? "—"
        print(
            String(
                format: "%-58@ %12.4g %12.4g %-8@ %8.3f  %-8@ %-4@  (peer: %@)", c.name as NSString, c.imago, c.peer,
                c.unit as NSString, c.ratio, goal as NSString, met as NSString,
                (c.note.map { "\(c.peerName); \($0)" } ?? c.peerName) as NSString))
        fflush(nil)  // progress shows line by line also when stdout is a log file
    }

    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(results).write(to: URL(fileURLWithPath: path))
    }

    static func printHeader() {
        print(
            String(
                format: "%-58@ %12@ %12@ %-8@ %8@  %-8@ %-4@", "comparison" as NSString, "imago" as NSString,
                "peer" as NSString, "unit" as NSString, "ratio" as NSString, "goal" as NSString, "met" as NSString))
    }
}

/// Monotonic seconds.
@inline(__always) func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    guard !s.isEmpty else { return .nan }
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// Runs `imago` and `peer` alternately for `rounds` rounds after one warm-up of each; each closure returns the
/// measured figure for one round (seconds, ns/op, …, in `unit`). Records and prints the medians and ratio.
@discardableResult
func compare(
    _ name: String, unit: String, goal: Double?, peerName: String, rounds: Int = 7,
    imago: () throws -> Double, peer: () throws -> Double
) rethrows -> Comparison {
    _ = try imago()
    _ = try peer()
    var a: [Double] = []
    var b: [Double] = []
    for _ in 0..<rounds {
        a.append(try imago())
        b.append(try peer())
    }
    let ma = median(a)
    let mb = median(b)
    let ratio = ma / mb
    let c = Comparison(
        name: name, imago: ma, peer: mb, unit: unit, ratio: ratio, goal: goal, met: goal.map { ratio <= $0 },
        peerName: peerName)
    BenchReport.shared.add(c)
    return c
}

/// Times `body` once, in seconds.
func time(_ body: () throws -> Void) rethrows -> Double {
    let t0 = now()
    try body()
    return now() - t0
}

/// Nanoseconds per operation of `body` run `iterations` times.
func nsPerOp(_ iterations: Int, _ body: () -> Void) -> Double {
    let t0 = now()
    for _ in 0..<iterations { body() }
    return (now() - t0) * 1e9 / Double(iterations)
}
