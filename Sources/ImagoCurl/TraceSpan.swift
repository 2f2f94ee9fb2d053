import Foundation
import ImagoCore

/// One span of a trace as OpenTelemetry describes it: an operation with its IDs, its times, its attributes and
/// its outcome. ``OTLPTraceExporter`` sends spans to a collector.
///
/// ```swift
/// let span = TraceSpan(
///     traceID: .random(), spanID: .random(), name: "/request", kind: .server,
///     start: start, end: Date(), attributes: [.init("http.response.status_code", .int(200))])
/// ```
public struct TraceSpan: Sendable, Hashable {
    /// A trace's 16-byte ID, never all zeros.
    public struct TraceID: Sendable, Hashable, CustomStringConvertible {
        /// Its first 8 bytes, big-endian.
        public let high: UInt64
        /// Its last 8 bytes, big-endian.
        public let low: UInt64

        /// The ID of these halves; `nil` when both are zero (the invalid ID).
        public init?(high: UInt64, low: UInt64) {
            guard high != 0 || low != 0 else { return nil }
            self.high = high
            self.low = low
        }

        /// The ID written as 32 lowercase hex digits (W3C Trace Context's form); `nil` for anything else or zero.
        public init?(hex: some StringProtocol) {
            guard hex.utf8.count == 32, let high = TraceSpan.hexNumber(hex.prefix(16)),
                let low = TraceSpan.hexNumber(hex.suffix(16))
            else { return nil }
            self.init(high: high, low: low)
        }

        /// A random ID, or with `timestamped`, AWS X-Ray's form: the first 4 bytes the time in seconds since 1970,
        /// the other 12 random (X-Ray takes only such IDs; every other backend takes them too).
        public static func random(timestamped: Bool = false, at date: Date = Date()) -> TraceID {
            var generator = TraceSpan.IDGenerator()
            while true {
                var high = generator.next() as UInt64
                if timestamped {
                    high = UInt64(UInt32(clamping: Int64(date.timeIntervalSince1970))) << 32 | (high & 0xFFFF_FFFF)
                }
                if let id = TraceID(high: high, low: generator.next()) { return id }
            }
        }

        /// The 16 bytes, big-endian.
        public var bytes: [UInt8] { TraceSpan.bigEndianBytes(high) + TraceSpan.bigEndianBytes(low) }
        /// 32 lowercase hex digits.
        public var description: String { TraceSpan.hex(high) + TraceSpan.hex(low) }
    }

    /// A span's 8-byte ID, never zero.
    public struct SpanID: Sendable, Hashable, CustomStringConvertible {
        /// The 8 bytes, big-endian.
        public let value: UInt64

        /// The ID `value`; `nil` when it is zero (the invalid ID).
        public init?(_ value: UInt64) {
            guard value != 0 else { return nil }
            self.value = value
        }

        /// The ID written as 16 lowercase hex digits; `nil` for anything else or zero.
        public init?(hex: some StringProtocol) {
            guard hex.utf8.count == 16, let value = TraceSpan.hexNumber(hex) else { return nil }
            self.init(value)
        }

        /// A random ID.
        public static func random() -> SpanID {
            var generator = TraceSpan.IDGenerator()
            while true { if let id = SpanID(generator.next()) { return id } }
        }

        /// The 8 bytes, big-endian.
        public var bytes: [UInt8] { TraceSpan.bigEndianBytes(value) }
        /// 16 lowercase hex digits.
        public var description: String { TraceSpan.hex(value) }
    }

    /// The random numbers of new IDs: xoshiro256** seeded once from the system's generator, as OpenTelemetry's
    /// SDKs use a fast generator rather than a system call for each ID (W3C asks IDs to be random, not secret).
    struct IDGenerator: RandomNumberGenerator {
        private static let state = Locked<(UInt64, UInt64, UInt64, UInt64)>(
            {
                var system = SystemRandomNumberGenerator()
                return (system.next(), system.next(), system.next(), system.next() | 1)
            }())

        mutating func next() -> UInt64 {
            Self.state.withLock { s in
                let result = (s.1 &* 5).rotated(by: 7) &* 9
                let t = s.1 << 17
                s.2 ^= s.0
                s.3 ^= s.1
                s.1 ^= s.2
                s.0 ^= s.3
                s.2 ^= t
                s.3 = s.3.rotated(by: 45)
                return result
            }
        }
    }

    /// What a span stands for, as OpenTelemetry's `SpanKind`.
    public enum Kind: Int, Sendable, Hashable {
        /// An operation inside the process.
        case `internal` = 1
        /// The handling of a request the process received.
        case server = 2
        /// A request the process sent.
        case client = 3
    }

    /// An attribute's value.
    public enum Value: Sendable, Hashable {
        /// Text.
        case string(String)
        /// An integer.
        case int(Int64)
        /// A floating-point number.
        case double(Double)
        /// True or false.
        case bool(Bool)
    }

    /// A named value describing a span (OpenTelemetry's semantic conventions name most of them).
    public struct Attribute: Sendable, Hashable {
        /// The name (`http.request.method`).
        public var key: String
        /// The value.
        public var value: Value

        /// The attribute `key` = `value`.
        public init(_ key: String, _ value: Value) {
            self.key = key
            self.value = value
        }
    }

    /// How the operation ended.
    public enum Status: Sendable, Hashable {
        /// Not said (OpenTelemetry's default: a success for most backends).
        case unset
        /// A success, said explicitly.
        case ok
        /// A failure, with what went wrong.
        case error(String)
    }

    /// The trace the span is part of.
    public var traceID: TraceID
    /// The span's own ID.
    public var spanID: SpanID
    /// The span it is part of; `nil` for a trace's root (or a span whose parent is in another process and unknown).
    public var parentSpanID: SpanID?
    /// W3C Trace Context's `tracestate`, passed on as received. Default empty.
    public var traceState: String
    /// What the span is (`/request`, `queue`, `downloading_image`).
    public var name: String
    /// Its kind.
    public var kind: Kind
    /// When it started.
    public var start: Date
    /// When it ended.
    public var end: Date
    /// Its attributes. Default none.
    public var attributes: [Attribute]
    /// Its outcome. Default ``Status-swift.enum/unset``.
    public var status: Status
    /// Whether the trace is sampled (W3C's `sampled` flag). Default `true`.
    public var isSampled: Bool

    /// A span from its parts (see the properties for the defaults).
    public init(
        traceID: TraceID, spanID: SpanID, parentSpanID: SpanID? = nil, traceState: String = "", name: String,
        kind: Kind, start: Date, end: Date, attributes: [Attribute] = [], status: Status = .unset,
        isSampled: Bool = true
    ) {
        self.traceID = traceID
        self.spanID = spanID
        self.parentSpanID = parentSpanID
        self.traceState = traceState
        self.name = name
        self.kind = kind
        self.start = start
        self.end = end
        self.attributes = attributes
        self.status = status
        self.isSampled = isSampled
    }

    /// The span as OTLP's `Span` message (opentelemetry/proto/trace/v1/trace.proto), into `writer`.
    func write(to writer: inout ProtobufWriter) {
        writer.data(1, traceID.bytes)
        writer.data(2, spanID.bytes)
        if !traceState.isEmpty { writer.string(3, traceState) }
        if let parentSpanID { writer.data(4, parentSpanID.bytes) }
        writer.string(5, name)
        writer.unsigned(6, UInt64(kind.rawValue))
        writer.fixed64(7, Self.nanoseconds(start))
        writer.fixed64(8, Self.nanoseconds(max(start, end)))
        for attribute in attributes { writer.message(9) { attribute.write(to: &$0) } }
        switch status {
        case .unset: break
        case .ok: writer.message(15) { $0.unsigned(3, 1) }
        case .error(let message):
            writer.message(15) {
                if !message.isEmpty { $0.string(2, message) }
                $0.unsigned(3, 2)
            }
        }
        writer.fixed32(16, isSampled ? 0x01 : 0x00)
    }

    /// Nanoseconds since 1970 (zero before it).
    package static func nanoseconds(_ date: Date) -> UInt64 {
        let seconds = date.timeIntervalSince1970
        return seconds <= 0 ? 0 : UInt64(seconds * 1_000_000) * 1_000
    }

    /// The number `text` writes in lowercase hex digits only, as W3C Trace Context requires (no sign, which
    /// `UInt64(_:radix:)` would take, and no capitals); `nil` for anything else or more than 16 digits.
    package static func hexNumber(_ text: some StringProtocol) -> UInt64? {
        guard text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else { return nil }
        return UInt64(text, radix: 16)
    }

    /// `value` as 16 lowercase hex digits.
    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// `value`'s 8 bytes, most significant first.
    static func bigEndianBytes(_ value: UInt64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}

extension TraceSpan.Attribute {
    /// The attribute as OTLP's `KeyValue` message, into `writer`.
    func write(to writer: inout ProtobufWriter) {
        writer.string(1, key)
        writer.message(2) { any in
            switch value {
            case .string(let text): any.string(1, text)
            case .bool(let flag): any.unsigned(2, flag ? 1 : 0)
            case .int(let number): any.signed(3, number)
            case .double(let number): any.double(4, number)
            }
        }
    }
}

extension UInt64 {
    /// The bits rotated left by `count`.
    fileprivate func rotated(by count: UInt64) -> UInt64 { (self << count) | (self >> (64 - count)) }
}
