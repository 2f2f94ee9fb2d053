import Foundation
import Imago
import ImagoServer

/// `serve`'s OpenTelemetry settings (imgproxy's `IMGPROXY_OPEN_TELEMETRY_*`): `--otel` turns tracing on,
/// `--otel-endpoint URL`, `--otel-trace-id-generator xray|random` and `--otel-propagate-external` set what
/// imgproxy's settings set, and the rest
/// comes from OpenTelemetry's own variables, as its SDKs read them: `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`,
/// `…_HEADERS`, `…_TIMEOUT` and `…_PROTOCOL` (only `http/protobuf`), `OTEL_SERVICE_NAME`,
/// `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and `…_ARG`, `OTEL_BSP_SCHEDULE_DELAY`, `…_MAX_QUEUE_SIZE`
/// and `…_MAX_EXPORT_BATCH_SIZE`, and `OTEL_SDK_DISABLED`.
struct TracingOptions: Sendable {
    /// The tracing and where its spans go, or `nil` when `--otel` was not given.
    var settings: (tracing: RequestTracing, exporter: OTLPTraceExporter.Configuration)?

    /// The options' synopsis, for a command's usage line.
    static let synopsis =
        "[--otel [--otel-endpoint URL] [--otel-trace-id-generator xray|random] [--otel-propagate-external]]"

    /// The options, for a command's option list.
    static let specs = [
        OptionSpec(
            "--otel",
            help:
                "Send a trace of each image request to an OpenTelemetry collector over OTLP/HTTP"
                + " (IMGPROXY_OPEN_TELEMETRY_ENABLE; the OTEL_* variables set the rest)."),
        OptionSpec(
            "--otel-endpoint", value: "URL",
            help:
                "The traces endpoint (default OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT"
                + " + /v1/traces, else http://localhost:4318/v1/traces)."),
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

    /// No tracing.
    init() {}

    /// Reads the options from `args` and OpenTelemetry's variables from `environment`; throws a ``UsageError``
    /// naming the option or variable that is wrong.
    init(parsing args: ParsedArguments, environment: [String: String]) throws {
        guard args.has("--otel") else {
            try args.refuse(
                ["--otel-endpoint", "--otel-trace-id-generator", "--otel-propagate-external"], without: "--otel")
            return
        }
        func variable(_ name: String) -> String? {
            environment[name].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        /// The traces' own variable, else the general one (`OTEL_EXPORTER_OTLP_TRACES_X`, `OTEL_EXPORTER_OTLP_X`).
        func exporterVariable(_ suffix: String) -> (name: String, value: String)? {
            for name in ["OTEL_EXPORTER_OTLP_TRACES_" + suffix, "OTEL_EXPORTER_OTLP_" + suffix] {
                if let value = variable(name) { return (name, value) }
            }
            return nil
        }
        if variable("OTEL_SDK_DISABLED")?.lowercased() == "true" { return }
        var tracing = RequestTracing(propagatesToSources: args.has("--otel-propagate-external"))
        switch args.value("--otel-trace-id-generator") ?? "xray" {
        case "xray": tracing.timestampedTraceIDs = true
        case "random": tracing.timestampedTraceIDs = false
        case let other:
            throw UsageError("option '--otel-trace-id-generator' expects xray or random (got '\(other)')")
        }
        tracing.sampler = try Self.sampler(
            variable("OTEL_TRACES_SAMPLER"), argument: variable("OTEL_TRACES_SAMPLER_ARG"))
        var exporter = OTLPTraceExporter.Configuration()
        if let (name, value) = exporterVariable("PROTOCOL"), !["http/protobuf", "http", "https"].contains(value) {
            throw UsageError(
                "\(name)=\(value): imago sends traces over OTLP/HTTP with protobuf (http/protobuf, port 4318), not"
                    + " gRPC or JSON")
        }
        let endpoint: String
        if let given = args.value("--otel-endpoint") {
            endpoint = given
        } else if let traces = variable("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            endpoint = traces
        } else if let base = variable("OTEL_EXPORTER_OTLP_ENDPOINT") {
            endpoint = (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/v1/traces"
        } else {
            endpoint = "http://localhost:4318/v1/traces"
        }
        guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(),
            ["http", "https"].contains(scheme),
            url.host() != nil
        else {
            throw UsageError("the OpenTelemetry endpoint must be an http or https URL (got '\(endpoint)')")
        }
        exporter.endpoint = url
        if let (name, text) = exporterVariable("HEADERS") {
            exporter.headers = try Self.pairs(text, variable: name)
        }
        if let (name, text) = exporterVariable("TIMEOUT") {
            exporter.timeout = .milliseconds(try Self.integer(text, variable: name, range: 1...600_000))
        }
        if let text = variable("OTEL_BSP_SCHEDULE_DELAY") {
            exporter.scheduleDelay = .milliseconds(
                try Self.integer(text, variable: "OTEL_BSP_SCHEDULE_DELAY", range: 1...3_600_000))
        }
        if let text = variable("OTEL_BSP_MAX_QUEUE_SIZE") {
            exporter.maximumQueueSize = try Self.integer(
                text, variable: "OTEL_BSP_MAX_QUEUE_SIZE", range: 1...1_000_000)
        }
        if let text = variable("OTEL_BSP_MAX_EXPORT_BATCH_SIZE") {
            exporter.maximumBatchSize = min(
                exporter.maximumQueueSize,
                try Self.integer(text, variable: "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", range: 1...1_000_000))
        }
        // OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES's service.name, else imago.
        var resource =
            try variable("OTEL_RESOURCE_ATTRIBUTES").map {
                try Self.pairs($0, variable: "OTEL_RESOURCE_ATTRIBUTES")
            } ?? [:]
        if let name = variable("OTEL_SERVICE_NAME") { resource["service.name"] = name }
        resource["service.name"] = resource["service.name"] ?? "imago"
        resource["service.version"] = resource["service.version"] ?? ImagoVersion.current
        resource["telemetry.sdk.name"] = "imago"
        resource["telemetry.sdk.language"] = "swift"
        exporter.resource = resource.sorted { $0.key < $1.key }.map { .init($0.key, .string($0.value)) }
        settings = (tracing, exporter)
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

    private static func integer(_ text: String, variable: String, range: ClosedRange<Int>) throws -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(
                "\(variable) expects a whole number from \(range.lowerBound) to \(range.upperBound) (got '\(text)')")
        }
        return value
    }
}
