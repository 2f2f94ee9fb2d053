import Foundation
import Imago
import ImagoServer
import ImagoTesting
import Testing

@testable import ImagoCLI

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An unsigned proxy path with `options` whose source is `source` in base64url, with `.png` for the output.
func base64Path(_ options: String, _ source: String) -> String {
    "/_/\(options)/\(Base64URL.encode(Array(source.utf8))).png"
}

/// `imago serve --unsigned --allow-private` with `arguments` after it, as the command wires it: its libcurl loader,
/// its source policy, its object stores; `environment` is the process environment it sees (default:
/// ``quietCloudEnvironment``, so the machine it runs on does not matter); `accessLog` receives its records.
func servedProxy(
    _ arguments: [String], environment: [String: String] = quietCloudEnvironment,
    accessLog: (@Sendable (AccessLogRecord) -> Void)? = nil
) throws -> ImageProxy {
    let options = try ServeCommand.parse(
        parseArguments(["--unsigned", "--allow-private"] + arguments, options: ServeCommand.command.options),
        environment: environment)
    var configuration = ImageProxy.Configuration(dataLoader: ServeCommand.makeSourceLoader(options))
    configuration.allowsUnsigned = true
    configuration.sourcePolicy = options.sourcePolicy
    configuration.accessLog = accessLog
    configuration.s3 = options.s3
    configuration.azureBlob = options.azureBlob
    configuration.gcs = options.gcs
    configuration.swift = options.swift
    configuration.sendsDetailedErrors = options.sendsDetailedErrors
    return ImageProxy(configuration: configuration)
}

/// An environment in which no cloud's metadata service or credentials are looked for (Google's, EC2's, Azure's),
/// whatever machine the tests run on.
let quietCloudEnvironment = [
    "NO_GCE_CHECK": "true", "AWS_EC2_METADATA_DISABLED": "true", "AZURE_TOKEN_CREDENTIALS": "dev",
]

/// Images the tests serve, made in memory so every pixel is known.
enum ServerTestImages {
    /// An opaque `width` × `height` image: left half red, right half blue, top row green (for gravity checks).
    static func halves(width: Int, height: Int) throws -> PixelBuffer {
        var image = try PixelBuffer(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                image[pixel: x, y] = x < width / 2 ? RGBA(r: 255, g: 0, b: 0, a: 255) : RGBA(r: 0, g: 0, b: 255, a: 255)
            }
        }
        return image
    }

    /// A 400 × 200 JPEG of ``halves(width:height:)``.
    static func jpeg(width: Int = 400, height: Int = 200) throws -> Data {
        try ImageEncoderRegistry.makeDefault().encode(halves(width: width, height: height), as: .jpeg)
    }

    /// A 64 × 64 PNG whose left half is transparent.
    static func pngWithAlpha() throws -> Data {
        var image = try PixelBuffer(width: 64, height: 64)
        for y in 0..<64 {
            for x in 0..<64 { image[pixel: x, y] = RGBA(r: 0, g: 200, b: 0, a: x < 32 ? 0 : 255) }
        }
        return try ImageEncoderRegistry.makeDefault().encode(image, as: .png)
    }

    /// A 400 × 200 flat gray image with a black-and-white checkerboard of 4-pixel squares over its right quarter.
    static func checkeredQuarter() throws -> PixelBuffer {
        var image = try PixelBuffer(width: 400, height: 200)
        for y in 0..<200 {
            for x in 0..<400 {
                let v: UInt8 = x < 300 ? 128 : ((x / 4 + y / 4) % 2 == 0 ? 0 : 255)
                image[pixel: x, y] = RGBA(r: v, g: v, b: v, a: 255)
            }
        }
        return image
    }

    /// Decodes `data` with every codec (the EXIF orientation applied unless `appliesOrientation` is `false`).
    static func decode(_ data: Data, appliesOrientation: Bool = true) throws -> PixelBuffer {
        var options = DecodingOptions()
        options.appliesOrientation = appliesOrientation
        return try ImageDecoderRegistry.makeDefault().decode(data, options: options).image
    }
}

/// Whether `p` is the fixture's red, after lossy coding and resampling.
func isRed(_ p: RGBA) -> Bool { p.r > 200 && p.g < 60 && p.b < 60 }
/// Whether `p` is the fixture's blue, after lossy coding and resampling.
func isBlue(_ p: RGBA) -> Bool { p.b > 200 && p.r < 60 && p.g < 60 }

/// An origin (the loopback server, which counts requests) with one JPEG at `/a.jpg`, a proxy in front of it, and
/// optionally libmicrohttpd serving the proxy.
final class ProxyFixture: Sendable {
    let origin: LoopbackServer
    let proxy: ImageProxy
    let jpeg: Data

    /// A fixture whose proxy accepts unsigned URLs and private addresses, then `configure` changes it.
    init(_ configure: (inout ImageProxy.Configuration) throws -> Void = { _ in }) throws {
        origin = try LoopbackServer()
        jpeg = try ServerTestImages.jpeg()
        origin.setRoute("/a.jpg", .bytes(jpeg, contentType: "image/jpeg"))
        var configuration = ImageProxy.Configuration()
        configuration.allowsUnsigned = true
        configuration.sourcePolicy = SourcePolicy(allowsPrivateAddresses: true)
        try configure(&configuration)
        proxy = ImageProxy(configuration: configuration)
    }

    deinit { origin.stop() }

    /// The origin URL of `path`.
    func source(_ path: String = "/a.jpg") -> String { origin.url(for: path).absoluteString }

    /// An unsigned proxy path with `options` for the origin's `path`.
    func path(_ options: String, _ sourcePath: String = "/a.jpg", ext: String? = nil) -> String {
        "/_/" + (options.isEmpty ? "" : options + "/") + "plain/" + source(sourcePath) + (ext.map { "@" + $0 } ?? "")
    }

    /// The proxy served by libmicrohttpd on a free loopback port, with the connection limit and idle timeout given
    /// (libmicrohttpd's defaults as the server's: 1,024 and 30 s).
    func served(connectionLimit: Int = 1024, connectionTimeout: Int = 30) throws -> MicroHTTPServer {
        let proxy = proxy
        return try MicroHTTPServer(
            host: "127.0.0.1", port: 0, connectionLimit: connectionLimit, connectionTimeout: connectionTimeout,
            rejected: { proxy.countRejection(status: $0) }
        ) { await proxy.respond(to: $0) }
    }

    /// The proxy's answer to a GET of `path`.
    func get(_ path: String, headers: [String: String] = [:], method: String = "GET") async -> ServerResponse {
        await proxy.respond(to: ServerRequest(method: method, path: path, headers: headers))
    }
}

/// A loopback origin and a scratch directory for proxies that restart over one disk cache of outputs; both go
/// away with the fixture.
final class RestartFixture: Sendable {
    let origin: LoopbackServer
    let directory: URL

    init() throws {
        origin = try LoopbackServer()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString)")
    }

    deinit {
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// An unsigned path with `options` for the origin's `sourcePath`.
    func path(_ options: String, _ sourcePath: String) -> String {
        "/_/" + options + "/plain/" + origin.url(for: sourcePath).absoluteString
    }

    /// The answer to a GET of `path` from a fresh proxy (unsigned URLs, private addresses) whose output cache is a
    /// disk cache in ``directory``, closed before returning: each call is one run of a server, so calls in turn see
    /// what earlier runs left on disk. `configure` changes the configuration first.
    func respondAfterRestart(
        _ path: String, _ configure: (inout ImageProxy.Configuration) -> Void = { _ in }
    ) async throws -> ServerResponse {
        let disk = try DiskCache(directory: directory)
        defer { disk.close() }
        var configuration = ImageProxy.Configuration()
        configuration.allowsUnsigned = true
        configuration.sourcePolicy = SourcePolicy(allowsPrivateAddresses: true)
        configuration.outputCache = OutputCache(disk: disk)
        configure(&configuration)
        return await ImageProxy(configuration: configuration).respond(to: ServerRequest(method: "GET", path: path))
    }
}

/// The JSON error sentence of a response.
func errorMessage(_ response: ServerResponse) -> String {
    let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: String]
    return object?["error"] ?? "<no error field in \(String(decoding: response.body, as: UTF8.self))>"
}

/// A plain HTTP client for tests (no caching, no redirects beyond the default, many connections).
struct TestHTTPClient {
    let session: URLSession

    init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 128
        configuration.timeoutIntervalForRequest = 30
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    /// Sends `method` to `url`; returns the status, the headers (names lowercased) and the body.
    func send(
        _ url: URL, method: String = "GET", headers: [String: String] = [:]
    ) async throws -> (status: Int, headers: [String: String], body: Data) {
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var lowered: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { lowered[name.lowercased()] = value }
        }
        return (http.statusCode, lowered, data)
    }
}

/// The samples of a Prometheus text exposition, by name with labels (`imago_serve_requests_total{status="200"}`).
func prometheusSamples(_ text: String) -> [String: Double] {
    var samples: [String: Double] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
            continue
        }
        samples[String(line[..<space])] = value
    }
    return samples
}

/// What `python3 -c script arguments…` prints (standard output and error, trimmed), `input` on its standard
/// input: the tests' independent implementations of the signing schemes Imago checks or makes.
func python(_ script: String, arguments: [String], input: Data? = nil) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script] + arguments
    let stdin = Pipe()
    let stdout = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stdout
    try process.run()
    if let input { stdin.fileHandleForWriting.write(input) }
    try stdin.fileHandleForWriting.close()
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (
        process.terminationStatus,
        String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    )
}

/// `request` as the signature verifiers read it (JSON on standard input): method, path, query, header fields.
func verifierInput(_ request: LoopbackServer.Request) throws -> Data {
    let input: [String: Any] = [
        "method": request.method, "path": request.path, "query": request.query ?? "",
        "body": request.body.base64EncodedString(),
        "headers": request.headers.map { [$0.name, $0.value] },
    ]
    return try JSONSerialization.data(withJSONObject: input)
}

/// The last event of a load of `url` through `loader`, once it finished or failed (`nil` if it did neither in
/// ``ImagoTesting/defaultTimeout``).
func lastEvent(loading url: URL, through loader: any DataLoading) async -> DataLoadEvent? {
    let events = Locked<[DataLoadEvent]>([])
    let task = loader.load(DataRequest(url: url)) { event in events.withLock { $0.append(event) } }
    _ = await ImagoTesting.eventually {
        events.value.contains {
            switch $0 {
            case .finished, .failed: true
            default: false
            }
        }
    }
    withExtendedLifetime(task) {}
    return events.value.last
}

/// A new empty directory under the system's temporary directory, named `prefix-UUID`; the caller removes it.
func makeTemporaryDirectory(_ prefix: String) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

extension LoopbackServer {
    /// Serves `image` (a JPEG) at `path` only to requests whose `Authorization` is `Bearer ` and what `token` gives
    /// at that moment (and that carry every field of `requiring`); others get 401, as a store refusing a token.
    func serveJPEG(
        _ image: Data, at path: String, toBearer token: @escaping @Sendable () -> String,
        requiring fields: [String] = []
    ) {
        setRoute(
            path,
            .handler { request in
                request.headers["Authorization"] == "Bearer \(token())"
                    && fields.allSatisfy { request.headers[$0] != nil }
                    ? LoopbackServer.Response(status: 200, headers: ["Content-Type": "image/jpeg"], body: image)
                    : LoopbackServer.Response(status: 401)
            })
    }
}

extension LoopbackServer.Request {
    /// The fields of an `application/x-www-form-urlencoded` body, percent-decoded (the first of a repeated name).
    var formFields: [String: String] {
        Dictionary(
            String(decoding: body, as: UTF8.self).split(separator: "&").map {
                let pair = $0.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                return (pair[0], pair.count > 1 ? pair[1] : "")
            }, uniquingKeysWith: { first, _ in first })
    }
}
