import Foundation
import ImagoCurl

extension AccessLogRecord {
    /// The request as OpenTelemetry spans, imgproxy's names first: `/request` (the server span: method, status,
    /// sizes, source, options, cache tier, client), and under it, for a request that rendered, its stages in the
    /// order they run (`queue`, `downloading_image` or `reading_original`, `processing_image` with
    /// `decoding_image`, `transforming_image` and `encoding_image` inside it, then `storing_output`). Empty unless
    /// the record has a sampled ``trace`` and ``finishedAt``.
    ///
    /// The stages' spans are laid end to end from the request's start with their measured durations (waits
    /// between the pipeline's stages go before the decode, the wait for an encode slot before the encode): the
    /// render measures how long each stage took, not the instant each began. A 5xx is an error span; a 4xx is not
    /// (the client's fault, as OpenTelemetry's conventions for servers say).
    public var spans: [TraceSpan] {
        guard let trace, trace.isSampled, let end = finishedAt else { return [] }
        let start = end.addingTimeInterval(-ms / 1_000)
        let root = TraceSpan(
            traceID: trace.traceID, spanID: trace.spanID, parentSpanID: trace.parentSpanID,
            traceState: trace.traceState, name: "/request", kind: .server, start: start, end: end,
            attributes: telemetryAttributes, status: status >= 500 ? .error(error ?? "HTTP \(status)") : .unset)
        guard let stages else { return [root] }
        var spans = [root]
        var clock = start
        /// A span of `milliseconds` from `clock` under `parent`, the clock moved past it.
        func stage(_ name: String, _ milliseconds: Double, under parent: TraceSpan.SpanID) -> TraceSpan.SpanID {
            let span = TraceSpan(
                traceID: trace.traceID, spanID: .random(), parentSpanID: parent, traceState: trace.traceState,
                name: name, kind: .internal, start: clock, end: clock.addingTimeInterval(max(0, milliseconds) / 1_000))
            clock = span.end
            spans.append(span)
            return span.spanID
        }
        _ = stage("queue", stages.queue, under: trace.spanID)
        if let fetch = stages.fetch { _ = stage("downloading_image", fetch, under: trace.spanID) }
        if let disk = stages.disk { _ = stage("reading_original", disk, under: trace.spanID) }
        let processingStart = clock
        let processing = TraceSpan.SpanID.random()
        clock = clock.addingTimeInterval(max(0, stages.pipelineWait) / 1_000)
        if let decode = stages.decode { _ = stage("decoding_image", decode, under: processing) }
        if let process = stages.process { _ = stage("transforming_image", process, under: processing) }
        clock = clock.addingTimeInterval(max(0, stages.encodeWait) / 1_000)
        _ = stage("encoding_image", stages.encode, under: processing)
        spans.insert(
            TraceSpan(
                traceID: trace.traceID, spanID: processing, parentSpanID: trace.spanID, traceState: trace.traceState,
                name: "processing_image", kind: .internal, start: processingStart, end: clock),
            at: spans.firstIndex { $0.parentSpanID == processing } ?? spans.endIndex)
        _ = stage("storing_output", stages.store, under: trace.spanID)
        return spans
    }

    /// The request as an OpenTelemetry log entry (`--otel-logs`): its text line as the body, its level as the
    /// severity, the spans' attributes (with `error.message` and `imago.color_warning` when set), and its trace and
    /// span when it has a ``trace``; `nil` without ``finishedAt``.
    public var logEntry: LogEntry? {
        guard let finishedAt else { return nil }
        var attributes = telemetryAttributes
        if let error { attributes.append(.init("error.message", .string(error))) }
        if let colorWarning { attributes.append(.init("imago.color_warning", .string(colorWarning))) }
        return LogEntry(
            time: finishedAt, severity: level.severity, body: textLine, attributes: attributes, traceID: trace?.traceID,
            spanID: trace?.spanID, isTraceSampled: trace?.isSampled ?? false)
    }

    /// What describes the request to OpenTelemetry, by its semantic conventions' names where it has them: method,
    /// status, body size, route, redacted source, options, cache tier, request ID, client address, and for a 5xx
    /// `error.type`.
    var telemetryAttributes: [TraceSpan.Attribute] {
        var attributes: [TraceSpan.Attribute] = [
            .init("http.request.method", .string(method)),
            .init("http.response.status_code", .int(Int64(status))),
            .init("http.response.body.size", .int(Int64(bytes))),
            .init("http.route", .string(route)),
        ]
        if let source { attributes.append(.init("imago.source", .string(source))) }
        if let options { attributes.append(.init("imago.options", .string(options))) }
        if let cache { attributes.append(.init("imago.cache", .string(cache))) }
        if let requestID { attributes.append(.init("imago.request_id", .string(requestID))) }
        if let clientIP { attributes.append(.init("client.address", .string(clientIP))) }
        if status >= 500 { attributes.append(.init("error.type", .string(String(status)))) }
        return attributes
    }
}

extension AccessLogRecord.Level {
    /// The OpenTelemetry severity of this level (`INFO` for info, …).
    public var severity: LogEntry.Severity {
        switch self {
        case .debug: .debug
        case .info: .info
        case .warn: .warn
        case .error: .error
        }
    }
}
