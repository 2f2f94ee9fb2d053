import Foundation
import Imago
import ImagoTesting

/// `imago-bench curl-loader`: CurlDataLoader against real nginx (a separate process, so this process's CPU is the
/// client's alone), side by side in one run with `curl --parallel --parallel-max 6` and with HTTPDataLoader
/// (URLSession):
/// - 500 × 200 KB over plain HTTP/1.1 at concurrency 6: wall and client CPU (goals: CPU ≤ 1.5 × curl, wall ≤ 1.2);
/// - 500 × 20 KB over TLS: HTTP/2 (one multiplexed connection) against HTTP/1.1 (6 connections), both CurlDataLoader.
/// Every round starts a fresh loader (cold connections, like curl).
enum CurlLoaderBench {
    static let concurrency = 6

    static func run() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") else {
            print("curl-loader: /usr/bin/curl not found; skipping")
            return
        }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("curl-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        for (folder, size) in [("big", 200 * 1024), ("small", 20 * 1024)] {
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
            var body = Data(count: size)
            for i in 0..<size { body[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 13) }
            for i in 0..<500 { try body.write(to: root.appendingPathComponent("\(folder)/\(i).jpg")) }
        }
        let nginx = try NginxServer(root: root)
        defer { nginx.stop() }
        let big = (0..<500).map { nginx.plainURL.appendingPathComponent("big/\($0).jpg") }
        print("curl-loader: 500 × 200 KB from nginx (HTTP/1.1) at concurrency \(concurrency); 500 × 20 KB over TLS")

        var curlCPU: [Double] = []
        var curlLoaderCPU: [Double] = []
        var sessionCPU: [Double] = []
        let curl = {
            let (wall, _, child) = try LoaderBench.measure { try LoaderBench.runCurl(big) }
            curlCPU.append(child)
            return wall
        }
        let curlLoader = {
            let (wall, cpu, _) = try LoaderBench.measure {
                try fetchAll(big, with: makeCurlLoader(), bytesEach: 200 * 1024)
            }
            curlLoaderCPU.append(cpu)
            return wall
        }
        let session = {
            let (wall, cpu, _) = try LoaderBench.measure {
                var configuration = HTTPDataLoader.Configuration()
                configuration.maximumConcurrentTransfers = concurrency
                try fetchAll(big, with: HTTPDataLoader(configuration: configuration), bytesEach: 200 * 1024)
            }
            sessionCPU.append(cpu)
            return wall
        }
        let note = "nginx 1.22 on loopback, a separate process"
        try compare(
            "curl-loader 500×200KB c6 wall: CurlDataLoader vs curl --parallel", unit: "s", goal: 1.2,
            peerName: "curl --parallel --parallel-max 6", rounds: 5, imago: curlLoader, peer: curl)
        try compare(
            "curl-loader 500×200KB c6 wall: HTTPDataLoader (URLSession) vs curl --parallel", unit: "s", goal: nil,
            peerName: "curl --parallel --parallel-max 6", rounds: 5, imago: session, peer: curl)
        let curlClient = median(Array(curlCPU.dropFirst()))
        let curlLoaderClient = median(Array(curlLoaderCPU.dropFirst()))
        let sessionClient = median(Array(sessionCPU.dropFirst()))
        for (name, figure, goal) in [
            ("CurlDataLoader", curlLoaderClient, 1.5 as Double?), ("HTTPDataLoader (URLSession)", sessionClient, nil),
        ] {
            let ratio = figure / curlClient
            print(
                String(
                    format: "curl-loader: client CPU %@ %.3f s vs curl %.3f s: ×%.2f", name, figure, curlClient, ratio))
            BenchReport.shared.add(
                Comparison(
                    name: "curl-loader 500×200KB c6 client CPU: \(name) vs curl", imago: figure, peer: curlClient,
                    unit: "s", ratio: ratio, goal: goal, met: goal.map { ratio <= $0 },
                    peerName: "curl --parallel --parallel-max 6", note: note))
        }

        // HTTP/2 over TLS (one connection, multiplexed) vs HTTP/1.1 over TLS (up to 6 connections).
        let smallH2 = (0..<500).map { nginx.http2URL.appendingPathComponent("small/\($0).jpg") }
        let smallH1 = (0..<500).map { nginx.http1TLSURL.appendingPathComponent("small/\($0).jpg") }
        let h2 = {
            try LoaderBench.measure {
                try fetchAll(smallH2, with: makeCurlLoader(ca: nginx.certificatePath), bytesEach: 20 * 1024)
            }.wall
        }
        let h1 = {
            try LoaderBench.measure {
                try fetchAll(
                    smallH1, with: makeCurlLoader(ca: nginx.certificatePath, version: .http1_1), bytesEach: 20 * 1024)
            }.wall
        }
        try compare(
            "curl-loader 500×20KB TLS c6 wall: HTTP/2 vs HTTP/1.1", unit: "s", goal: nil,
            peerName: "CurlDataLoader over HTTP/1.1 + TLS", rounds: 5, imago: h2, peer: h1)
    }

    static func makeCurlLoader(
        ca: String? = nil, version: CurlDataLoader.HTTPVersion = .http2OverTLS
    )
        -> CurlDataLoader
    {
        var configuration = CurlDataLoader.Configuration()
        configuration.loading.maximumConcurrentTransfers = concurrency
        configuration.tls.caBundlePath = ca
        configuration.httpVersion = version
        return CurlDataLoader(configuration: configuration)
    }

    /// Loads every URL through `loader` (its own queue bounds the concurrency); throws unless all arrived whole.
    static func fetchAll(_ urls: [URL], with loader: any DataLoading, bytesEach: Int) throws {
        let group = DispatchGroup()
        let failures = Locked(0)
        let bytes = Locked(0)
        for url in urls {
            group.enter()
            _ = loader.load(DataRequest(url: url)) { event in
                switch event {
                case .finished(let response):
                    bytes.withLock { $0 += response.data.count }
                    group.leave()
                case .failed:
                    failures.withLock { $0 += 1 }
                    group.leave()
                case .progress, .partialData: break
                }
            }
        }
        group.wait()
        guard failures.value == 0, bytes.value == urls.count * bytesEach else {
            throw LoaderBench.BenchFailure(
                description: "\(type(of: loader)): \(failures.value) failures, \(bytes.value) bytes")
        }
    }
}
