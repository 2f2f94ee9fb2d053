import Foundation
import ImagoCore
import Synchronization

/// Reports errors to Sentry (imgproxy's `IMGPROXY_SENTRY_DSN`, `…_ENVIRONMENT`, `…_RELEASE`): each one an event
/// POSTed as an envelope to the project's `/api/PROJECT/envelope/` with the DSN's public key, by libcurl on a
/// thread of its own, so a report never holds up a request.
///
/// Reports are fire-and-forget: at most ``maximumInFlight`` are sent at once and more are dropped (counted in
/// ``droppedCount``), so an outage of Sentry, or a flood of errors, costs a bounded number of threads and
/// connections. Messages should carry no secret: the proxy's access records have source URLs redacted.
///
/// ```swift
/// let sentry = SentryClient(dsn: SentryClient.DSN("https://key@o1.ingest.sentry.io/42")!)
/// sentry.capture("the origin answered HTTP 500", tags: ["status": "502"])
/// ```
public final class SentryClient: Sendable {
    /// A Sentry DSN: `SCHEME://PUBLIC_KEY@HOST[:PORT][/PATH]/PROJECT_ID`.
    public struct DSN: Sendable, Hashable, CustomStringConvertible {
        /// The project's public key.
        public let publicKey: String
        /// Where events go: `SCHEME://HOST[:PORT][/PATH]/api/PROJECT_ID/envelope/`.
        public let envelopeURL: URL

        /// The DSN `text` names; `nil` unless it is an http or https URL with a public key and a project ID.
        public init?(_ text: String) {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                ["http", "https"].contains(scheme),
                let host = url.host(percentEncoded: true), !host.isEmpty, let key = url.user(percentEncoded: false),
                !key.isEmpty
            else { return nil }
            var path = url.path(percentEncoded: true).split(separator: "/").map(String.init)
            guard let project = path.popLast(), !project.isEmpty, project.allSatisfy(\.isNumber) else { return nil }
            let port = url.port.map { ":\($0)" } ?? ""
            let prefix = path.map { "/" + $0 }.joined()
            guard let envelope = URL(string: "\(scheme)://\(host)\(port)\(prefix)/api/\(project)/envelope/") else {
                return nil
            }
            publicKey = key
            envelopeURL = envelope
        }

        /// The envelope URL, without the key.
        public var description: String { envelopeURL.absoluteString }
    }

    /// Where events go.
    public let dsn: DSN
    /// The environment events are filed under. Default `production`.
    public let environment: String
    /// The release events name. Default `imago@VERSION`.
    public let release: String
    /// The most reports sent at once. Default 8.
    public let maximumInFlight: Int
    /// How long one report may take. Default 10 s.
    public let timeout: Duration

    private let inFlight = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    private let delivered = Atomic<Int>(0)

    /// A client for `dsn`, filing events under `environment` (default `production`) and `release` (default
    /// `imago@VERSION`), sending at most `maximumInFlight` (default 8) at once, each within `timeout` (10 s).
    public init(
        dsn: DSN, environment: String = "production", release: String = "imago@" + ImagoVersion.current,
        maximumInFlight: Int = 8, timeout: Duration = .seconds(10)
    ) {
        self.dsn = dsn
        self.environment = environment
        self.release = release
        self.maximumInFlight = max(1, maximumInFlight)
        self.timeout = timeout
    }

    /// Reports dropped because ``maximumInFlight`` were being sent.
    public var droppedCount: Int { dropped.load(ordering: .relaxed) }
    /// Reports Sentry accepted (HTTP 200).
    public var deliveredCount: Int { delivered.load(ordering: .relaxed) }

    /// Sends an event of `message` at `level` (default `error`) with `tags` and the request it concerns, unless
    /// ``maximumInFlight`` are being sent already. Returns at once; `false` when the report was dropped.
    @discardableResult
    public func capture(
        _ message: String, level: String = "error", tags: [String: String] = [:],
        request: (method: String, url: String)? = nil
    ) -> Bool {
        guard inFlight.add(1, ordering: .relaxed).newValue <= maximumInFlight else {
            inFlight.subtract(1, ordering: .relaxed)
            dropped.add(1, ordering: .relaxed)
            return false
        }
        let exchange = self.exchange(message, level: level, tags: tags, request: request, at: Date())
        Task.detached { [self] in
            defer { inFlight.subtract(1, ordering: .relaxed) }
            if let answer = try? await exchange.perform(), answer.status == 200 {
                delivered.add(1, ordering: .relaxed)
            }
        }
        return true
    }

    /// The envelope POST of one event.
    func exchange(
        _ message: String, level: String, tags: [String: String], request: (method: String, url: String)?, at date: Date
    ) -> CurlExchange {
        let id = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let stamp = date.formatted(.iso8601)
        let event = Event(
            eventID: id, timestamp: date.timeIntervalSince1970, level: level, message: .init(formatted: message),
            environment: environment, release: release, tags: tags, serverName: ProcessInfo.processInfo.hostName,
            sdk: .init(name: "imago", version: ImagoVersion.current),
            request: request.map { .init(method: $0.method, url: $0.url) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = (try? encoder.encode(event)) ?? Data("{}".utf8)
        let header = #"{"event_id":"\#(id)","sent_at":"\#(stamp)"}"#
        let item = #"{"type":"event","length":\#(body.count)}"#
        let envelope = header + "\n" + item + "\n" + String(decoding: body, as: UTF8.self) + "\n"
        return CurlExchange(
            url: dsn.envelopeURL,
            fields: [
                "Content-Type: application/x-sentry-envelope",
                "X-Sentry-Auth: Sentry sentry_version=7, sentry_client=imago/\(ImagoVersion.current), "
                    + "sentry_key=\(dsn.publicKey)",
            ],
            body: envelope, timeout: timeout)
    }

    /// A Sentry event, as the envelope's item carries it (Sentry's field names).
    private struct Event: Encodable {
        struct Message: Encodable { var formatted: String }
        struct SDK: Encodable {
            var name: String
            var version: String
        }
        struct Request: Encodable {
            var method: String
            var url: String
        }
        var eventID: String
        var timestamp: Double
        var platform = "other"
        var level: String
        var logger = "imago.serve"
        var message: Message
        var environment: String
        var release: String
        var tags: [String: String]
        var serverName: String
        var sdk: SDK
        var request: Request?

        private enum CodingKeys: String, CodingKey {
            case eventID = "event_id"
            case serverName = "server_name"
            case timestamp, platform, level, logger, message, environment, release, tags, sdk, request
        }
    }
}
