import Foundation
import Imago

/// Where `s3://bucket/key` sources are fetched from (imgproxy's `IMGPROXY_USE_S3`, `IMGPROXY_S3_REGION`,
/// `IMGPROXY_S3_ENDPOINT`, `IMGPROXY_S3_ENDPOINT_USE_PATH_STYLE`): AWS S3 in one region, or an S3-compatible
/// endpoint (MinIO, Ceph, R2 …).
///
/// A source's query, if any, is the object's version (`s3://bucket/key?VERSION`, as imgproxy reads it). Private
/// objects need the loader to sign for ``signedHosts``: ``CurlDataLoader/Configuration/awsSigning`` with an
/// ``AWSSigning`` for those hosts, as `imago serve --s3` sets up from the `AWS_ACCESS_KEY_ID` and
/// `AWS_SECRET_ACCESS_KEY` environment variables.
public struct S3Sources: Sendable, Hashable {
    /// The region of the buckets (`us-east-1`, `eu-west-1` …). Default `us-east-1`.
    public var region: String
    /// An S3-compatible endpoint (`http://minio:9000`; without a scheme, `http://` is assumed, as imgproxy does).
    /// Default `nil`: AWS's endpoint of ``region``, `https://BUCKET.s3.REGION.amazonaws.com/KEY` (path-style,
    /// `https://s3.REGION.amazonaws.com/BUCKET/KEY`, for bucket names with dots, which TLS wildcards do not cover).
    public var endpoint: URL?
    /// With ``endpoint``, whether objects are addressed as `ENDPOINT/BUCKET/KEY` (`true`) or
    /// `BUCKET.ENDPOINT-HOST/KEY` (`false`). Default `true`, as imgproxy's.
    public var usesPathStyle: Bool

    /// Sources in `region` (default `us-east-1`) of AWS, or of `endpoint` (default `nil`: AWS), path-style by
    /// default with an endpoint.
    public init(region: String = "us-east-1", endpoint: URL? = nil, usesPathStyle: Bool = true) {
        self.region = region
        self.endpoint = endpoint
        self.usesPathStyle = usesPathStyle
    }

    /// `endpoint` as ``endpoint`` takes it: with `http://` in front when it has no scheme; `nil` unless the result
    /// is an http or https URL with a host and nothing after its path.
    public static func endpoint(parsing text: String) -> URL? {
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let url = URL(string: withScheme), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", url.host()?.isEmpty == false, url.query == nil,
            url.fragment == nil, url.user == nil
        else { return nil }
        return url
    }

    /// The hosts whose requests carry S3 signatures: the ``AWSSigning/hosts`` of these sources.
    public var signedHosts: [String] {
        guard let endpoint, let host = endpoint.host(percentEncoded: false)?.lowercased() else {
            return ["*.s3.\(region).amazonaws.com", "s3.\(region).amazonaws.com"]
        }
        let port = endpoint.port ?? (endpoint.scheme?.lowercased() == "https" ? 443 : 80)
        return usesPathStyle ? ["\(host):\(port)"] : ["*.\(host)"]
    }

    /// The HTTP URL of `source` (`s3://bucket/key[?version]`), the key and version encoded as Signature Version 4
    /// canonicalises them (so the signed path is the path sent); `nil` for a URL that is not `s3:` or has no
    /// bucket or key.
    public func httpURL(for source: URL) -> URL? {
        guard source.scheme?.lowercased() == "s3", let bucket = source.host(percentEncoded: false), !bucket.isEmpty
        else { return nil }
        let key = String(source.path(percentEncoded: false).drop { $0 == "/" })
        guard !key.isEmpty else { return nil }
        let path = key.split(separator: "/", omittingEmptySubsequences: false).map { Self.encoded(String($0)) }
            .joined(separator: "/")
        var text: String
        if let endpoint {
            let scheme = endpoint.scheme?.lowercased() ?? "http"
            let host = endpoint.host(percentEncoded: true) ?? ""
            let port = endpoint.port.map { ":\($0)" } ?? ""
            let base = endpoint.path(percentEncoded: true).trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            let prefix = base.isEmpty ? "" : "/" + base
            text =
                usesPathStyle
                ? "\(scheme)://\(host)\(port)\(prefix)/\(Self.encoded(bucket))/\(path)"
                : "\(scheme)://\(Self.encoded(bucket)).\(host)\(port)\(prefix)/\(path)"
        } else if bucket.contains(".") {
            text = "https://s3.\(region).amazonaws.com/\(Self.encoded(bucket))/\(path)"
        } else {
            text = "https://\(Self.encoded(bucket)).s3.\(region).amazonaws.com/\(path)"
        }
        if let version = source.query(percentEncoded: false), !version.isEmpty {
            text += "?versionId=" + Self.encoded(version)
        }
        return URL(string: text)
    }

    /// `text` URI-encoded as Signature Version 4 does: every UTF-8 byte but `A–Z a–z 0–9 - . _ ~` as `%XX`.
    static func encoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }
}
