import Foundation
import ImagoTesting

#if canImport(Glibc)
    import Glibc
#endif

/// The environment `make bench` (scripts/bench.sh) sets up for the `peers` group, and the child processes it
/// runs: the Python peer (bench/peer.py), imago-bench itself in `--child` mode, vipsthumbnail and curl.
struct PeerEnvironment {
    /// nginx on 127.0.0.1 serving the gallery, e.g. `http://127.0.0.1:41234`.
    var baseURL: String
    /// The workload folder holding `gallery/{jpeg,png,webp}`.
    var data: String
    /// The virtualenv's python with Pillow, requests and diskcache.
    var python: String
    /// bench/peer.py.
    var peer: String
    /// ../shared/corpus.
    var corpus: String

    /// The variables from the environment, or nil (after printing which one is missing) when any is unset.
    static func fromEnvironment() -> PeerEnvironment? {
        let env = ProcessInfo.processInfo.environment
        let names = [
            "IMAGO_BENCH_BASE_URL", "IMAGO_BENCH_DATA", "IMAGO_BENCH_PYTHON", "IMAGO_BENCH_PEER", "IMAGO_CORPUS",
        ]
        let missing = names.filter { (env[$0] ?? "").isEmpty }
        guard missing.isEmpty else {
            print("peers: skipped, \(missing.joined(separator: ", ")) not set (run `make bench`, which sets them)")
            return nil
        }
        return PeerEnvironment(
            baseURL: env["IMAGO_BENCH_BASE_URL"]!, data: env["IMAGO_BENCH_DATA"]!, python: env["IMAGO_BENCH_PYTHON"]!,
            peer: env["IMAGO_BENCH_PEER"]!, corpus: env["IMAGO_CORPUS"]!)
    }

    var gallery: String { data + "/gallery" }

    /// The 500 gallery JPEG URLs served by nginx.
    var galleryURLs: [URL] { (0..<500).map { URL(string: baseURL + String(format: "/jpeg/%03d.jpg", $0))! } }

    /// One round of the Python peer: `peer.py MODE ARGS…`, its JSON line as numbers.
    func runPeer(_ arguments: [String]) throws -> [String: Double] {
        try runJSON(python, [peer] + arguments)
    }

    /// One round of Imago's side in a fresh process: `imago-bench --child MODE ARGS…`.
    func runChild(_ arguments: [String]) throws -> [String: Double] {
        try runJSON(selfExecutable(), ["--child"] + arguments)
    }
}

enum PeerProcessError: Error, CustomStringConvertible {
    case failed(command: String, status: Int32)
    case badOutput(command: String, output: String)
    case missingFigure(String, in: [String: Double])

    var description: String {
        switch self {
        case .failed(let command, let status): "\(command) exited with status \(status) (its stderr is above)"
        case .badOutput(let command, let output): "\(command) printed no JSON object on its last line: \(output)"
        case .missingFigure(let key, let figures): "the child's JSON has no \"\(key)\": \(figures)"
        }
    }
}

extension Dictionary where Key == String, Value == Double {
    /// The figure `key` of a child's JSON, or an error naming it.
    func figure(_ key: String) throws -> Double {
        guard let value = self[key] else { throw PeerProcessError.missingFigure(key, in: self) }
        return value
    }
}

/// This executable's path, for `--child` runs.
func selfExecutable() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}

/// Runs `executable` with `arguments` to completion (stderr passed through) and returns its exit status and stdout.
func runProcess(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let result = try ImagoTesting.run(executable, arguments)
    return (result.status, result.output)
}

/// Runs a child that prints one JSON object of numbers on its last line and returns it.
func runJSON(_ executable: String, _ arguments: [String]) throws -> [String: Double] {
    let command = ([executable] + arguments.prefix(2)).joined(separator: " ")
    let (status, output) = try runProcess(executable, arguments)
    guard status == 0 else { throw PeerProcessError.failed(command: command, status: status) }
    let last = output.split(separator: "\n").last.map(String.init) ?? ""
    guard let object = try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any] else {
        throw PeerProcessError.badOutput(command: command, output: output)
    }
    var figures: [String: Double] = [:]
    for (key, value) in object {
        if let number = value as? NSNumber { figures[key] = number.doubleValue }
    }
    return figures
}

/// CPU seconds (user + system) used by children this process has waited for.
func childrenCPUTime() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

/// This process's peak resident set so far, in KiB: `VmHWM` from /proc/self/status, the same figure the Python
/// peer reports. (`ru_maxrss` would not do: it keeps the parent's peak from before the fork.)
func peakRSSKiB() -> Double {
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kib = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Double($0) })
    {
        return kib
    }
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_maxrss)
}

/// A fresh, empty temporary folder.
func freshTemporaryDirectory(_ label: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
        "imago-bench-\(label)-\(getpid())-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
