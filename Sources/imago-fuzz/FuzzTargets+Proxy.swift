import Foundation
import Imago
import ImagoServer
import ImagoTesting

extension FuzzTargets {
    /// `imago serve`'s URL handling, input being untrusted URL text: the whole input as a request path through
    /// ``ProxyPath`` (with presets, and in presets-only mode), and as a `local:` path, which must map under its
    /// root; then the input as the options of a path to a 16 × 12 PNG, answered by an
    /// ``ImageProxy`` whose origin is in memory, when its sizes are small enough (a box, minimums and padding of at
    /// most 128, 128 and 32 pixels) that the fuzzer spends its time on parsing and placement rather than on
    /// resampling large images. The proxy traces, reading every propagator's format and sending them all to the
    /// origin: the request's `traceparent` is the input's first line or one made from the input's hash, its
    /// `tracestate` and `baggage` the input, the other formats' fields (B3, Jaeger, X-Ray, OpenTracing) the first
    /// line, and each answered request's record becomes spans and a log entry. Every answer must be a response, never a crash or a hang.
    static func proxyURL(_ data: Data) {
        let text = String(decoding: data.prefix(4096), as: UTF8.self)
        _ = proxyReplacements.applied(to: text)
        _ = try? ProxyPath(parsing: text, presets: proxyPresets, replacements: proxyReplacements)
        _ = try? ProxyPath(parsing: text, presets: proxyPresets, baseURL: "http://fuzz.example/")
        _ = try? ProxyPath(parsing: text, presets: proxyPresets, onlyPresets: true)
        _ = try? ProxyPath(parsing: text, presets: proxyPresets, onlyPresets: true, argumentsSeparator: ",")
        // A local: source never maps outside the root, whatever its path says.
        if let local = URL(string: "local:///" + text), let file = localSources.fileURL(for: local) {
            let root = localSources.root.path.hasSuffix("/") ? localSources.root.path : localSources.root.path + "/"
            precondition(file.standardizedFileURL.path.hasPrefix(root), "local: path escaped the root: \(text)")
        }
        let path = "/_/" + text.replacingOccurrences(of: "\n", with: "") + "/plain/http://fuzz.example/a.png"
        guard let parsed = try? ProxyPath(parsing: path, presets: proxyPresets) else { return }
        let options = parsed.options
        let box = options.scaledBox
        let minimums = [options.minWidth, options.minHeight].map { Double($0) * options.dpr }
        let padding = options.padding
        guard box.width <= 128, box.height <= 128, minimums.allSatisfy({ $0 <= 128 }),
            [padding.top, padding.right, padding.bottom, padding.left].allSatisfy({ Double($0) * options.dpr <= 32 }),
            options.zoomX * max(1, Double(box.width) / 16) <= 16, options.zoomY * max(1, Double(box.height) / 12) <= 16
        else { return }
        let proxy = fuzzProxy
        waiting {
            // The first line as the caller's traceparent when it starts with an odd byte (the parser on text), else
            // a well-formed one from the input's hash (a caller's trace, sampled or not, its spans built).
            let line = String(text.prefix { $0 != "\n" })
            let hash = data.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
            let traceparent =
                line.utf8.first.map { $0 & 1 == 1 } == true
                ? line
                : "00-" + String(format: "%016llx%016llx-%016llx-0%d", hash, ~hash, hash | 1, Int(hash & 1))
            var headers = ["accept": "image/webp", "traceparent": traceparent, "tracestate": text, "baggage": text]
            for name in [
                "b3", "x-b3-traceid", "x-b3-spanid", "x-b3-sampled", "uber-trace-id", "x-amzn-trace-id",
                "ot-tracer-traceid", "ot-tracer-spanid",
            ] {
                headers[name] = line
            }
            _ = await proxy.respond(to: ServerRequest(method: "GET", path: path, headers: headers))
        }
    }

    /// Runs `body` on Swift's executor and returns when it has finished (libFuzzer calls a target synchronously).
    static func waiting(for body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await body()
            done.signal()
        }
        done.wait()
    }

    /// A local-source loader over a root that need not exist (only its path mapping is fuzzed).
    private static let localSources = LocalSourceLoader(
        root: URL(fileURLWithPath: "/nonexistent/imago-fuzz-root"), remote: MockDataLoader())

    /// Source URL rewrites with stars and captures (the matcher runs on every input as a URL too).
    private static let proxyReplacements =
        (try? URLReplacement.list(parsing: "img://*/*=http://fuzz.example/${2}/${1};a*b*c=http://fuzz.example/${3}"))
        ?? []

    private static let proxyPresets =
        (try? PresetTable(definitions: ["thumb=rs:fill:32:32/q:50", "small=pr:thumb/s:8:8", "default=cb:0"]))
        ?? PresetTable()

    /// A proxy whose only origin is an in-memory 16 × 12 PNG with transparency, with a 4 × 4 watermark, that allows
    /// security options and keeps up to 4 frames of 1,000 pixels.
    private static let fuzzProxy: ImageProxy = {
        let loader = MockDataLoader()
        var image = try! PixelBuffer(width: 16, height: 12)
        for y in 0..<12 {
            for x in 0..<16 { image[pixel: x, y] = RGBA(r: UInt8(x * 15), g: UInt8(y * 20), b: 90, a: x < 3 ? 0 : 255) }
        }
        let encoders = ImageEncoderRegistry.makeDefault()
        loader.setResponse(try! encoders.encode(image, as: .png), for: URL(string: "http://fuzz.example/a.png")!)
        var configuration = ImageProxy.Configuration(dataLoader: loader)
        configuration.allowsUnsigned = true
        configuration.sourcePolicy = SourcePolicy(allowsPrivateAddresses: true)
        // URLs may tighten the limits, and animations keep frames, so those paths are parsed and resolved too.
        configuration.allowsSecurityOptions = true
        configuration.maxAnimationFrames = 4
        configuration.maxAnimationFramePixels = 1_000
        configuration.urlReplacements = proxyReplacements
        configuration.tracing = RequestTracing(
            sampler: .parentBased(root: .ratio(0.5)), propagatesToSources: true,
            propagators: TracePropagator.allCases)
        configuration.accessLog = { record in
            let spans = record.spans
            precondition(spans.allSatisfy { $0.end >= $0.start }, "a span that ends before it starts")
            precondition(spans.allSatisfy { $0.traceID == record.trace?.traceID }, "a span outside the trace")
            _ = record.logEntry
        }
        configuration.watermark = try? WatermarkImage(
            data: try! encoders.encode(try! PixelBuffer(width: 4, height: 4), as: .png))
        return ImageProxy(configuration: configuration)
    }()
}

extension FuzzTargets {
    /// The request headers `imago serve` reads from clients: `Accept` (negotiation), `If-None-Match` and
    /// `If-Modified-Since` (304s), client hints (`DPR`, `Width`, their `Sec-CH-` forms), the forwarding headers the
    /// access log reads, `Host`, `Cookie`, `Authorization`, `X-Request-ID`. Input: newline-separated `name: value`
    /// lines (a line without a colon is the `Accept` value); `GET` or `HEAD` and one of a few paths to the fuzz
    /// proxy's 16 × 12 PNG picked by the input's first byte. Every answer must not be a 500, and the same request
    /// sent again with the answer's own `ETag` as `If-None-Match` must be a 304.
    static func requestHeaders(_ data: Data) {
        let headers = headerFields(String(decoding: data.prefix(4096), as: UTF8.self), bareLinesAs: "accept")
        let selector = Int(data.first ?? 0)
        let options = requestHeaderPaths[(selector >> 1) % requestHeaderPaths.count]
        let request = ServerRequest(
            method: selector & 1 == 1 ? "HEAD" : "GET", path: "/_/\(options)/plain/http://fuzz.example/a.png",
            headers: headers, clientAddress: "127.0.0.1")
        let proxy = fuzzProxy
        waiting {
            let response = await proxy.respond(to: request)
            precondition(response.status != 500, "a 500 for request headers: \(headers)")
            let etag = response.headers.first { $0.name.lowercased() == "etag" }?.value
            if response.status == 200, let etag {
                var again = request
                again.headers["if-none-match"] = etag
                again.headers["if-modified-since"] = nil
                let revalidated = await proxy.respond(to: again)
                precondition(revalidated.status == 304, "the answer's own ETag is not a 304: \(revalidated.status)")
            }
        }
    }

    /// Options for ``requestHeaders(_:)``: no format (negotiated from `Accept`), each output format, client hints
    /// in play (no width, `dpr` unset), and a crop.
    private static let requestHeaderPaths = [
        "w:8", "rs:fit:0:0", "f:webp/w:8", "f:avif/w:8", "f:jxl/w:8", "f:png/w:8", "f:jpeg/w:8", "c:8:8/g:ce",
    ]
}
