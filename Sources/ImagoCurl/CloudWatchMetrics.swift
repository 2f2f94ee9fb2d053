import Foundation

/// Puts gauges into Amazon CloudWatch (imgproxy's `IMGPROXY_CLOUD_WATCH_*`), for dashboards and for scaling a
/// service on them (ECS's target tracking on `WorkersUtilization`): one `PutMetricData` call of the query API,
/// signed with Signature Version 4 for `monitoring` by libcurl, each datum with the `ServiceName` dimension.
///
/// ```swift
/// let cloudWatch = CloudWatchMetrics(namespace: "imago", serviceName: "images", region: "eu-west-1")
/// try await cloudWatch.put([.init(name: "RequestsInProgress", value: 3, unit: .count)], credentials: credentials)
/// ```
public struct CloudWatchMetrics: Sendable, Hashable {
    /// One value of one metric.
    public struct Datum: Sendable, Hashable {
        /// CloudWatch's units the proxy's gauges use.
        public enum Unit: String, Sendable, Hashable {
            /// A count of things (requests, connections): `Count`.
            case count = "Count"
            /// A share from 0 to 100: `Percent`.
            case percent = "Percent"
            /// A size in bytes: `Bytes`.
            case bytes = "Bytes"
        }

        /// The metric's name (`RequestsInProgress`).
        public var name: String
        /// Its value now.
        public var value: Double
        /// Its unit.
        public var unit: Unit

        /// A datum from its parts.
        public init(name: String, value: Double, unit: Unit) {
            self.name = name
            self.value = value
            self.unit = unit
        }
    }

    /// Why a put failed.
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// What went wrong, never with a secret.
        public var description: String
    }

    /// The metrics' namespace (`imago`).
    public var namespace: String
    /// The `ServiceName` dimension's value.
    public var serviceName: String
    /// The region.
    public var region: String
    /// CloudWatch's endpoint. Default `https://monitoring.REGION.amazonaws.com`.
    public var endpoint: URL

    /// Puts into `namespace` with the `ServiceName` dimension `serviceName`, in `region`, at `endpoint` (default:
    /// the region's).
    public init(namespace: String, serviceName: String, region: String, endpoint: URL? = nil) {
        self.namespace = namespace
        self.serviceName = serviceName
        self.region = region
        self.endpoint = endpoint ?? URL(string: "https://monitoring.\(region).amazonaws.com/")!
    }

    /// The form body of a `PutMetricData` call of `data`.
    func form(_ data: [Datum]) -> String {
        var pairs = [("Action", "PutMetricData"), ("Version", "2010-08-01"), ("Namespace", namespace)]
        for (i, datum) in data.enumerated() {
            let member = "MetricData.member.\(i + 1)."
            pairs += [
                (member + "MetricName", datum.name), (member + "Unit", datum.unit.rawValue),
                (member + "Value", String(datum.value)),
                (member + "Dimensions.member.1.Name", "ServiceName"),
                (member + "Dimensions.member.1.Value", serviceName),
            ]
        }
        return PercentEncoding.form(pairs)
    }

    /// Puts `data` (at most 1,000 data, CloudWatch's limit for one call).
    ///
    /// - Throws: ``Error`` naming the status and CloudWatch's error code.
    public func put(
        _ data: [Datum], credentials: AWSSigning.Credentials, timeout: Duration = .seconds(30)
    ) async throws(Error) {
        guard !data.isEmpty else { return }
        guard data.count <= 1000 else { throw Error(description: "CloudWatch takes at most 1,000 data a call") }
        let exchange = CurlExchange.awsPOST(
            endpoint, fields: ["Content-Type: application/x-www-form-urlencoded"], body: form(data), region: region,
            service: "monitoring", credentials: credentials, timeout: timeout)
        let answer: CurlExchange.Answer
        do {
            answer = try await exchange.perform()
        } catch {
            throw Error(description: "PutMetricData at \(endpoint.absoluteString): \(error)")
        }
        guard answer.status == 200 else {
            let code = AWSCredentialProvider.element("Code", in: String(decoding: answer.data, as: UTF8.self))
            throw Error(description: "PutMetricData answered HTTP \(answer.status)\(code.map { " (\($0))" } ?? "")")
        }
    }
}
