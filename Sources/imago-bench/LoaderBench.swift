import Foundation
import ImagoCore
import ImagoTesting

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `imago-bench loader`: 500 files of 200 KB from the in-process loopback server at concurrency 6, fetched by
/// HTTPDataLoader, by raw URLSession (`data(for:)`, 6 workers: the floor our loader sits on) and by
/// `curl --parallel --parallel-max 6` (a separate process) in the same run, interleaved.
///
/// CPU: the server runs inside this process, so this process's CPU during a curl round is the server's cost for
/// serving the batch. A client's CPU is therefore this process's CPU during its round minus that server cost from
/// the same round; curl's CPU is its own (RUSAGE_CHILDREN delta after it is reaped).
enum LoaderBench {
    static let fileCount = 500
    static let fileSize = 200 * 1024
    static let concurrency = 6

    static func run() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") else {
            print("loader: /usr/bin/curl not found; skipping the loader benchmark")
            return
        }
        let server = try LoopbackServer()
        defer { server.stop() }
        var body = Data(count: fileSize)
        for i in 0..<fileSize { body[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 13) }
        let urls = (0..<fileCount).map { server.url(for: "/f/\($0).jpg") }
        for url in urls { server.setRoute(url.path, .bytes(body, contentType: "image/jpeg")) }

        // Each closure returns wall seconds and records its process CPU seconds.
        var curlCPU: [Double] = []
        var serverCPUDuringCurl: [Double] = []
        var selfCPUDuringImago: [Double] = []
        var selfCPUDuringRaw: [Double] = []

        let curl = {
            let (wall, selfCPU, childCPU) = try measure { try runCurl(urls) }
            curlCPU.append(childCPU)
            serverCPUDuringCurl.append(selfCPU)
            return wall
        }
        let imago = {
            let (wall, selfCPU, _) = try measure { try runLoader(urls) }
            selfCPUDuringImago.append(selfCPU)
            return wall
        }
        let raw = {
            let (wall, selfCPU, _) = try measure { try runRawURLSession(urls) }
            selfCPUDuringRaw.append(selfCPU)
            return wall
        }
        let megabytes = Double(fileCount * fileSize) / 1e6
        print(
            "loader: \(fileCount) × \(fileSize / 1024) KB (\(Int(megabytes)) MB) over loopback, concurrency \(concurrency)"
        )

        try compare(
            "loader 500×200KB c6 wall: HTTPDataLoader vs curl --parallel", unit: "s", goal: nil,
            peerName: "curl --parallel --parallel-max 6", rounds: 5, imago: imago, peer: curl)
        try compare(
            "loader 500×200KB c6 wall: HTTPDataLoader vs raw URLSession", unit: "s", goal: nil,
            peerName: "URLSession data(for:) ×6", rounds: 5, imago: imago, peer: raw)

        // CPU, from the rounds above (the first round of each is a warm-up and is dropped).
        let serverCPU = median(Array(serverCPUDuringCurl.dropFirst()))
        let imagoClient = max(0, median(Array(selfCPUDuringImago.dropFirst())) - serverCPU)
        let rawClient = max(0, median(Array(selfCPUDuringRaw.dropFirst())) - serverCPU)
        let curlClient = median(Array(curlCPU.dropFirst()))
        print(
            String(format: "loader: server CPU per batch ≈ %.3f s (subtracted from the in-process clients)", serverCPU))
        BenchReport.shared.add(
            Comparison(
                name: "loader 500×200KB c6 client CPU: HTTPDataLoader vs curl", imago: imagoClient, peer: curlClient,
                unit: "s", ratio: imagoClient / curlClient, goal: nil, met: nil,
                peerName: "curl --parallel --parallel-max 6"))
        BenchReport.shared.add(
            Comparison(
                name: "loader 500×200KB c6 client CPU: HTTPDataLoader vs raw URLSession", imago: imagoClient,
                peer: rawClient, unit: "s", ratio: imagoClient / rawClient, goal: nil, met: nil,
                peerName: "URLSession data(for:) ×6"))
    }

    /// Wall seconds, this process's CPU seconds and reaped children's CPU seconds spent in `body`.
    static func measure(_ body: () throws -> Void) rethrows -> (wall: Double, selfCPU: Double, childCPU: Double) {
        let self0 = cpuSeconds(RUSAGE_SELF)
        let child0 = cpuSeconds(RUSAGE_CHILDREN)
        let t0 = now()
        try body()
        let wall = now() - t0
        return (wall, cpuSeconds(RUSAGE_SELF) - self0, cpuSeconds(RUSAGE_CHILDREN) - child0)
    }

    static func cpuSeconds(_ who: __rusage_who) -> Double {
        var usage = rusage()
        getrusage(who.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    struct BenchFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Fetches every URL through a fresh HTTPDataLoader (like curl, which starts cold each run).
    static func runLoader(_ urls: [URL]) throws {
        var configuration = HTTPDataLoader.Configuration()
        configuration.maximumConcurrentTransfers = concurrency
        try CurlLoaderBench.fetchAll(urls, with: HTTPDataLoader(configuration: configuration), bytesEach: fileSize)
    }

    /// Fetches every URL with URLSession's own `data(for:)`, six at a time.
    static func runRawURLSession(_ urls: [URL]) throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        let next = Locked(0)
        let bytes = Locked(0)
        let group = DispatchGroup()
        for _ in 0..<concurrency {
            group.enter()
            Task {
                while true {
                    let index = next.withLock { n -> Int in
                        defer { n += 1 }
                        return n
                    }
                    guard index < urls.count else { break }
                    if let (data, _) = try? await session.data(for: URLRequest(url: urls[index])) {
                        bytes.withLock { $0 += data.count }
                    }
                }
                group.leave()
            }
        }
        group.wait()
        guard bytes.value == urls.count * fileSize else {
            throw BenchFailure(description: "URLSession: \(bytes.value) bytes")
        }
    }

    /// Runs `curl --parallel --parallel-max 6` over every URL, bodies to /dev/null.
    static func runCurl(_ urls: [URL]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        var arguments = [
            "--silent", "--no-progress-meter", "--fail", "--parallel", "--parallel-max", String(concurrency),
        ]
        for url in urls { arguments += [url.absoluteString, "-o", "/dev/null"] }
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchFailure(description: "curl exited with \(process.terminationStatus)")
        }
    }
}
