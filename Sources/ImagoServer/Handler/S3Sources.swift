import Foundation
import Imago

/// Where `s3://bucket/key` sources are fetched from (imgproxy's `IMGPROXY_USE_S3`, `IMGPROXY_S3_REGION`,
/// `IMGPROXY_S3_ENDPOINT`, `IMGPROXY_S3_ENDPOINT_USE_PATH_STYLE`): AWS S3 in one region, or an S3-compatible
/// endpoint (MinIO, Ceph, R2 …).
///
/// A source's query, if any, is the object's version (`s3://bucket/key?VERSION`, as imgproxy reads it). Private
/// objects need the loader to sign for ``signedHosts``: ``CurlDataLoader/Configuration/awsSigning`` with an
/// ``AWSSigning`` for those hosts, as `imago serve --s3` sets up from the credentials the AWS SDKs' default chain
/// finds (``AWSCredentialSource/default(environment:systemVendorFile:)``). With ``credentials``, temporary ones
/// (a role's) are fetched or renewed before each load, and the signing made with the same provider uses them.
public struct S3Sources: ObjectStoreAuthorizing, Hashable {
    /// The region of the buckets (`us-east-1`, `eu-west-1` …). Default `us-east-1`.
    public var region: String
    /// An S3-compatible endpoint (`http://minio:9000`; without a scheme, `http://` is assumed, as imgproxy does).
    /// Default `nil`: AWS's endpoint of ``region``, `https://BUCKET.s3.REGION.amazonaws.com/KEY` (path-style,
    /// `https://s3.REGION.amazonaws.com/BUCKET/KEY`, for bucket names with dots, which TLS wildcards do not cover).
    public var endpoint: URL?
    /// With ``endpoint``, whether objects are addressed as `ENDPOINT/BUCKET/KEY` (`true`) or
    /// `BUCKET.ENDPOINT-HOST/KEY` (`false`). Default `true`, as imgproxy's.
    public var usesPathStyle: Bool
    /// The provider whose credentials the loader's ``AWSSigning`` signs with, fetched before each load. Default
    /// `nil`: the signing's own credentials, or none.
    public var credentials: AWSCredentialProvider?
    /// The access points some buckets' objects are fetched through, by bucket name (imgproxy's
    /// `IMGPROXY_S3_ACCESS_POINTS`): `s3://BUCKET/KEY` is then `https://` the access point's
    /// ``S3AccessPoint/host`` `/KEY`, signed for its region (``accessPointSigningHosts``). AWS's only: not used
    /// with ``endpoint``. Default none.
    public var accessPoints: [String: S3AccessPoint] = [:]

    /// Sources in `region` (default `us-east-1`) of AWS, or of `endpoint` (default `nil`: AWS), path-style by
    /// default with an endpoint.
    public init(region: String = "us-east-1", endpoint: URL? = nil, usesPathStyle: Bool = true) {
        self.region = region
        self.endpoint = endpoint
        self.usesPathStyle = usesPathStyle
    }

    /// The hosts of ``accessPoints`` by the region they are signed for, each list sorted: one ``AWSSigning`` each,
    /// beside the one for ``signedHosts``. Empty with ``endpoint``.
    public var accessPointSigningHosts: [String: [String]] {
        guard endpoint == nil else { return [:] }
        return Dictionary(grouping: Set(accessPoints.values), by: \.region).mapValues { $0.map(\.host).sorted() }
    }

    /// The hosts whose requests carry S3 signatures in ``region``: the ``AWSSigning/hosts`` of these sources
    /// (access points apart: ``accessPointSigningHosts``).
    public var signedHosts: [String] {
        guard let endpoint else { return ["*.s3.\(region).amazonaws.com", "s3.\(region).amazonaws.com"] }
        guard let (host, port) = HostPatterns.hostAndPort(of: endpoint) else { return [] }
        return usesPathStyle ? ["\(host):\(port)"] : ["*.\(host)"]
    }

    /// `s3`.
    public var scheme: String { "s3" }

    /// `request` unchanged, once ``credentials`` holds credentials good for it (fetched or renewed now if need
    /// be): the loader's signing reads them.
    ///
    /// - Throws: ``DataLoadingError/requestModifierFailed(url:reason:)`` when they cannot be fetched.
    public func authorized(_ request: DataRequest) async throws(DataLoadingError) -> DataRequest {
        if let credentials { _ = try await credentials.credentials() }
        return request
    }

    /// The HTTP URL of `source` (`s3://bucket/key[?version]`), through the bucket's access point if it has one, the
    /// key and version encoded as Signature Version 4 canonicalises them (so the signed path is the path sent);
    /// `nil` for a URL that is not `s3:` or has no bucket or key.
    public func httpURL(for source: URL) -> URL? {
        guard let (bucket, key) = ObjectStoreLoader.bucketAndKey(of: source, scheme: scheme) else { return nil }
        let path = ObjectStoreLoader.encodedPath(key)
        let encodedBucket = ObjectStoreLoader.encoded(bucket)
        var text: String
        if endpoint == nil, let point = accessPoints[bucket] {
            text = "https://\(point.host)/\(path)"
        } else if let endpoint {
            let scheme = endpoint.scheme?.lowercased() ?? "http"
            let host = endpoint.host(percentEncoded: true) ?? ""
            let port = endpoint.port.map { ":\($0)" } ?? ""
            let base = endpoint.path(percentEncoded: true).trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            let prefix = base.isEmpty ? "" : "/" + base
            text =
                usesPathStyle
                ? "\(scheme)://\(host)\(port)\(prefix)/\(encodedBucket)/\(path)"
                : "\(scheme)://\(encodedBucket).\(host)\(port)\(prefix)/\(path)"
        } else if bucket.contains(".") {
            text = "https://s3.\(region).amazonaws.com/\(encodedBucket)/\(path)"
        } else {
            text = "https://\(encodedBucket).s3.\(region).amazonaws.com/\(path)"
        }
        if let version = source.query(percentEncoded: false), !version.isEmpty {
            text += "?versionId=" + ObjectStoreLoader.encoded(version)
        }
        return URL(string: text)
    }
}
