import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI
@testable import ImagoCurl
@testable import ImagoServer

/// OpenTelemetry traces (imgproxy's `IMGPROXY_OPEN_TELEMETRY_*`): W3C Trace Context in, OTLP/HTTP protobuf out,
/// checked by an independent decoder of OTLP's messages written from the field numbers of its `.proto` files.
@Suite("imago serve: OpenTelemetry traces")
struct TracingTests {
    /// Python, from the OTLP `.proto` field numbers: `ExportTraceServiceRequest` bodies (base64, one a line, on
    /// standard input; gunzipped first when gzip) → JSON `{"resources": [...], "scopes": [...], "spans": [...]}`, IDs in hex, times in ns.
    static let decoder = #"""
        import base64, gzip, json, struct, sys
        def message(line):
            b = base64.b64decode(line)
            return gzip.decompress(b) if b[:2] == b'\x1f\x8b' else b  # no OTLP message starts so
        def fields(b):
            i = 0
            while i < len(b):
                key = 0; shift = 0
                while True:
                    c = b[i]; i += 1; key |= (c & 0x7f) << shift; shift += 7
                    if c < 0x80: break
                number, kind = key >> 3, key & 7
                if kind == 0:
                    v = 0; shift = 0
                    while True:
                        c = b[i]; i += 1; v |= (c & 0x7f) << shift; shift += 7
                        if c < 0x80: break
                elif kind == 1: v = struct.unpack('<Q', b[i:i+8])[0]; i += 8
                elif kind == 5: v = struct.unpack('<I', b[i:i+4])[0]; i += 4
                elif kind == 2:
                    n = 0; shift = 0
                    while True:
                        c = b[i]; i += 1; n |= (c & 0x7f) << shift; shift += 7
                        if c < 0x80: break
                    v = b[i:i+n]; i += n
                else: raise ValueError('wire type %d' % kind)
                yield number, kind, v
        def anyvalue(b):
            for n, k, v in fields(b):
                if n == 1: return v.decode()
                if n == 2: return bool(v)
                if n == 3: return v - (1 << 64) if v >= 1 << 63 else v
                if n == 4: return struct.unpack('<d', struct.pack('<Q', v))[0]
        def keyvalue(b):
            key = value = None
            for n, k, v in fields(b):
                if n == 1: key = v.decode()
                if n == 2: value = anyvalue(v)
            return key, value
        def span(b):
            s = {'attributes': {}, 'status': None}
            for n, k, v in fields(b):
                if n == 1: s['trace_id'] = v.hex()
                elif n == 2: s['span_id'] = v.hex()
                elif n == 3: s['trace_state'] = v.decode()
                elif n == 4: s['parent_span_id'] = v.hex()
                elif n == 5: s['name'] = v.decode()
                elif n == 6: s['kind'] = v
                elif n == 7: s['start'] = v
                elif n == 8: s['end'] = v
                elif n == 9: kv = keyvalue(v); s['attributes'][kv[0]] = kv[1]
                elif n == 15:
                    s['status'] = {'code': 0, 'message': ''}
                    for sn, sk, sv in fields(v):
                        if sn == 2: s['status']['message'] = sv.decode()
                        if sn == 3: s['status']['code'] = sv
                elif n == 16: s['flags'] = v
            return s
        def point(b, histogram):
            p = {'attributes': {}}
            for n, k, v in fields(b):
                if n == 2: p['start'] = v
                elif n == 3: p['time'] = v
                elif n == (9 if histogram else 7): kv = keyvalue(v); p['attributes'][kv[0]] = kv[1]
                elif histogram and n == 4: p['count'] = v
                elif histogram and n == 5: p['sum'] = struct.unpack('<d', struct.pack('<Q', v))[0]
                elif histogram and n == 6: p['buckets'] = list(struct.unpack('<%dQ' % (len(v) // 8), v))
                elif histogram and n == 7: p['bounds'] = list(struct.unpack('<%dd' % (len(v) // 8), v))
                elif not histogram and n == 6: p['value'] = v - (1 << 64) if v >= 1 << 63 else v
            return p
        def metric(b):
            m = {'points': []}
            for n, k, v in fields(b):
                if n == 1: m['name'] = v.decode()
                elif n == 2: m['description'] = v.decode()
                elif n == 3: m['unit'] = v.decode()
                elif n in (5, 7, 9):
                    m['type'] = {5: 'gauge', 7: 'sum', 9: 'histogram'}[n]
                    for dn, dk, dv in fields(v):
                        if dn == 1: m['points'].append(point(dv, n == 9))
                        if dn == 2: m['temporality'] = dv
                        if dn == 3: m['monotonic'] = bool(dv)
            return m
        if sys.argv[1:] == ['logs']:
            records = []
            for line in sys.stdin.read().split():
                for n, k, rl in fields(message(line)):
                    for rn, rk, rv in fields(rl):
                        if rn != 2: continue
                        scope = [qv.decode() for sn, sk, sv in fields(rv) if sn == 1
                                 for qn, qk, qv in fields(sv) if qn == 1]
                        for sn, sk, sv in fields(rv):
                            if sn != 2: continue
                            r = {'attributes': {}, 'scope': scope[0] if scope else None}
                            for ln, lk, lv in fields(sv):
                                if ln == 1: r['time'] = lv
                                elif ln == 2: r['severity'] = lv
                                elif ln == 3: r['severity_text'] = lv.decode()
                                elif ln == 5: r['body'] = anyvalue(lv)
                                elif ln == 6: kv = keyvalue(lv); r['attributes'][kv[0]] = kv[1]
                                elif ln == 8: r['flags'] = lv
                                elif ln == 9: r['trace_id'] = lv.hex()
                                elif ln == 10: r['span_id'] = lv.hex()
                                elif ln == 11: r['observed'] = lv
                            records.append(r)
            print(json.dumps(records))
            sys.exit(0)
        if sys.argv[1:] == ['metrics']:
            exports = []
            for line in sys.stdin.read().split():
                for n, k, rm in fields(message(line)):
                    for rn, rk, rv in fields(rm):
                        if rn == 2:
                            exports.append([metric(mv) for mn, mk, mv in fields(rv) if mn == 2])
            print(json.dumps(exports))
            sys.exit(0)
        out = {'resources': [], 'scopes': [], 'spans': []}
        for line in sys.stdin.read().split():
            for n, k, rs in fields(message(line)):
                assert n == 1
                for rn, rk, rv in fields(rs):
                    if rn == 1: out['resources'].append(dict(keyvalue(a) for an, ak, a in fields(rv) if an == 1))
                    if rn == 2:
                        for sn, sk, sv in fields(rv):
                            if sn == 1: out['scopes'].append({fn: fv.decode() for fn, fk, fv in fields(sv)})
                            if sn == 2: out['spans'].append(span(sv))
        print(json.dumps(out))
        """#

    struct Decoded: Decodable {
        struct Span: Decodable {
            struct Status: Decodable {
                var code: Int
                var message: String
            }
            var trace_id: String
            var span_id: String
            var parent_span_id: String?
            var trace_state: String?
            var name: String
            var kind: Int
            var start: UInt64
            var end: UInt64
            var attributes: [String: AttributeValue]
            var status: Status?
            var flags: UInt32?
        }
        enum AttributeValue: Decodable, Equatable {
            case string(String), number(Double), bool(Bool)
            init(from decoder: any Decoder) throws {
                let c = try decoder.singleValueContainer()
                if let b = try? c.decode(Bool.self) {
                    self = .bool(b)
                } else if let n = try? c.decode(Double.self) {
                    self = .number(n)
                } else {
                    self = .string(try c.decode(String.self))
                }
            }
        }
        var resources: [[String: AttributeValue]]
        var scopes: [[String: String]]
        var spans: [Span]
    }

    /// The requests `server` receives at `paths`, each answered with `answer` (default: 200, no body).
    static func recording(
        _ server: LoopbackServer, _ paths: [String], answer: LoopbackServer.Response = .init(status: 200)
    ) -> Locked<[LoopbackServer.Request]> {
        let received = Locked<[LoopbackServer.Request]>([])
        for path in paths {
            server.setRoute(
                path,
                .handler { request in
                    received.withLock { $0.append(request) }
                    return answer
                })
        }
        return received
    }

    /// What the decoder prints for `bodies` (`mode`: none for spans, `logs`, `metrics`), decoded as `type`.
    static func decode<Value: Decodable>(_ bodies: [Data], mode: [String] = [], as type: Value.Type) throws -> Value {
        let input = Data(bodies.map { $0.base64EncodedString() }.joined(separator: "\n").utf8)
        let (status, output) = try python(decoder, arguments: mode, input: input)
        try #require(status == 0, "\(output)")
        return try JSONDecoder().decode(type, from: Data(output.utf8))
    }

    /// A span exporter to `endpoint` and what it tells of its failures, in order.
    static func telling(_ endpoint: OTLPEndpoint) -> (exporter: OTLPTraceExporter, told: Locked<[String]>) {
        let told = Locked<[String]>([])
        let exporter = OTLPTraceExporter(configuration: .init(endpoint: endpoint)) { message in
            told.withLock { $0.append(message) }
        }
        return (exporter, told)
    }

    /// A route of `server` at `path` that takes requests and holds them unanswered until the caller resumes it.
    static func stall(_ server: LoopbackServer, _ path: String) {
        server.setRoute(path, .bytes(Data(), contentType: "application/x-protobuf"))
        server.suspend(path)
    }

    static func decode(_ bodies: [Data]) throws -> Decoded { try decode(bodies, as: Decoded.self) }

    /// A metric of an `ExportMetricsServiceRequest`, as the decoder reads it.
    struct DecodedMetric: Decodable {
        struct Point: Decodable {
            var attributes: [String: String]
            var start: UInt64?
            var time: UInt64
            var value: Int?
            var count: UInt64?
            var sum: Double?
            var buckets: [UInt64]?
            var bounds: [Double]?
        }
        var name: String
        var description: String?
        var unit: String?
        var type: String
        var points: [Point]
        var temporality: Int?
        var monotonic: Bool?
    }

    /// A `LogRecord` of an `ExportLogsServiceRequest`, as the decoder reads it.
    struct DecodedLog: Decodable {
        var time: UInt64
        var severity: Int
        var severity_text: String
        var body: String
        var attributes: [String: Decoded.AttributeValue]
        var flags: UInt32?
        var trace_id: String?
        var span_id: String?
        var observed: UInt64
        /// The instrumentation scope's name.
        var scope: String?
    }

    /// The log records of all the exports, in order.
    static func decodeLogs(_ bodies: [Data]) throws -> [DecodedLog] {
        try decode(bodies, mode: ["logs"], as: [DecodedLog].self)
    }

    /// Each export's metrics.
    static func decodeMetrics(_ bodies: [Data]) throws -> [[DecodedMetric]] {
        try decode(bodies, mode: ["metrics"], as: [[DecodedMetric]].self)
    }

    /// Each image request is a trace: the caller's (its `traceparent`) or a new one with an X-Ray-style ID; a
    /// render's stages are spans under the request's; a 5xx is an error, a 4xx not; an unsampled caller's trace and
    /// the health check are not sent; the access log names the trace; the spans come as OTLP protobuf, with the
    /// resource the OTEL_* variables describe, and the last ones are sent when the server stops.
    @Test(.timeLimit(.minutes(1)))
    func imageRequestsAreTracedToACollector() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let jpeg = try ServerTestImages.jpeg()
        let fetches = Self.recording(
            origin, ["/a.jpg"], answer: .init(status: 200, headers: ["Content-Type": "image/jpeg"], body: jpeg))
        let collector = try LoopbackServer()
        defer { collector.stop() }
        let received = Self.recording(collector, ["/otlp/v1/traces"])
        let logExports = Self.recording(collector, ["/otlp/v1/logs"])
        let metricExports = Self.recording(collector, ["/otlp/v1/metrics"])
        let directory = ServeCommandTests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try await InProcessServe.start(
            [
                "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--cache-dir", directory.path, "--otel",
                "--otel-metrics", "--otel-logs", "--otel-logger-name", "thumbs-access",
            ],
            environment: [
                "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url(for: "/otlp/").absoluteString,
                "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=s%20ecret,x-team=images",
                "OTEL_EXPORTER_OTLP_LOGS_COMPRESSION": "gzip",
                "OTEL_SERVICE_NAME": "thumbs", "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=test",
            ])
        let client = TestHTTPClient()
        let base = "http://127.0.0.1:\(serve.port)/_/rs:fit:32:32/plain/"
        let image = URL(string: base + origin.url(for: "/a.jpg").absoluteString)!
        let callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
        let callerSpan = "00f067aa0ba902b7"
        let rendered = try await client.send(
            image, headers: ["traceparent": "00-\(callerTrace)-\(callerSpan)-01", "tracestate": "vendor=1"])
        #expect(rendered.status == 200)
        let before = Date().timeIntervalSince1970
        #expect(try await client.send(image).status == 200)  // from the output cache: a new trace
        let unsampled = "0af7651916cd43dd8448eb211c80319c"
        #expect(
            try await client.send(image, headers: ["traceparent": "00-\(unsampled)-b7ad6b7169203331-00"]).status == 200)
        #expect(try await client.send(URL(string: base + origin.url(for: "/none.jpg").absoluteString)!).status == 404)
        #expect(try await client.send(URL(string: base + "http://127.0.0.1:9/a.jpg")!).status == 502)
        #expect(try await client.send(URL(string: "http://127.0.0.1:\(serve.port)/healthz")!).status == 200)
        #expect(received.value.isEmpty, "batched: nothing sent before the schedule's 5 s or the stop")
        #expect(await serve.stop() == 0)

        let posts = received.value
        try #require(!posts.isEmpty)
        for post in posts {
            #expect(post.method == "POST" && post.headers["Content-Type"] == "application/x-protobuf")
            #expect(post.headers["x-api-key"] == "s ecret" && post.headers["x-team"] == "images")
        }
        let decoded = try Self.decode(posts.map(\.body))
        #expect(decoded.resources.allSatisfy { $0["service.name"] == .string("thumbs") })
        #expect(decoded.resources.allSatisfy { $0["deployment.environment"] == .string("test") })
        #expect(decoded.scopes.allSatisfy { $0["1"] == "imago" })
        let roots = decoded.spans.filter { $0.name == "/request" }
        try #require(roots.count == 4, "the rendered, cached, 404 and 502 requests: \(roots.map(\.trace_id))")
        #expect(!decoded.spans.contains { $0.trace_id == unsampled })
        #expect(roots.allSatisfy { $0.kind == 2 && $0.end >= $0.start && $0.flags == 1 })

        // The render, in the caller's trace, its stages under it
        let root = try #require(roots.first { $0.trace_id == callerTrace })
        #expect(root.parent_span_id == callerSpan && root.trace_state == "vendor=1")
        #expect(root.attributes["http.response.status_code"] == .number(200))
        #expect(root.attributes["http.request.method"] == .string("GET"))
        #expect(root.attributes["imago.options"] != nil && root.status == nil)
        let children = decoded.spans.filter { $0.trace_id == callerTrace && $0.span_id != root.span_id }
        let names = Set(children.map(\.name))
        for name in [
            "queue", "downloading_image", "processing_image", "decoding_image", "encoding_image", "storing_output",
        ] {
            #expect(names.contains(name), "\(name) in \(names.sorted())")
        }
        let processing = try #require(children.first { $0.name == "processing_image" })
        for child in children {
            let parent =
                ["decoding_image", "transforming_image", "encoding_image"].contains(child.name)
                ? processing.span_id : root.span_id
            #expect(child.parent_span_id == parent, "\(child.name)")
            #expect(child.kind == 1 && child.start >= root.start && child.end <= root.end + 1_000_000, "\(child.name)")
            #expect(child.trace_state == "vendor=1", "the trace's state is every span's")
        }
        #expect(Set(decoded.spans.map(\.span_id)).count == decoded.spans.count, "span IDs are distinct")

        // The cached answer: a new trace, an X-Ray ID (its first 4 bytes the time), no stages
        let cached = try #require(
            roots.first { (span: Decoded.Span) -> Bool in
                let ok: Bool = span.attributes["http.response.status_code"] == Decoded.AttributeValue.number(200)
                return span.trace_id != callerTrace && span.attributes["imago.cache"] != nil && ok
            })
        #expect(cached.parent_span_id == nil)
        let seconds = Double(UInt32(cached.trace_id.prefix(8), radix: 16) ?? 0)
        #expect(abs(seconds - before) < 60, "X-Ray: \(cached.trace_id)")
        #expect(decoded.spans.filter { $0.trace_id == cached.trace_id }.count == 1)

        // A 4xx is the client's: no error; a 5xx is one, with the error's sentence
        let missing = try #require(roots.first { $0.attributes["http.response.status_code"] == .number(404) })
        #expect(missing.status == nil)
        let failed = try #require(roots.first { $0.attributes["http.response.status_code"] == .number(502) })
        #expect(failed.status?.code == 2 && !(failed.status?.message ?? "").isEmpty)
        #expect(failed.attributes["error.type"] == .string("502"))

        // The access log names each image request's trace
        let lines = serve.output.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.contains("\"trace_id\":\"\(callerTrace)\"") == true)
        #expect(lines.first?.contains("\"span_id\":\"\(root.span_id)\"") == true)
        #expect(lines.last?.contains("trace_id") == false, "the health check is not traced")
        #expect(
            fetches.value.count == 1 && fetches.value[0].headers["traceparent"] == nil, "not passed on unless asked")

        // The metrics: one export at the stop (the interval is 10 s), the same families as /metrics
        try #require(metricExports.value.count == 1)
        #expect(metricExports.value[0].headers["x-api-key"] == "s ecret")
        let metrics = try #require(try Self.decodeMetrics(metricExports.value.map(\.body)).first)
        func metric(_ name: String) -> DecodedMetric? { metrics.first { $0.name == "imago_serve_" + name } }
        let requests = try #require(metric("requests_total"))
        #expect(requests.type == "sum" && requests.temporality == 2 && requests.monotonic == true)
        func requestCount(_ status: String) -> Int? {
            requests.points.first { $0.attributes["status"] == status }?.value
        }
        #expect(requestCount("200") == 4 && requestCount("404") == 1 && requestCount("502") == 1)
        #expect(requests.points.allSatisfy { ($0.start ?? 0) > 0 && ($0.start ?? 0) <= $0.time })
        #expect(metric("origin_fetches_total")?.points.first?.value == 1)
        #expect(metric("queue_length")?.type == "gauge" && metric("queue_length")?.points.first?.value == 0)
        let latency = try #require(metric("request_duration_seconds"))
        #expect(latency.type == "histogram" && latency.temporality == 2 && latency.unit == "s")
        let histogram = try #require(latency.points.first)
        #expect(histogram.count == 6 && histogram.buckets?.reduce(0, +) == 6)
        #expect(histogram.bounds == ServerMetrics.latencyBuckets && histogram.buckets?.count == 12)
        #expect((histogram.sum ?? 0) > 0)
        let stages = try #require(metric("render_stage_seconds"))
        #expect(Set(stages.points.compactMap { $0.attributes["stage"] }).isSuperset(of: ["queue", "fetch", "encode"]))

        // The access log's records as log entries, each with its trace: the same six lines, in order
        #expect(!logExports.value.isEmpty && logExports.value.allSatisfy { $0.headers["x-team"] == "images" })
        #expect(
            logExports.value.allSatisfy {
                $0.headers["Content-Encoding"] == "gzip" && $0.body.starts(with: [0x1F, 0x8B])
            }, "OTEL_EXPORTER_OTLP_LOGS_COMPRESSION=gzip")
        #expect(posts.allSatisfy { $0.headers["Content-Encoding"] == nil }, "the traces' own setting: none")
        let all = try Self.decodeLogs(logExports.value.map(\.body))
        // The server's own lines (imgproxy sends its own log lines too): where it listened and sent, its stop
        let server = all.filter { $0.attributes["imago.log"] == .string("server") }
        #expect(
            server.contains { $0.body.hasPrefix("imago serve: listening on http://127.0.0.1:") && $0.severity == 9 })
        #expect(server.contains { $0.body.hasPrefix("imago serve: otel: access log records to http://127.0.0.1:") })
        #expect(server.contains { $0.body.hasPrefix("imago serve: stopping;") && $0.trace_id == nil })
        #expect(all.allSatisfy { $0.scope == "thumbs-access" })
        let entries = all.filter { $0.attributes["imago.log"] == nil }
        try #require(entries.count == 6)
        #expect(entries.map(\.severity) == [9, 9, 9, 13, 17, 9])
        #expect(entries.allSatisfy { $0.scope == "thumbs-access" }, "--otel-logger-name")
        #expect(entries.map(\.severity_text) == ["INFO", "INFO", "INFO", "WARN", "ERROR", "INFO"])
        #expect(
            entries.map { $0.attributes["http.response.status_code"] }
                == [200, 200, 200, 404, 502, 200].map { Decoded.AttributeValue.number(Double($0)) })
        #expect(entries[0].trace_id == callerTrace && entries[0].span_id == root.span_id && entries[0].flags == 1)
        #expect(entries[2].trace_id == unsampled && entries[2].flags == 0, "an unsampled trace is still named")
        #expect(entries[5].trace_id == nil && entries[5].attributes["http.route"] == .string("healthz"))
        #expect(entries[4].attributes["error.message"] != nil)
        let statuses = [200, 200, 200, 404, 502, 200]
        for (i, line) in serve.output.stdout.split(separator: "\n").enumerated() where i < entries.count {
            #expect(line.contains("\"status\":\(statuses[i])"), "the log line and the entry are the same record")
            #expect(entries[i].body.contains("GET \(statuses[i])") && entries[i].time <= entries[i].observed)
        }
    }

    /// imgproxy's `IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL`: the origin's fetch carries the request's trace,
    /// the request's span its parent, so the origin's own spans join it.
    @Test(.timeLimit(.minutes(1)))
    func sourcesJoinTheTraceWhenAsked() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let jpeg = try ServerTestImages.jpeg()
        let fetches = Self.recording(
            origin, ["/a.jpg", "/b.jpg"],
            answer: .init(status: 200, headers: ["Content-Type": "image/jpeg"], body: jpeg))
        let collector = try LoopbackServer()
        defer { collector.stop() }
        collector.setRoute("/v1/traces", .bytes(Data(), contentType: "application/x-protobuf"))
        let directory = ServeCommandTests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try await InProcessServe.start([
            "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--cache-dir", directory.path, "--otel",
            "--otel-endpoint", collector.url(for: "/v1/traces").absoluteString, "--otel-propagate-external",
        ])
        let client = TestHTTPClient()
        let base = "http://127.0.0.1:\(serve.port)/_/"
        let (a, b) = (origin.url(for: "/a.jpg").absoluteString, origin.url(for: "/b.jpg").absoluteString)
        let caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        #expect(
            try await client.send(URL(string: base + "rs:fit:32:32/plain/" + a)!, headers: ["traceparent": caller])
                .status == 200)
        #expect(try await client.send(URL(string: base + "rs:fit:16:16/plain/" + b)!).status == 200)
        #expect(await serve.stop() == 0)
        let lines = serve.output.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 2 && fetches.value.count == 2)
        func field(_ name: String, in line: String) -> String? {
            guard let range = line.range(of: "\"\(name)\":\"") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        }
        let sent = fetches.value.compactMap { $0.headers["traceparent"] }
        #expect(sent.count == 2)
        #expect(sent.first == "00-4bf92f3577b34da6a3ce929d0e0e4736-\(field("span_id", in: lines[0]) ?? "?")-01")
        let own = try #require(field("trace_id", in: lines[1]))
        #expect(own != "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(
            sent.last == "00-\(own)-\(field("span_id", in: lines[1]) ?? "?")-01", "a new trace's root is the parent")
    }

    /// `OTEL_PROPAGATORS` beyond Trace Context: a caller's X-Ray context is read, and the origin's fetch carries
    /// the request's context in every format listed, and the caller's baggage.
    @Test(.timeLimit(.minutes(1)))
    func sourcesGetTheTraceInEachPropagatorsFormat() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let fetches = Self.recording(
            origin, ["/a.jpg"],
            answer: .init(status: 200, headers: ["Content-Type": "image/jpeg"], body: try ServerTestImages.jpeg()))
        let collector = try LoopbackServer()
        defer { collector.stop() }
        collector.setRoute("/v1/traces", .bytes(Data(), contentType: "application/x-protobuf"))
        let directory = ServeCommandTests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try await InProcessServe.start(
            [
                "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--cache-dir", directory.path, "--otel",
                "--otel-endpoint", collector.url(for: "/").absoluteString, "--otel-propagate-external",
            ],
            environment: ["OTEL_PROPAGATORS": "tracecontext,baggage,b3multi,jaeger,xray"])
        let image = "http://127.0.0.1:\(serve.port)/_/rs:fit:32:32/plain/" + origin.url(for: "/a.jpg").absoluteString
        let caller = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
        #expect(
            try await TestHTTPClient().send(
                URL(string: image)!, headers: ["X-Amzn-Trace-Id": caller, "baggage": "team=images"]
            ).status == 200)
        #expect(await serve.stop() == 0)
        let fetch = try #require(fetches.value.first)
        let line = serve.output.stdout
        let spanID = try #require(line.range(of: "\"span_id\":\"").map { String(line[$0.upperBound...].prefix(16)) })
        #expect(line.contains("\"trace_id\":\"5759e988bd862e3fe1be46a994272793\""))
        let trace = "5759e988bd862e3fe1be46a994272793"
        #expect(fetch.headers["traceparent"] == "00-\(trace)-\(spanID)-01")
        #expect(fetch.headers["X-B3-TraceId"] == trace && fetch.headers["X-B3-SpanId"] == spanID)
        #expect(fetch.headers["X-B3-Sampled"] == "1")
        #expect(fetch.headers["uber-trace-id"] == "\(trace):\(spanID):0:1")
        #expect(
            fetch.headers["X-Amzn-Trace-Id"] == "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=\(spanID);Sampled=1")
        #expect(fetch.headers["baggage"] == "team=images")
    }

    /// W3C Trace Context's `traceparent`: version 00 exactly, later versions by their first four fields, never
    /// `ff`, never an all-zero ID, lowercase hex only.
    @Test func traceparentFieldsAreReadAsW3CTraceContextSays() throws {
        let parent = try #require(
            TraceContext.Parent(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
        #expect(parent.traceID.description == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(parent.spanID.description == "00f067aa0ba902b7" && parent.isSampled == true)
        #expect(
            TraceContext.Parent(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.isSampled
                == false)
        #expect(
            TraceContext.Parent(traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later") != nil)
        for bad in [
            "", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
            "00-+bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            #expect(TraceContext.Parent(traceparent: bad) == nil, "\(bad)")
        }
        let request = ServerRequest(
            method: "GET", path: "/x",
            headers: ["traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"])
        #expect(RequestTracing().context(for: request, at: Date()).traceID == parent.traceID)
        let deaf = RequestTracing(propagators: []).context(for: request, at: Date())
        #expect(deaf.traceID != parent.traceID && deaf.parentSpanID == nil)
        let context = TraceContext(
            traceID: parent.traceID, spanID: try #require(TraceSpan.SpanID(0xabc)), parentSpanID: nil, traceState: "",
            isSampled: true)
        #expect(context.traceparent == "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000abc-01")
    }

    /// The other formats of OpenTelemetry's propagators, each read as its SDKs read it (IDs padded where the format
    /// allows shorter ones, a deferred sampling decision left to the sampler) and written so that reading it back
    /// gives the same context; the last format listed that finds a context wins.
    @Test func otherPropagatorsReadAndWriteTheirFormats() throws {
        let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
        let span = "00f067aa0ba902b7"
        func parent(_ propagator: TracePropagator, _ headers: [String: String]) -> TraceContext.Parent? {
            propagator.parent(in: Dictionary(uniqueKeysWithValues: headers.map { ($0.key.lowercased(), $0.value) }))
        }
        func expect(
            _ found: TraceContext.Parent?, trace expectedTrace: String = trace, sampled: Bool?,
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            #expect(found?.traceID.description == expectedTrace, sourceLocation: sourceLocation)
            #expect(found?.spanID.description == span, sourceLocation: sourceLocation)
            #expect(found?.isSampled == sampled, sourceLocation: sourceLocation)
        }
        // B3, one field and several; either propagator reads both
        expect(parent(.b3, ["b3": "\(trace)-\(span)-1"]), sampled: true)
        expect(parent(.b3, ["b3": "\(trace)-\(span)-d-0000000000000001"]), sampled: true)
        expect(
            parent(.b3Multi, ["b3": "a3ce929d0e0e4736-\(span)"]), trace: "0000000000000000a3ce929d0e0e4736",
            sampled: nil)
        expect(parent(.b3, ["X-B3-TraceId": trace, "X-B3-SpanId": span, "X-B3-Sampled": "0"]), sampled: false)
        expect(parent(.b3Multi, ["X-B3-TraceId": trace, "X-B3-SpanId": span, "X-B3-Flags": "1"]), sampled: true)
        for bad in [
            "1", "0", "\(trace)-\(span)-x", "\(trace)", "\(trace.dropLast())-\(span)-1", "\(trace)-\(span)-1-zz",
        ] {
            #expect(parent(.b3, ["b3": bad]) == nil, "\(bad)")
        }
        // Jaeger: percent-encoded or not, short IDs padded, flags 1 (sampled) or 2 (debug)
        expect(parent(.jaeger, ["uber-trace-id": "\(trace):\(span):0:1"]), sampled: true)
        expect(parent(.jaeger, ["uber-trace-id": "\(trace)%3A\(span)%3A0%3A2"]), sampled: true)
        expect(
            parent(.jaeger, ["uber-trace-id": "abc:f067aa0ba902b7:0:0"]), trace: "00000000000000000000000000000abc",
            sampled: false)
        #expect(parent(.jaeger, ["uber-trace-id": "\(trace):\(span):0"]) == nil)
        #expect(parent(.jaeger, ["uber-trace-id": "0:\(span):0:1"]) == nil, "a zero trace ID")
        // X-Ray: Root's epoch and random part, other keys ignored, Sampled=? left to the sampler
        let root = "Root=1-\(trace.prefix(8))-\(trace.dropFirst(8))"
        expect(parent(.xray, ["X-Amzn-Trace-Id": "\(root);Parent=\(span);Sampled=1"]), sampled: true)
        expect(parent(.xray, ["X-Amzn-Trace-Id": "Self=1-x; \(root); Parent=\(span); Lineage=a:1"]), sampled: nil)
        expect(parent(.xray, ["X-Amzn-Trace-Id": "\(root);Parent=\(span);Sampled=?"]), sampled: nil)
        #expect(parent(.xray, ["X-Amzn-Trace-Id": root]) == nil, "no parent")
        #expect(
            parent(.xray, ["X-Amzn-Trace-Id": "Root=2-\(trace.prefix(8))-\(trace.dropFirst(8));Parent=\(span)"]) == nil)
        // OpenTracing: 16 or 32 digits
        expect(
            parent(.otTrace, ["ot-tracer-traceid": trace, "ot-tracer-spanid": span, "ot-tracer-sampled": "true"]),
            sampled: true)
        #expect(parent(.otTrace, ["ot-tracer-traceid": trace]) == nil)

        // Written, then read back
        let context = TraceContext(
            traceID: try #require(TraceSpan.TraceID(hex: trace)), spanID: try #require(TraceSpan.SpanID(hex: span)),
            parentSpanID: nil, traceState: "", isSampled: true, baggage: "team=images")
        for propagator in TracePropagator.allCases where propagator != .baggage {
            let fields = Dictionary(uniqueKeysWithValues: propagator.fields(for: context).map { ($0.name, $0.value) })
            let back = parent(propagator, fields)
            let expectedTrace = propagator == .otTrace ? "0000000000000000" + trace.suffix(16) : trace
            expect(back, trace: expectedTrace, sampled: true)
        }
        #expect(TracePropagator.xray.fields(for: context).first?.value == "\(root);Parent=\(span);Sampled=1")
        #expect(TracePropagator.b3.fields(for: context).map(\.value) == ["\(trace)-\(span)-1"])
        #expect(TracePropagator.baggage.fields(for: context).map(\.value) == ["team=images"])

        // The last format listed that finds a context wins; a deferred decision goes to the root sampler
        let request = ServerRequest(
            method: "GET", path: "/x",
            headers: [
                "traceparent": "00-\(trace)-\(span)-01",
                "X-Amzn-Trace-Id": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=\(span)",
                "baggage": "k=v",
            ])
        let both = RequestTracing(sampler: .parentBased(root: .never), propagators: [.traceContext, .xray, .baggage])
        let found = both.context(for: request, at: Date())
        #expect(found.traceID.description == "5759e988bd862e3fe1be46a994272793" && found.baggage == "k=v")
        #expect(!found.isSampled, "Sampled missing: the root sampler (never) decides")
        let first = RequestTracing(propagators: [.xray, .traceContext]).context(for: request, at: Date())
        #expect(first.traceID.description == trace && first.isSampled && first.baggage.isEmpty)
    }

    /// OTEL_TRACES_SAMPLER's samplers: by the caller's flag when parent-based, else by the trace ID's fraction,
    /// the same ID always decided the same way.
    @Test func samplersDecideAsOpenTelemetrysDo() throws {
        let ids = (0..<2_000).map { _ in TraceSpan.TraceID.random() }
        let tenth = ids.filter { RequestTracing.Sampler.ratio(0.1).samples($0, parentSampled: nil) }.count
        #expect((120...280).contains(tenth), "about 10 % of 2,000: \(tenth)")
        #expect(ids.allSatisfy { RequestTracing.Sampler.ratio(1).samples($0, parentSampled: nil) })
        #expect(!ids.contains { RequestTracing.Sampler.ratio(0).samples($0, parentSampled: nil) })
        let low = try #require(TraceSpan.TraceID(high: 1, low: 0x0FFF_FFFF_FFFF_FFFF))
        #expect(RequestTracing.Sampler.ratio(0.25).samples(low, parentSampled: nil))  // (low >> 1) < 2^61
        let high = try #require(TraceSpan.TraceID(high: 1, low: 0xF000_0000_0000_0000))
        #expect(!RequestTracing.Sampler.ratio(0.25).samples(high, parentSampled: nil))
        let parentBased = RequestTracing.Sampler.parentBased(root: .never)
        #expect(parentBased.samples(high, parentSampled: true) && !parentBased.samples(high, parentSampled: false))
        #expect(!parentBased.samples(high, parentSampled: nil))
        #expect(try OpenTelemetryOptions.sampler(nil, argument: nil) == .parentBased(root: .always))
        #expect(
            try OpenTelemetryOptions.sampler("parentbased_traceidratio", argument: "0.5")
                == .parentBased(root: .ratio(0.5)))
        #expect(throws: UsageError.self) { try OpenTelemetryOptions.sampler("traceidratio", argument: "2") }
        #expect(throws: UsageError.self) { try OpenTelemetryOptions.sampler("jaeger_remote", argument: nil) }
    }

    /// The settings as OpenTelemetry's SDKs read them: each signal's endpoint from `--otel-endpoint` or the
    /// general variable (its own variable taken as it is), the protocol http/protobuf or gRPC, headers
    /// percent-decoded and never echoed in an error, `OTEL_SDK_DISABLED`.
    @Test func openTelemetrySettingsComeFromItsVariables() throws {
        func parse(_ arguments: [String], _ environment: [String: String]) throws -> OpenTelemetryOptions {
            try OpenTelemetryOptions(
                parsing: try parseArguments(arguments, options: OpenTelemetryOptions.specs), environment: environment)
        }
        #expect(try parse([], [:]).traces == nil)
        #expect(throws: UsageError.self) { try parse(["--otel-endpoint", "http://c:4318"], [:]) }
        #expect(throws: UsageError.self) { try parse(["--otel-metrics"], [:]) }
        let defaults = try parse(["--otel"], [:])
        let traces = try #require(defaults.traces)
        #expect(defaults.metrics == nil)
        #expect(traces.exporter.endpoint.url.absoluteString == "http://localhost:4318/v1/traces")
        #expect(traces.tracing.timestampedTraceIDs && traces.exporter.endpoint.timeout == .seconds(10))
        #expect(traces.exporter.resource.contains(.init("service.name", .string("imago"))))
        let general = try parse(
            ["--otel", "--otel-metrics"], ["OTEL_EXPORTER_OTLP_ENDPOINT": "https://c.example:4318/"])
        #expect(general.traces?.exporter.endpoint.url.absoluteString == "https://c.example:4318/v1/traces")
        #expect(general.metrics?.endpoint.url.absoluteString == "https://c.example:4318/v1/metrics")
        #expect(general.metrics?.interval == .seconds(10))
        let given = try parse(
            ["--otel", "--otel-metrics", "--otel-endpoint", "http://collector:4318"],
            ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://t.example/x", "OTEL_METRIC_EXPORT_INTERVAL": "2500"])
        #expect(given.traces?.exporter.endpoint.url.absoluteString == "http://collector:4318/v1/traces")
        #expect(given.metrics?.endpoint.url.absoluteString == "http://collector:4318/v1/metrics")
        #expect(given.metrics?.interval == .milliseconds(2_500))
        let own = try parse(
            ["--otel", "--otel-metrics", "--otel-trace-id-generator", "random"],
            [
                "OTEL_EXPORTER_OTLP_ENDPOINT": "https://c.example:4318",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://t.example/x",
                "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "2500",
                "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "api-key=m", "OTEL_EXPORTER_OTLP_HEADERS": "api-key=all",
                "OTEL_BSP_MAX_QUEUE_SIZE": "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "500",
                "OTEL_RESOURCE_ATTRIBUTES": "service.name=from-attributes",
            ])
        let ownTraces = try #require(own.traces)
        #expect(ownTraces.exporter.endpoint.url.absoluteString == "https://t.example/x")
        #expect(!ownTraces.tracing.timestampedTraceIDs && ownTraces.exporter.endpoint.timeout == .milliseconds(2_500))
        #expect(ownTraces.exporter.maximumBatchSize == 100)
        #expect(
            ownTraces.exporter.endpoint.headers == ["api-key": "all"]
                && own.metrics?.endpoint.headers == ["api-key": "m"])
        #expect(own.metrics?.endpoint.timeout == .seconds(10))
        #expect(ownTraces.exporter.resource.contains(.init("service.name", .string("from-attributes"))))
        #expect(try parse(["--otel"], ["OTEL_SDK_DISABLED": "true"]).traces == nil)
        #expect(throws: UsageError.self) { try parse(["--otel-logs"], [:]) }
        let logs = try #require(try parse(["--otel", "--otel-logs"], ["OTEL_BLRP_MAX_QUEUE_SIZE": "64"]).logs)
        #expect(logs.exporter.endpoint.url.absoluteString == "http://localhost:4318/v1/logs" && logs.least == nil)
        #expect(logs.exporter.scheduleDelay == .seconds(1) && logs.exporter.maximumQueueSize == 64)
        #expect(try parse(["--otel", "--otel-logs"], ["OTEL_LOG_LEVEL": "WARN"]).logs?.least == .warn)
        #expect(throws: UsageError.self) { try parse(["--otel", "--otel-logs"], ["OTEL_LOG_LEVEL": "loud"]) }
        #expect(traces.tracing.propagators == [.traceContext, .baggage])
        #expect(
            try parse(["--otel"], ["OTEL_PROPAGATORS": "B3multi, xray,jaeger,xray"]).traces?.tracing.propagators
                == [.b3Multi, .xray, .jaeger])
        let none = try parse(["--otel", "--otel-propagate-external"], ["OTEL_PROPAGATORS": "none"]).traces?.tracing
        #expect(none?.propagators == [])
        #expect(throws: UsageError.self) { try parse(["--otel"], ["OTEL_PROPAGATORS": "tracecontext,zipkin"]) }
        let compressed = try parse(
            ["--otel", "--otel-metrics"],
            ["OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION": "none"])
        #expect(compressed.traces?.exporter.endpoint.compression == .gzip)
        #expect(compressed.metrics?.endpoint.compression == OTLPEndpoint.Compression.none)
        #expect(defaults.traces?.exporter.endpoint.compression == OTLPEndpoint.Compression.none)
        #expect(throws: UsageError.self) { try parse(["--otel"], ["OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"]) }
        #expect(throws: UsageError.self) { try parse(["--otel"], ["OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"]) }
        #expect(throws: UsageError.self) {
            try parse(["--otel", "--otel-metrics"], ["OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/json"])
        }
        #expect(try parse(["--otel"], ["OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "json"]).traces != nil, "metrics off")

        // gRPC: the signal's method at the endpoint's host and port (its path ignored), 4317 by default; a
        // host:port without a scheme over TLS unless the exporter is insecure
        let grpcDefaults = try parse(
            ["--otel", "--otel-metrics", "--otel-logs"], ["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"])
        let method = "opentelemetry.proto.collector.%@.v1.%@Service/Export"
        for (endpoint, signal, service) in [
            (grpcDefaults.traces?.exporter.endpoint, "trace", "Trace"),
            (grpcDefaults.metrics?.endpoint, "metrics", "Metrics"),
            (grpcDefaults.logs?.exporter.endpoint, "logs", "Logs"),
        ] {
            #expect(endpoint?.transport == .grpc)
            #expect(
                endpoint?.url.absoluteString
                    == "http://localhost:4317/" + String(format: method, signal, service))
        }
        let grpcGiven = try parse(
            ["--otel", "--otel-metrics"],
            [
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc",
                "OTEL_EXPORTER_OTLP_ENDPOINT": "https://c.example:4317/x/",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_TRACES_INSECURE": "true",
            ])
        #expect(
            grpcGiven.traces?.exporter.endpoint.url.absoluteString
                == "http://collector:4317/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        #expect(grpcGiven.metrics?.endpoint.url.absoluteString == "https://c.example:4317/x/v1/metrics")
        #expect(grpcGiven.metrics?.endpoint.transport == .httpProtobuf, "the protocol is the signal's")
        let secure = try parse(
            ["--otel"], ["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317"])
        #expect(secure.traces?.exporter.endpoint.url.absoluteString.hasPrefix("https://collector:4317/") == true)
        do {
            _ = try parse(["--otel"], ["OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer s3cret,broken"])
            Issue.record("a pair without = is refused")
        } catch let error as UsageError {
            #expect(!error.description.contains("s3cret") && error.description.contains("pair 2"))
        }
        #expect(throws: UsageError.self) { try parse(["--otel", "--otel-endpoint", "ftp://c/"], [:]) }
        #expect(throws: UsageError.self) { try parse(["--otel", "--otel-trace-id-generator", "uuid"], [:]) }
    }

    /// The exporter never holds up its caller: beyond the queue's room spans are dropped and counted; a
    /// collector that fails is retried once and counted; a batch goes as soon as it is full.
    @Test(.timeLimit(.minutes(1)))
    func theExporterIsBoundedAndCountsWhatItLoses() async throws {
        let collector = try LoopbackServer()
        defer { collector.stop() }
        let attempts = Locked(0)
        collector.setRoute(
            "/v1/traces",
            .handler { _ in
                attempts.withLock { $0 += 1 }
                return LoopbackServer.Response(status: 503, body: Data())
            })
        collector.setRoute("/ok/v1/traces", .bytes(Data(), contentType: "application/x-protobuf"))
        func spans(_ count: Int) -> [TraceSpan] {
            (0..<count).map { _ in
                TraceSpan(
                    traceID: .random(), spanID: .random(), name: "s", kind: .internal, start: Date(), end: Date())
            }
        }
        // Full batches go at once, well before the schedule's hour
        let prompt = OTLPTraceExporter(
            configuration: .init(
                endpoint: OTLPEndpoint(url: collector.url(for: "/ok/v1/traces")), scheduleDelay: .seconds(3_600),
                maximumQueueSize: 10,
                maximumBatchSize: 4))
        prompt.submit(spans(4))
        #expect(await ImagoTesting.eventually { prompt.exportedCount == 4 })
        prompt.submit(spans(15))
        #expect(prompt.droppedCount >= 5, "10 held at most: \(prompt.droppedCount)")
        await prompt.shutdown()
        #expect(prompt.exportedCount + prompt.droppedCount == 19 && prompt.failedCount == 0)
        prompt.submit(spans(1))
        #expect(prompt.droppedCount + prompt.exportedCount == 20, "after shutdown, dropped")
        var unsampled = spans(1)[0]
        unsampled.isSampled = false
        let before = prompt.droppedCount
        prompt.submit([unsampled])
        #expect(prompt.droppedCount == before, "unsampled spans are not exported nor counted")

        // A collector answering 503: two attempts, then the spans are counted as failed and told once
        let (failing, told) = Self.telling(OTLPEndpoint(url: collector.url(for: "/v1/traces")))
        failing.submit(spans(3))
        await failing.shutdown()
        #expect(attempts.value == 2 && failing.failedCount == 3 && failing.exportedCount == 0)
        #expect(told.value.count == 1 && told.value[0].contains("503"), "\(told.value)")

        // A partial success (ExportTraceServiceResponse { partial_success { rejected_spans: 2, error_message } }):
        // one attempt, two spans failed and told with the collector's message
        var answer = ProtobufWriter()
        answer.message(1) {
            $0.signed(1, 2)
            $0.string(2, "2 spans had no name")
        }
        let partialAttempts = Self.recording(
            collector, ["/partial/v1/traces"],
            answer: .init(
                status: 200, headers: ["Content-Type": "application/x-protobuf"], body: Data(answer.bytes)))
        let (partly, toldPartly) = Self.telling(OTLPEndpoint(url: collector.url(for: "/partial/v1/traces")))
        partly.submit(spans(3))
        await partly.shutdown()
        #expect(partialAttempts.value.count == 1 && partly.exportedCount == 1 && partly.failedCount == 2)
        #expect(toldPartly.value == ["2 span(s) rejected by the collector: 2 spans had no name"])
        // The same bytes as text: not read as a partial success
        collector.setRoute("/text/v1/traces", .bytes(Data(answer.bytes), contentType: "text/plain"))
        let plain = OTLPTraceExporter(
            configuration: .init(endpoint: OTLPEndpoint(url: collector.url(for: "/text/v1/traces"))))
        plain.submit(spans(3))
        await plain.shutdown()
        #expect(plain.exportedCount == 3 && plain.failedCount == 0)

        // A collector that takes the connection and never answers: the stop waits no longer than it is given, and
        // what the sender had not begun is dropped
        let stalled = "/stalled/v1/traces"
        Self.stall(collector, stalled)
        defer { collector.resume(stalled) }
        let stuck = OTLPTraceExporter(
            configuration: .init(endpoint: OTLPEndpoint(url: collector.url(for: stalled)), maximumBatchSize: 2))
        stuck.submit(spans(5))
        #expect(await ImagoTesting.eventually { collector.suspendedRequestCount(for: stalled) == 1 })
        let clock = ContinuousClock()
        let began = clock.now
        #expect(await stuck.shutdown(within: .milliseconds(300)) == false)
        #expect(clock.now - began < .seconds(2))
        #expect(stuck.droppedCount == 3 && stuck.exportedCount == 0, "the batch in flight is not counted yet")
    }

    /// The metric exporter sends on its interval and once more when it stops, each time what `read` says then;
    /// a failing collector is told once and counted, and the next export carries the totals.
    @Test(.timeLimit(.minutes(1)))
    func theMetricExporterSendsOnItsIntervalAndAtTheStop() async throws {
        let collector = try LoopbackServer()
        defer { collector.stop() }
        let received = Self.recording(collector, ["/v1/metrics"])
        collector.setRoute("/down/v1/metrics", .status(400))
        let reads = Locked(0)
        let exporter = OTLPMetricExporter(
            configuration: .init(
                endpoint: OTLPEndpoint(url: collector.url(for: "/v1/metrics")), interval: .milliseconds(100))
        ) {
            let count = reads.withLock { count -> Int in
                count += 1
                return count
            }
            return [
                MetricFamily(
                    name: "reads_total", kind: .counter, help: "Reads.", samples: [.init(value: .integer(count))])
            ]
        }
        #expect(await ImagoTesting.eventually { exporter.exportedCount >= 2 })
        await exporter.shutdown()
        let sent = try Self.decodeMetrics(received.value.map(\.body))
        let values = sent.compactMap { $0.first?.points.first?.value }
        #expect(values.count == exporter.exportedCount && values == Array(1...values.count), "\(values)")
        let after = received.value.count
        try await Task.sleep(for: .milliseconds(300))
        #expect(received.value.count == after, "stopped")

        let told = Locked<[String]>([])
        let failing = OTLPMetricExporter(
            configuration: .init(
                endpoint: OTLPEndpoint(url: collector.url(for: "/down/v1/metrics")), interval: .seconds(3_600)),
            onFailure: { message in told.withLock { $0.append(message) } }
        ) { [] }
        await failing.export()
        await failing.shutdown()
        #expect(failing.failedCount == 2 && failing.exportedCount == 0)
        #expect(told.value.count == 1 && told.value[0].contains("400"), "\(told.value)")

        // A collector that never answers: the last export is waited for no longer than the stop is given
        let stalled = "/stalled/v1/metrics"
        Self.stall(collector, stalled)
        defer { collector.resume(stalled) }
        let stuck = OTLPMetricExporter(
            configuration: .init(endpoint: OTLPEndpoint(url: collector.url(for: stalled)), interval: .seconds(3_600))
        ) { [] }
        let clock = ContinuousClock()
        let began = clock.now
        #expect(await stuck.shutdown(within: .milliseconds(300)) == false)
        #expect(clock.now - began < .seconds(2) && collector.suspendedRequestCount(for: stalled) == 1)
    }

    /// A collector behind mutual TLS (nginx asking for a client certificate of its own CA): exports go with the
    /// collector's CA and the client certificate (`OTEL_EXPORTER_OTLP_CERTIFICATE`, `…_CLIENT_CERTIFICATE`,
    /// `…_CLIENT_KEY`, or imgproxy's PEM text), and fail, counted, without the certificate or without the CA.
    @Test(.timeLimit(.minutes(1)))
    func exportsGoOverMutualTLS() async throws {
        let root = ServeCommandTests.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let nginx = try NginxServer(root: root)
        defer { nginx.stop() }
        let url = nginx.mutualTLSURL.appendingPathComponent("v1/traces")
        func exporter(_ tls: CurlDataLoader.TLSOptions) -> OTLPTraceExporter {
            OTLPTraceExporter(configuration: .init(endpoint: OTLPEndpoint(url: url, tls: tls)))
        }
        let span = TraceSpan(
            traceID: .random(), spanID: .random(), name: "s", kind: .internal, start: Date(), end: Date())
        var tls = CurlDataLoader.TLSOptions()
        tls.caBundlePath = nginx.certificatePath
        tls.clientCertificatePath = nginx.clientCertificatePath
        tls.clientKeyPath = nginx.clientKeyPath
        let trusted = exporter(tls)
        trusted.submit([span])
        await trusted.shutdown()
        #expect(trusted.exportedCount == 1 && trusted.failedCount == 0)
        let port = nginx.mutualTLSURL.port ?? 0
        // (nginx writes its access line after the answer: waited for, not read at once.)
        #expect(
            await ImagoTesting.eventually {
                nginx.accessLog.contains { $0.hasSuffix("\(port) POST /v1/traces HTTP/1.1 200") }
            }, "\(nginx.accessLog)")

        var anonymous = tls
        anonymous.clientCertificatePath = nil
        anonymous.clientKeyPath = nil
        var untrusting = tls
        untrusting.caBundlePath = nil
        for options in [anonymous, untrusting] {
            let refused = exporter(options)
            refused.submit([span])
            await refused.shutdown()
            #expect(refused.exportedCount == 0 && refused.failedCount == 1)
        }

        // The variables, files checked at start
        func parse(_ environment: [String: String]) throws -> OpenTelemetryOptions {
            try OpenTelemetryOptions(
                parsing: try parseArguments(["--otel", "--otel-logs"], options: OpenTelemetryOptions.specs),
                environment: environment)
        }
        let parsed = try parse([
            "OTEL_EXPORTER_OTLP_CERTIFICATE": nginx.certificatePath,
            "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": nginx.clientCertificatePath,
            "OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY": nginx.clientKeyPath,
        ])
        #expect(parsed.traces?.exporter.endpoint.tls.clientCertificatePath == nginx.clientCertificatePath)
        #expect(parsed.traces?.exporter.endpoint.tls.clientKeyPath == nil)
        #expect(parsed.logs?.exporter.endpoint.tls.clientKeyPath == nginx.clientKeyPath)
        #expect(parsed.logs?.exporter.endpoint.tls.caBundlePath == nginx.certificatePath)
        #expect(throws: UsageError.self) { try parse(["OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"]) }
        #expect(throws: UsageError.self) { try parse(["OTEL_EXPORTER_OTLP_CLIENT_KEY": nginx.clientKeyPath]) }

        // imgproxy's PEM text (IMGPROXY_OPEN_TELEMETRY_SERVER_CERT…, here IMAGO_OTEL_SERVER_CERT…), line breaks
        // written as \n: the same exchange succeeds; half a pair, text that is not PEM, or text beside a file, are
        // refused at start
        func text(_ path: String) throws -> String {
            try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: "\n", with: "\\n")
        }
        func parsePEM(_ variables: [String: String]) throws -> OpenTelemetryOptions {
            try OpenTelemetryOptions(
                parsing: try parseArguments(["--otel"], options: OpenTelemetryOptions.specs).fillingIn(
                    from: variables, prefix: "IMAGO_", options: OpenTelemetryOptions.specs),
                environment: variables)
        }
        let pemParsed = try parsePEM([
            "IMAGO_OTEL_SERVER_CERT": try text(nginx.certificatePath),
            "IMAGO_OTEL_CLIENT_CERT": try text(nginx.clientCertificatePath),
            "IMAGO_OTEL_CLIENT_KEY": try String(contentsOfFile: nginx.clientKeyPath, encoding: .utf8),
        ])
        let pemTLS = try #require(pemParsed.traces?.exporter.endpoint.tls)
        #expect(pemTLS.caBundlePEM == (try String(contentsOfFile: nginx.certificatePath, encoding: .utf8)))
        let fromText = exporter(pemTLS)
        fromText.submit([span])
        await fromText.shutdown()
        #expect(fromText.exportedCount == 1 && fromText.failedCount == 0)
        var withoutKey = pemTLS
        withoutKey.clientKeyPEM = nil
        let halfPair = exporter(withoutKey)
        halfPair.submit([span])
        await halfPair.shutdown()
        #expect(halfPair.exportedCount == 0 && halfPair.failedCount == 1)
        #expect(throws: UsageError.self) {
            try parsePEM(["IMAGO_OTEL_CLIENT_CERT": try text(nginx.clientCertificatePath)])
        }
        #expect(throws: UsageError.self) { try parsePEM(["IMAGO_OTEL_SERVER_CERT": "not a certificate"]) }
        #expect(throws: UsageError.self) {
            try parsePEM([
                "IMAGO_OTEL_SERVER_CERT": try text(nginx.certificatePath),
                "OTEL_EXPORTER_OTLP_CERTIFICATE": nginx.certificatePath,
            ])
        }
    }

    /// OTLP over gRPC, against Python's gRPC server (an independent HTTP/2 and gRPC): each signal's export is a
    /// unary call of its service's method with the header fields as metadata and the timeout as the deadline, its
    /// message the same bytes as over HTTP; `UNAVAILABLE` is retried once, `INVALID_ARGUMENT` is not, and a failure
    /// is told with the status's name and message.
    @Test(.timeLimit(.minutes(1)))
    func exportsGoOverGRPC() async throws {
        let collector = try GRPCCollector(statuses: [14, 0, 3, -5, 0, 0, -2])
        defer { collector.stop() }
        func endpoint(_ signal: OTLPSignal) -> OTLPEndpoint {
            var endpoint = OTLPEndpoint(collector: collector.url, signal: signal, transport: .grpc)
            endpoint.headers = ["x-api-key": "s ecret"]
            endpoint.timeout = .seconds(7)
            return endpoint
        }
        let spans = (0..<3).map { index in
            TraceSpan(
                traceID: .random(), spanID: .random(), name: "span \(index)", kind: .internal, start: Date(),
                end: Date())
        }
        // UNAVAILABLE, then OK: two calls with the same message
        let traces = OTLPTraceExporter(configuration: .init(endpoint: endpoint(.traces)))
        traces.submit(spans)
        await traces.shutdown()
        #expect(traces.exportedCount == 3 && traces.failedCount == 0)
        let first = await collector.received(atLeast: 2)
        try #require(first.count == 2, "\(first.map(\.status))")
        #expect(first.map(\.status) == [14, 0] && first[0].body == first[1].body)
        for call in first {
            #expect(call.method == "opentelemetry.proto.collector.trace.v1.TraceService/Export")
            #expect(call.metadata["x-api-key"] == "s ecret")
            #expect((6...7).contains(call.remaining ?? 0), "grpc-timeout 7000m: \(call.remaining ?? -1)")
        }
        let decoded = try Self.decode([first[1].message])
        #expect(decoded.spans.map(\.name) == ["span 0", "span 1", "span 2"])
        #expect(decoded.spans.map(\.span_id) == spans.map(\.spanID.description))

        // INVALID_ARGUMENT: one call, the failure told once with the status and its (percent-decoded) message
        let (refused, told) = Self.telling(endpoint(.traces))
        refused.submit(spans)
        await refused.shutdown()
        #expect(await collector.received(atLeast: 3).count == 3 && refused.failedCount == 3)
        #expect(told.value.count == 1, "\(told.value)")
        #expect(
            told.value.first?.contains("gRPC status 3 (INVALID_ARGUMENT): the test's collector refuses: 3% sure")
                == true, "\(told.value)")

        // Metrics and log records by their own services
        let metricsTold = Locked<[String]>([])
        let metrics = OTLPMetricExporter(
            configuration: .init(endpoint: endpoint(.metrics), interval: .seconds(3_600)),
            onFailure: { message in metricsTold.withLock { $0.append(message) } }
        ) {
            [
                MetricFamily(
                    name: "imago_serve_in_flight", kind: .gauge, help: "Requests in flight.",
                    samples: [.init(value: .integer(2))])
            ]
        }
        await metrics.shutdown()
        #expect(metricsTold.value == ["5 data point(s) rejected by the collector: rejected by the test"])
        let logs = OTLPLogExporter(configuration: .init(endpoint: endpoint(.logs)))
        logs.submit([LogEntry(time: Date(), severity: .info, body: "GET /x 200")])
        await logs.shutdown()
        #expect(metrics.failedCount == 0 && logs.exportedCount == 1)
        let later = Array(await collector.received(atLeast: 5).dropFirst(3))
        #expect(
            later.map(\.method) == [
                "opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
                "opentelemetry.proto.collector.logs.v1.LogsService/Export",
            ])
        if later.count == 2 {
            #expect(try Self.decodeMetrics([later[0].message]).first?.first?.name == "imago_serve_in_flight")
            #expect(try Self.decodeLogs([later[1].message]).first?.body == "GET /x 200")
        }

        // gzip: the frame flagged compressed and the message encoding named, which gRPC's server inflates
        var zipped = endpoint(.traces)
        zipped.compression = .gzip
        let compressing = OTLPTraceExporter(configuration: .init(endpoint: zipped))
        compressing.submit(spans)
        await compressing.shutdown()
        #expect(compressing.exportedCount == 3 && compressing.failedCount == 0)
        let inflated = try #require(await collector.received(atLeast: 6).dropFirst(5).first)
        #expect(inflated.status == 0 && !inflated.message.starts(with: [0x1F, 0x8B]), "inflated by the server")
        #expect(try Self.decode([inflated.message]).spans.map(\.name) == ["span 0", "span 1", "span 2"])

        // A partial success: not sent again, the rejected spans counted as failed and told with the message
        let (partly, toldPartly) = Self.telling(endpoint(.traces))
        partly.submit(spans)
        await partly.shutdown()
        #expect(await collector.received(atLeast: 7).count == 7)
        #expect(partly.exportedCount == 1 && partly.failedCount == 2)
        #expect(toldPartly.value == ["2 span(s) rejected by the collector: rejected by the test"])

        // No collector at the port: a failure, told
        collector.stop()
        let absent = OTLPTraceExporter(configuration: .init(endpoint: endpoint(.traces)))
        absent.submit(spans)
        await absent.shutdown()
        #expect(absent.failedCount == 3)
    }

    /// OTLP over gRPC with TLS (HTTP/2 chosen by ALPN), against Python's gRPC server with a certificate made for
    /// the run: exported with the collector's CA, refused (counted, told) without it.
    @Test(.timeLimit(.minutes(1)))
    func exportsGoOverGRPCWithTLS() async throws {
        let collector = try GRPCCollector(tls: true)
        defer { collector.stop() }
        var endpoint = OTLPEndpoint(collector: collector.url, signal: .traces, transport: .grpc)
        let span = TraceSpan(
            traceID: .random(), spanID: .random(), name: "over tls", kind: .internal, start: Date(), end: Date())
        let (untrusting, told) = Self.telling(endpoint)
        untrusting.submit([span])
        await untrusting.shutdown()
        #expect(untrusting.failedCount == 1 && told.value.count == 1, "\(told.value)")
        endpoint.tls.caBundlePath = collector.certificatePath
        let trusting = OTLPTraceExporter(configuration: .init(endpoint: endpoint))
        trusting.submit([span])
        await trusting.shutdown()
        #expect(trusting.exportedCount == 1 && trusting.failedCount == 0)
        let calls = await collector.received(atLeast: 1)
        #expect(calls.count == 1 && calls.first?.status == 0)
        #expect(try Self.decode(calls.map(\.message)).spans.map(\.name) == ["over tls"])
    }

    /// `imago serve` with `OTEL_EXPORTER_OTLP_PROTOCOL=grpc`, as imgproxy's default: traces, metrics and the access
    /// log's records each reach their service's method on a gRPC collector.
    @Test(.timeLimit(.minutes(1)))
    func serveSendsEachSignalOverGRPC() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let collector = try GRPCCollector()
        defer { collector.stop() }
        let directory = ServeCommandTests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try await InProcessServe.start(
            [
                "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--cache-dir", directory.path, "--otel",
                "--otel-metrics", "--otel-logs",
            ],
            environment: [
                "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:\(collector.port)",
                "OTEL_EXPORTER_OTLP_INSECURE": "true", "OTEL_EXPORTER_OTLP_HEADERS": "x-team=images",
            ])
        let image = "http://127.0.0.1:\(serve.port)/_/rs:fit:32:32/plain/" + origin.url(for: "/a.jpg").absoluteString
        #expect(try await TestHTTPClient().send(URL(string: image)!).status == 200)
        #expect(await serve.stop() == 0)
        let calls = await collector.received { calls in
            Set(calls.map(\.method)).count == 3
        }
        func messages(_ service: String) -> [Data] {
            calls.filter { $0.method == "opentelemetry.proto.collector.\(service)/Export" }.map(\.message)
        }
        #expect(calls.allSatisfy { $0.status == 0 && $0.metadata["x-team"] == "images" })
        let spans = try Self.decode(messages("trace.v1.TraceService")).spans
        #expect(spans.contains { $0.name == "/request" } && spans.contains { $0.name == "encoding_image" })
        let metrics = try Self.decodeMetrics(messages("metrics.v1.MetricsService")).flatMap { $0 }
        #expect(metrics.contains { $0.name == "imago_serve_requests_total" }, "\(metrics.map(\.name))")
        let records = try Self.decodeLogs(messages("logs.v1.LogsService"))
        #expect(records.contains { $0.body.contains("200") && $0.trace_id != nil }, "\(records.map(\.body))")
    }

    /// AWS's resource detectors, as imgproxy runs them: the EC2 instance from the identity document (IMDSv2, the
    /// token on each request), the ECS task and container from the v4 task metadata endpoint (its attributes over
    /// the instance's), nothing where neither answers or within the time limit; `imago serve --otel` adds them to
    /// its resource beneath `OTEL_RESOURCE_ATTRIBUTES`.
    @Test(.timeLimit(.minutes(1)))
    func awsResourceIsDetectedAsImgproxyDoes() async throws {
        let aws = try LoopbackServer()
        defer { aws.stop() }
        aws.setRoute(
            "/latest/api/token",
            .handler { request in
                request.method == "PUT" && request.headers["X-aws-ec2-metadata-token-ttl-seconds"] != nil
                    ? .init(status: 200, text: "t0ken") : .init(status: 405, text: "")
            })
        func withToken(_ body: String) -> LoopbackServer.Route {
            .handler { request in
                request.headers["X-aws-ec2-metadata-token"] == "t0ken"
                    ? .init(status: 200, text: body) : .init(status: 401, text: "")
            }
        }
        aws.setRoute(
            "/latest/dynamic/instance-identity/document",
            withToken(
                #"{"accountId": "123456789012", "availabilityZone": "eu-west-1b", "region": "eu-west-1","#
                    + #" "instanceId": "i-0abc1234def567890", "instanceType": "c7g.large", "imageId": "ami-0123"}"#))
        aws.setRoute("/latest/meta-data/hostname", withToken("ip-10-0-1-23.eu-west-1.compute.internal"))
        aws.setRoute(
            "/ecs/v4/c1",
            .bytes(
                Data(
                    (#"{"DockerId": "ea32192c8553fbff06c9340478a2ff089b2bb5646fb718b4ee206641c9086d66", "Name": "thumbs","#
                        + #" "ContainerARN": "arn:aws:ecs:eu-west-1:123456789012:container/prod/1a2b/3c4d","#
                        + #" "LogDriver": "awslogs", "LogOptions": {"awslogs-group": "/ecs/thumbs","#
                        + #" "awslogs-region": "eu-west-1", "awslogs-stream": "ecs/thumbs/1a2b"}}"#).utf8),
                contentType: "application/json"))
        aws.setRoute(
            "/ecs/v4/c1/task",
            .bytes(
                Data(
                    (#"{"Cluster": "prod", "TaskARN": "arn:aws:ecs:eu-west-1:123456789012:task/prod/1a2b","#
                        + #" "Family": "thumbs", "Revision": "7", "LaunchType": "FARGATE","#
                        + #" "AvailabilityZone": "eu-west-1a"}"#).utf8),
                contentType: "application/json"))
        let imds = ["AWS_EC2_METADATA_SERVICE_ENDPOINT": aws.url(for: "/").absoluteString]
        let ecs = ["ECS_CONTAINER_METADATA_URI_V4": aws.url(for: "/ecs/v4/c1").absoluteString]
        func attributes(_ environment: [String: String]) async -> [String: String] {
            var found: [String: String] = [:]
            for attribute in await AWSResourceDetector(environment: environment).attributes() {
                if case .string(let value) = attribute.value { found[attribute.key] = value }
            }
            return found
        }
        let instance = await attributes(imds)
        #expect(
            instance == [
                "cloud.provider": "aws", "cloud.platform": "aws_ec2", "cloud.region": "eu-west-1",
                "cloud.availability_zone": "eu-west-1b", "cloud.account.id": "123456789012",
                "host.id": "i-0abc1234def567890", "host.type": "c7g.large", "host.image.id": "ami-0123",
                "host.name": "ip-10-0-1-23.eu-west-1.compute.internal",
            ])
        let both = await attributes(imds.merging(ecs) { $1 })
        #expect(both["cloud.platform"] == "aws_ecs" && both["host.id"] == "i-0abc1234def567890")
        #expect(both["cloud.availability_zone"] == "eu-west-1a", "the task's over the instance's")
        #expect(both["aws.ecs.cluster.arn"] == "arn:aws:ecs:eu-west-1:123456789012:cluster/prod")
        #expect(both["aws.ecs.task.arn"] == "arn:aws:ecs:eu-west-1:123456789012:task/prod/1a2b")
        #expect(both["aws.ecs.task.family"] == "thumbs" && both["aws.ecs.task.revision"] == "7")
        #expect(both["aws.ecs.launchtype"] == "fargate" && both["container.name"] == "thumbs")
        #expect(both["container.id"]?.hasPrefix("ea32192c") == true)
        #expect(both["aws.ecs.container.arn"] == "arn:aws:ecs:eu-west-1:123456789012:container/prod/1a2b/3c4d")
        #expect(both["aws.log.group.names"] == "/ecs/thumbs" && both["aws.log.stream.names"] == "ecs/thumbs/1a2b")
        #expect(
            both["aws.log.stream.arns"]
                == "arn:aws:logs:eu-west-1:123456789012:log-group:/ecs/thumbs:log-stream:ecs/thumbs/1a2b")

        // Not AWS: disabled, an address that is not a metadata service, one that never answers (its time limit)
        #expect(await attributes(["AWS_EC2_METADATA_DISABLED": "true"]).isEmpty)
        let other = try LoopbackServer()
        defer { other.stop() }
        #expect(await attributes(["AWS_EC2_METADATA_SERVICE_ENDPOINT": other.url(for: "/").absoluteString]).isEmpty)
        Self.stall(other, "/stalled/latest/api/token")
        defer { other.resume("/stalled/latest/api/token") }
        var stalled = AWSResourceDetector(
            environment: ["AWS_EC2_METADATA_SERVICE_ENDPOINT": other.url(for: "/stalled/").absoluteString])
        stalled.timeout = .milliseconds(300)
        let clock = ContinuousClock()
        let began = clock.now
        #expect(await stalled.attributes().isEmpty)
        #expect(clock.now - began < .seconds(2))

        // imago serve --otel: detected beneath the attributes given
        let collector = try LoopbackServer()
        defer { collector.stop() }
        let received = Self.recording(collector, ["/v1/traces"])
        let directory = ServeCommandTests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try await InProcessServe.start(
            [
                "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--cache-dir", directory.path, "--otel",
                "--otel-endpoint", collector.url(for: "/").absoluteString,
            ],
            environment: imds.merging(["OTEL_RESOURCE_ATTRIBUTES": "cloud.region=mine"]) { $1 })
        #expect(try await TestHTTPClient().send(URL(string: "http://127.0.0.1:\(serve.port)/_/x")!).status == 400)
        #expect(await serve.stop() == 0)
        #expect(serve.output.stderr.contains("otel: resource from aws_ec2"), "\(serve.output.stderr)")
        let resource = try #require(try Self.decode(received.value.map(\.body)).resources.first)
        #expect(resource["host.id"] == .string("i-0abc1234def567890") && resource["cloud.region"] == .string("mine"))
        #expect(resource["service.name"] == .string("imago"))
    }

    /// The hand-written wire format against values with known encodings (protobuf's documentation: 150 is
    /// `08 96 01`; a negative int64 takes ten bytes).
    @Test func protobufFieldsAreWrittenAsTheWireFormatSays() {
        // Read back by the reader, and its refusals of what is not well formed
        var written = ProtobufWriter()
        written.unsigned(1, 150)
        written.string(2, "text")
        written.fixed64(3, 7)
        let read = ProtobufReader.fields(written.bytes[...])
        #expect(read?.map(\.number) == [1, 2, 3])
        if case .varint(let value)? = read?.first?.value { #expect(value == 150) } else { Issue.record("no varint") }
        if case .bytes(let text)? = read?.dropFirst().first?.value { #expect(Array(text) == Array("text".utf8)) }
        for bad: [UInt8] in [[0x12, 0x05, 0x61], [0x08], [0x08] + Array(repeating: 0xFF, count: 11), [0x0B], [0x00]] {
            #expect(ProtobufReader.fields(bad[...]) == nil, "\(bad)")
        }
        #expect(OTLPEndpoint.partialSuccess(in: [0x7B, 0x7D]) == .accepted(rejected: 0, message: ""), "JSON's {}")

        var writer = ProtobufWriter()
        writer.unsigned(1, 150)
        #expect(writer.bytes == [0x08, 0x96, 0x01])
        writer = ProtobufWriter()
        writer.string(2, "testing")
        #expect(writer.bytes == [0x12, 0x07] + Array("testing".utf8))
        writer = ProtobufWriter()
        writer.signed(3, -1)
        #expect(writer.bytes == [0x18] + Array(repeating: 0xFF, count: 9) + [0x01])
        writer = ProtobufWriter()
        writer.fixed64(7, 1)
        writer.fixed32(16, 1)
        #expect(writer.bytes == [0x39, 1, 0, 0, 0, 0, 0, 0, 0, 0x85, 0x01, 1, 0, 0, 0])
        writer = ProtobufWriter()
        writer.message(1) { $0.unsigned(1, 150) }
        #expect(writer.bytes == [0x0A, 0x03, 0x08, 0x96, 0x01])
        // A message over 127 bytes: its length takes two bytes, put in front once it is known
        writer = ProtobufWriter()
        let text = String(repeating: "a", count: 200)
        writer.message(1) { $0.string(1, text) }
        #expect(writer.bytes == [0x0A, 0xCB, 0x01, 0x0A, 0xC8, 0x01] + Array(text.utf8))
    }
}
