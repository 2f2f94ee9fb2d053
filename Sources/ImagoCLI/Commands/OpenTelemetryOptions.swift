import Foundation
import Imago
import ImagoServer

/// `serve`'s OpenTelemetry settings (imgproxy's `IMGPROXY_OPEN_TELEMETRY_*`): `--otel` sends traces,
/// `--otel-metrics` metrics too, `--otel-logs` the access log's records (`--otel-logger-name` their scope), and
/// `--otel-endpoint URL`, `--otel-trace-id-generator xray|random`, `--otel-propagate-external` and the PEM text of
/// `--otel-server-cert`, `--otel-client-cert` and `--otel-client-key` set what imgproxy's settings set. The rest
/// comes from OpenTelemetry's own variables, as its SDKs read them: `OTEL_EXPORTER_OTLP_ENDPOINT`, `…_HEADERS`,
/// `…_TIMEOUT`, `…_PROTOCOL` (`http/protobuf`, the default, or `grpc`), `…_INSECURE` (gRPC), `…_COMPRESSION`
/// (`gzip`), `…_CERTIFICATE`, `…_CLIENT_CERTIFICATE` and `…_CLIENT_KEY` (PEM files), each also per signal
/// (`OTEL_EXPORTER_OTLP_TRACES_…`, `OTEL_EXPORTER_OTLP_METRICS_…`), `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
/// `OTEL_PROPAGATORS` (`tracecontext`, `baggage`, `b3`, `b3multi`, `jaeger`, `xray`, `ottrace`, `none`),
/// `OTEL_TRACES_SAMPLER` and `…_ARG`, `OTEL_LOG_LEVEL`, `OTEL_BLRP_*` as `OTEL_BSP_*`, `OTEL_BSP_SCHEDULE_DELAY`,
/// `…_MAX_QUEUE_SIZE` and `…_MAX_EXPORT_BATCH_SIZE`, `OTEL_METRIC_EXPORT_INTERVAL`, and `OTEL_SDK_DISABLED`.
struct OpenTelemetryOptions: Sendable {
    /// The tracing and where its spans go, or `nil` when `--otel` was not given.
    var traces: (tracing: RequestTracing, exporter: OTLPBatchConfiguration)?
    /// Where the metrics go, or `nil` when `--otel-metrics` was not given.
    var metrics: OTLPMetricExporter.Configuration?
    /// Where the access log's records go as log entries, and the least level sent (`OTEL_LOG_LEVEL`; `nil`:
    /// `--log-level`'s), or `nil` when `--otel-logs` was not given.
    var logs: (exporter: OTLPBatchConfiguration, least: AccessLogRecord.Level?)?

    /// The options' synopsis, for a command's usage line.
    static let synopsis =
        "[--otel [--otel-metrics] [--otel-logs] [--otel-endpoint URL] [--otel-trace-id-generator xray|random]"
        + " [--otel-propagate-external] [--otel-logger-name NAME] [--otel-server-cert PEM]"
        + " [--otel-client-cert PEM --otel-client-key PEM]]"

    /// The options, for a command's option list.
    static let specs = [
        OptionSpec(
            "--otel",
            help:
                "Send a trace of each image request to an OpenTelemetry collector over OTLP/HTTP, or gRPC with"
                + " OTEL_EXPORTER_OTLP_PROTOCOL=grpc (IMGPROXY_OPEN_TELEMETRY_ENABLE; the OTEL_* variables set the"
                + " rest)."),
        OptionSpec(
            "--otel-metrics",
            help:
                "Send the metrics of /metrics there too, every 10 s (OTEL_METRIC_EXPORT_INTERVAL;"
                + " IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS)."),
        OptionSpec(
            "--otel-logs",
            help:
                "Send the access log's records there too, as log entries with their trace (OTEL_LOG_LEVEL, else"
                + " --log-level; IMGPROXY_OPEN_TELEMETRY_ENABLE_LOGS)."),
        OptionSpec(
            "--otel-endpoint", value: "URL",
            help:
                "The collector's OTLP base URL: traces to URL/v1/traces, metrics to URL/v1/metrics, logs to"
                + " URL/v1/logs; over gRPC its host and port (default OTEL_EXPORTER_OTLP_ENDPOINT, else"
                + " http://localhost:4318, or http://localhost:4317 for gRPC)."),
        OptionSpec(
            "--otel-logger-name", value: "NAME",
            help: "The instrumentation scope of the log records (default imago; IMGPROXY_OPEN_TELEMETRY_LOGGER_NAME)."),
        OptionSpec(
            "--otel-server-cert", value: "PEM",
            help:
                "The collector's CA certificate as PEM text, newlines as \\n or not; best as IMAGO_OTEL_SERVER_CERT"
                + " (IMGPROXY_OPEN_TELEMETRY_SERVER_CERT; files: OTEL_EXPORTER_OTLP_CERTIFICATE)."),
        OptionSpec(
            "--otel-client-cert", value: "PEM",
            help:
                "A client certificate for mutual TLS as PEM text, with --otel-client-key"
                + " (IMGPROXY_OPEN_TELEMETRY_CLIENT_CERT)."),
        OptionSpec(
            "--otel-client-key", value: "PEM",
            help:
                "Its private key as PEM text; best as IMAGO_OTEL_CLIENT_KEY, not on a command line"
                + " (IMGPROXY_OPEN_TELEMETRY_CLIENT_KEY)."),
        OptionSpec(
            "--otel-trace-id-generator", value: "NAME",
            help:
                "xray: trace IDs start with the time, as AWS X-Ray needs (default); random"
                + " (IMGPROXY_OPEN_TELEMETRY_TRACE_ID_GENERATOR)."),
        OptionSpec(
            "--otel-propagate-external",
            help:
                "Send each request's traceparent to the origins of its sources, so their spans join the trace"
                + " (IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL)."),
    ]

    /// Nothing sent.
    init() {}

    /// Reads the options from `args` and OpenTelemetry's variables from `environment`; throws a ``UsageError``
    /// naming the option or variable that is wrong.
    init(parsing args: ParsedArguments, environment: [String: String]) throws {
        guard args.has("--otel") else {
            try args.refuse(
                [
                    "--otel-metrics", "--otel-logs", "--otel-endpoint", "--otel-trace-id-generator",
                    "--otel-propagate-external", "--otel-server-cert", "--otel-client-cert", "--otel-client-key",
                    "--otel-logger-name",
                ],
                without: "--otel")
            return
        }
        func variable(_ name: String) -> String? {
            environment[name].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        if variable("OTEL_SDK_DISABLED")?.lowercased() == "true" { return }
        var tracing = RequestTracing(propagatesToSources: args.has("--otel-propagate-external"))
        switch args.value("--otel-trace-id-generator") ?? "xray" {
        case "xray": tracing.timestampedTraceIDs = true
        case "random": tracing.timestampedTraceIDs = false
        case let other:
            throw UsageError("option '--otel-trace-id-generator' expects xray or random (got '\(other)')")
        }
        if let text = variable("OTEL_PROPAGATORS") {
            var propagators: [TracePropagator] = []
            for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
                guard name != "none" else { continue }
                guard let propagator = TracePropagator(rawValue: name) else {
                    throw UsageError(
                        "OTEL_PROPAGATORS: '\(name)' is not one of "
                            + (TracePropagator.allCases.map(\.rawValue) + ["none"]).joined(separator: ", "))
                }
                if !propagators.contains(propagator) { propagators.append(propagator) }
            }
            tracing.propagators = propagators
        }
        tracing.sampler = try Self.sampler(
            variable("OTEL_TRACES_SAMPLER"), argument: variable("OTEL_TRACES_SAMPLER_ARG"))
        // OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES's service.name, else imago.
        var attributes =
            try variable("OTEL_RESOURCE_ATTRIBUTES").map {
                try Self.pairs($0, variable: "OTEL_RESOURCE_ATTRIBUTES")
            } ?? [:]
        if let name = variable("OTEL_SERVICE_NAME") { attributes["service.name"] = name }
        attributes["service.name"] = attributes["service.name"] ?? "imago"
        attributes["service.version"] = attributes["service.version"] ?? ImagoVersion.current
        attributes["telemetry.sdk.name"] = "imago"
        attributes["telemetry.sdk.language"] = "swift"
        let resource = attributes.sorted { $0.key < $1.key }.map { TraceSpan.Attribute($0.key, .string($0.value)) }

        /// The whole number variable `name` gives, within `range`; `nil` when it is unset.
        func number(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
            try variable(name).map { try parseInteger($0, variable: name, range: range) }
        }
        /// A batching exporter's settings for `signal`, its batch processor's variables
        /// starting with `processor` (`OTEL_BSP`), its schedule `delay` by default.
        func batching(
            _ signal: OTLPSignal, processor: String, delay: Duration
        ) throws
            -> OTLPBatchConfiguration
        {
            var batching = OTLPBatchConfiguration(
                endpoint: try Self.endpoint(for: signal, args: args, variable),
                resource: resource, scheduleDelay: delay)
            if let delay = try number(processor + "_SCHEDULE_DELAY", in: 1...3_600_000) {
                batching.scheduleDelay = .milliseconds(delay)
            }
            if let size = try number(processor + "_MAX_QUEUE_SIZE", in: 1...1_000_000) {
                batching.maximumQueueSize = size
            }
            if let size = try number(processor + "_MAX_EXPORT_BATCH_SIZE", in: 1...1_000_000) {
                batching.maximumBatchSize = min(batching.maximumQueueSize, size)
            }
            return batching
        }
        traces = (tracing, try batching(.traces, processor: "OTEL_BSP", delay: .seconds(5)))
        if args.has("--otel-logs") {
            var least: AccessLogRecord.Level?
            if let text = variable("OTEL_LOG_LEVEL") {
                guard let level = AccessLogRecord.Level(rawValue: text.lowercased()) else {
                    throw UsageError("OTEL_LOG_LEVEL expects debug, info, warn or error (got '\(text)')")
                }
                least = level
            }
            var exporter = try batching(.logs, processor: "OTEL_BLRP", delay: .seconds(1))
            exporter.scopeName = args.value("--otel-logger-name") ?? exporter.scopeName
            logs = (exporter, least)
        }
        if args.has("--otel-metrics") {
            var metrics = OTLPMetricExporter.Configuration(
                endpoint: try Self.endpoint(for: .metrics, args: args, variable),
                resource: resource)
            if let interval = try number("OTEL_METRIC_EXPORT_INTERVAL", in: 100...86_400_000) {
                metrics.interval = .milliseconds(interval)
            }
            self.metrics = metrics
        }
    }

    /// Whether anything is sent.
    var isEnabled: Bool { traces != nil || metrics != nil || logs != nil }

    /// The resource of every signal with `detected` attributes (``AWSResourceDetector``'s) added beneath those
    /// given: `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` win, as in imgproxy.
    mutating func addResource(_ detected: [TraceSpan.Attribute]) {
        func merged(_ given: [TraceSpan.Attribute]) -> [TraceSpan.Attribute] {
            let keys = Set(given.map(\.key))
            return (given + detected.filter { !keys.contains($0.key) }).sorted { $0.key < $1.key }
        }
        if let given = traces?.exporter.resource { traces?.exporter.resource = merged(given) }
        if let given = logs?.exporter.resource { logs?.exporter.resource = merged(given) }
        if let given = metrics?.resource { metrics?.resource = merged(given) }
    }

    /// The endpoint of `signal`, by the protocol `OTEL_EXPORTER_OTLP_{signal}_PROTOCOL` or `…_PROTOCOL` names
    /// (`http/protobuf`, the default, or `grpc`): over HTTP `base` (`--otel-endpoint`) + the signal's path, else the
    /// signal's own `OTEL_EXPORTER_OTLP_{signal}_ENDPOINT` as it is, else `OTEL_EXPORTER_OTLP_ENDPOINT` + the path,
    /// else `http://localhost:4318/` + the path; over gRPC the signal's method at the host and port of the same
    /// variables (default `http://localhost:4317`), one without a scheme over TLS unless `…_INSECURE` is `true`. Its
    /// headers, compression, timeout and TLS files (`…_CERTIFICATE`, `…_CLIENT_CERTIFICATE`, `…_CLIENT_KEY`) by the
    /// signal's variable, else the general one; or the TLS options' PEM text (`--otel-server-cert`, …), not both.
    static func endpoint(
        for signal: OTLPSignal, args: ParsedArguments, _ variable: (String) -> String?
    ) throws -> OTLPEndpoint {
        let base = args.value("--otel-endpoint")
        /// The signal's own variable, else the general one (`OTEL_EXPORTER_OTLP_TRACES_X`, `OTEL_EXPORTER_OTLP_X`).
        func exporterVariable(_ suffix: String) -> (name: String, value: String)? {
            for name in ["OTEL_EXPORTER_OTLP_\(signal.variablePart)_" + suffix, "OTEL_EXPORTER_OTLP_" + suffix] {
                if let value = variable(name) { return (name, value) }
            }
            return nil
        }
        var transport = OTLPEndpoint.Transport.httpProtobuf
        if let (name, value) = exporterVariable("PROTOCOL") {
            switch value.lowercased() {
            case "http/protobuf", "http", "https": transport = .httpProtobuf
            case "grpc": transport = .grpc
            default:
                throw UsageError(
                    "\(name)=\(value): imago sends OTLP over HTTP with protobuf (http/protobuf, port 4318) or over gRPC"
                        + " (grpc, port 4317), not as JSON")
            }
        }
        func validated(_ text: String) throws -> URL {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                ["http", "https"].contains(scheme), url.host() != nil
            else {
                throw UsageError("the OpenTelemetry endpoint must be an http or https URL (got '\(text)')")
            }
            return url
        }
        let signalEndpoint = variable("OTEL_EXPORTER_OTLP_\(signal.variablePart)_ENDPOINT")
        var endpoint: OTLPEndpoint
        if transport == .grpc {
            var text = base ?? signalEndpoint ?? variable("OTEL_EXPORTER_OTLP_ENDPOINT") ?? "http://localhost:4317"
            if !text.contains("://") {
                // host:port, as gRPC's SDKs take it: TLS unless the exporter is told it is insecure.
                let insecure = exporterVariable("INSECURE").map { $0.value.lowercased() == "true" } ?? false
                text = (insecure ? "http://" : "https://") + text
            }
            endpoint = OTLPEndpoint(collector: try validated(text), signal: signal, transport: .grpc)
        } else if base == nil, let signalEndpoint {
            endpoint = OTLPEndpoint(url: try validated(signalEndpoint))  // as it is
        } else {
            let text = base ?? variable("OTEL_EXPORTER_OTLP_ENDPOINT") ?? "http://localhost:4318"
            endpoint = OTLPEndpoint(collector: try validated(text), signal: signal)
        }
        if let (name, text) = exporterVariable("HEADERS") { endpoint.headers = try pairs(text, variable: name) }
        /// The PEM file a TLS variable names, checked readable now rather than at the first export.
        func file(_ suffix: String) throws -> String? {
            guard let (name, path) = exporterVariable(suffix) else { return nil }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw UsageError("\(name): cannot read '\(path)'")
            }
            return path
        }
        endpoint.tls.caBundlePath = try file("CERTIFICATE")
        endpoint.tls.clientCertificatePath = try file("CLIENT_CERTIFICATE")
        endpoint.tls.clientKeyPath = try file("CLIENT_KEY")
        if endpoint.tls.clientKeyPath != nil, endpoint.tls.clientCertificatePath == nil {
            throw UsageError("OTEL_EXPORTER_OTLP_CLIENT_KEY needs OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE")
        }
        // imgproxy's PEM text, its line breaks written as \n or not
        func pem(_ option: String) throws -> String? {
            guard let text = args.value(option)?.replacingOccurrences(of: "\\n", with: "\n") else { return nil }
            guard text.contains("-----BEGIN ") else {
                throw UsageError("option '\(option)' expects PEM text (-----BEGIN …)")
            }
            return text
        }
        endpoint.tls.caBundlePEM = try pem("--otel-server-cert")
        endpoint.tls.clientCertificatePEM = try pem("--otel-client-cert")
        endpoint.tls.clientKeyPEM = try pem("--otel-client-key")
        if (endpoint.tls.clientCertificatePEM == nil) != (endpoint.tls.clientKeyPEM == nil) {
            throw UsageError("options '--otel-client-cert' and '--otel-client-key' go together")
        }
        if endpoint.tls.caBundlePEM != nil && endpoint.tls.caBundlePath != nil
            || endpoint.tls.clientCertificatePEM != nil && endpoint.tls.clientCertificatePath != nil
        {
            throw UsageError(
                "give the OpenTelemetry certificates as files (OTEL_EXPORTER_OTLP_CERTIFICATE, …) or as PEM text"
                    + " (--otel-server-cert, …), not both")
        }
        if let (name, text) = exporterVariable("COMPRESSION") {
            guard let compression = OTLPEndpoint.Compression(rawValue: text.lowercased()) else {
                throw UsageError("\(name) expects gzip or none (got '\(text)')")
            }
            endpoint.compression = compression
        }
        if let (name, text) = exporterVariable("TIMEOUT") {
            endpoint.timeout = .milliseconds(try parseInteger(text, variable: name, range: 1...600_000))
        }
        return endpoint
    }

    /// The sampler `OTEL_TRACES_SAMPLER` names (default `parentbased_always_on`), its ratio from `argument`.
    static func sampler(_ name: String?, argument: String?) throws -> RequestTracing.Sampler {
        func ratio() throws -> Double {
            guard let argument else { return 1 }
            guard let value = Double(argument), value >= 0, value <= 1 else {
                throw UsageError("OTEL_TRACES_SAMPLER_ARG expects a fraction from 0 to 1 (got '\(argument)')")
            }
            return value
        }
        switch name ?? "parentbased_always_on" {
        case "always_on": return .always
        case "always_off": return .never
        case "traceidratio": return .ratio(try ratio())
        case "parentbased_always_on": return .parentBased(root: .always)
        case "parentbased_always_off": return .parentBased(root: .never)
        case "parentbased_traceidratio": return .parentBased(root: .ratio(try ratio()))
        case let other:
            throw UsageError(
                "OTEL_TRACES_SAMPLER expects always_on, always_off, traceidratio or parentbased_ one of them"
                    + " (got '\(other)')")
        }
    }

    /// `key=value` pairs split at commas, their values percent-decoded (OpenTelemetry's `…_HEADERS` and
    /// `OTEL_RESOURCE_ATTRIBUTES`).
    static func pairs(_ text: String, variable: String) throws -> [String: String] {
        var pairs: [String: String] = [:]
        for (index, item) in text.split(separator: ",").enumerated() {
            let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, let value = parts[1].removingPercentEncoding,
                !parts[0].contains(where: { $0 == ":" || $0.isNewline }), !value.contains(where: \.isNewline)
            else {
                // (Not the pair itself: a header's value is often a key.)
                throw UsageError("\(variable) expects key=value pairs separated by commas (pair \(index + 1) is not)")
            }
            pairs[parts[0]] = value
        }
        return pairs
    }
}
