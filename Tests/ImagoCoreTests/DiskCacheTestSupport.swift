import Foundation
import ImagoTesting
import Testing

@testable import ImagoCore

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory under the system temp dir; remove it with `removeTemporaryDirectory`.
func makeTemporaryDirectory(_ name: String = "cache") -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("imago-dc-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url.appendingPathComponent(name)
}

func removeTemporaryDirectory(_ url: URL) {
    try? FileManager.default.removeItem(at: url.deletingLastPathComponent())
}

/// A clock tests move by hand.
final class DiskTestClock: Sendable {
    let now = Locked<Double>(800_000_000)
    func advance(by seconds: Double) { now.withLock { $0 += seconds } }
    var function: @Sendable () -> Double { { [now] in now.value } }
}

/// Collects what a cache reports through its hooks.
final class HookRecorder: Sendable {
    let errors = Locked<[DiskCache.Error]>([])
    let logs = Locked<[String]>([])

    func install(in configuration: inout DiskCache.Configuration) {
        configuration.onError = { [errors] error in errors.withLock { $0.append(error) } }
        configuration.log = { [logs] line in logs.withLock { $0.append(line) } }
    }
}

/// Every entry file under `directory/entries`: path and size, found with FileManager (independently of the cache).
func entryFiles(in directory: URL) -> [(path: String, size: Int)] {
    let entries = directory.appendingPathComponent("entries")
    guard
        let enumerator = FileManager.default.enumerator(
            at: entries, includingPropertiesForKeys: [.fileSizeKey, .isRegularFileKey])
    else { return [] }
    var out: [(String, Int)] = []
    for case let url as URL in enumerator {
        let values = try? url.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey])
        if values?.isRegularFile == true { out.append((url.path, values?.fileSize ?? 0)) }
    }
    return out
}

/// The names left in `directory/tmp`.
func temporaryFiles(in directory: URL) -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("tmp").path)) ?? []
}

func entryPath(in directory: URL, key: String) -> String {
    DiskCacheDirectory(root: directory.path).entryPath(SHA256.hash(key))
}

func permissions(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? NSNumber)?.intValue ?? -1
}

/// Configuration without an age limit and with hooks recorded.
func testConfiguration(_ recorder: HookRecorder? = nil, sizeLimit: Int = 256 * 1024 * 1024) -> DiskCache.Configuration {
    var configuration = DiskCache.Configuration()
    configuration.sizeLimit = sizeLimit
    configuration.maxAge = nil
    recorder?.install(in: &configuration)
    return configuration
}

/// The `imago-cache-stress` executable (see ``ImagoTesting/builtExecutable(named:environmentVariable:preferringPlainBuild:filePath:)``;
/// `$IMAGO_CACHE_STRESS` overrides).
func stressToolURL(filePath: String = #filePath) -> URL? {
    ImagoTesting.builtExecutable(
        named: "imago-cache-stress", environmentVariable: "IMAGO_CACHE_STRESS", filePath: filePath)
}

/// A running `imago-cache-stress` child with its output in a file.
struct StressChild {
    let process: Process
    let output: URL

    init(tool: URL, arguments: [String], output: URL) throws {
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        process = Process()
        process.executableURL = tool
        process.arguments = arguments
        process.standardOutput = handle
        process.standardError = handle
        self.output = output
        try process.run()
        try handle.close()
    }

    var text: String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }

    func waitForExit(seconds: Double = 60) async -> Bool {
        await ImagoTesting.eventually(timeout: .seconds(seconds)) { !process.isRunning }
    }
}

/// The key the stress tool uses for number `n`.
func stressKey(_ n: Int) -> String { "https://example.com/images/\(n).jpg" }
