import Foundation
import Imago

/// How the sources of one storage service's URL scheme (`s3://bucket/key`, `abs://container/blob`) map to the
/// HTTP URLs they are fetched from: ``S3Sources``, ``AzureBlobSources``.
public protocol ObjectStoreMapping: Sendable {
    /// The URL scheme of the sources, lowercased (`s3`, `abs`).
    var scheme: String { get }
    /// The HTTP URL of `source`; `nil` for a URL of another scheme or without a bucket (container) or key.
    func httpURL(for source: URL) -> URL?
}

extension ObjectStoreMapping {
    /// An endpoint URL as the stores take it (`--s3-endpoint`, `--abs-endpoint`): with `http://` in front when it
    /// has no scheme, as imgproxy does; `nil` unless the result is an http or https URL with a host, no user, query
    /// or fragment.
    public static func endpoint(parsing text: String) -> URL? {
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let url = URL(string: withScheme), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", url.host()?.isEmpty == false, url.query == nil,
            url.fragment == nil, url.user == nil
        else { return nil }
        return url
    }
}

/// An object store whose requests carry a token fetched before each load (a bearer token that expires:
/// ``GoogleCloudStorageSources``; a token that comes with the storage's address: ``OpenStackSwiftSources``),
/// where ``ObjectStoreMapping``'s stores are signed by the loader.
public protocol ObjectStoreAuthorizing: ObjectStoreMapping {
    /// `request` as it is sent now: at ``ObjectStoreMapping/httpURL(for:)``'s URL (which, for a store whose address
    /// comes with its token, is relative to that address, and resolved here), with the header fields a token
    /// gives.
    ///
    /// - Throws: ``DataLoadingError``, which fails the load.
    func authorized(_ request: DataRequest) async throws(DataLoadingError) -> DataRequest

    /// Whether a load of `request` (as ``authorized(_:)`` made it) that the store refused with HTTP 401 is tried
    /// once more, with a token fetched again: the store dropped the one refused. Default `false`.
    func refused(_ request: DataRequest) -> Bool
}

extension ObjectStoreAuthorizing {
    /// `false`: a refused load fails.
    public func refused(_ request: DataRequest) -> Bool { false }

    /// `request` with `Authorization` from `tokens` and `fields` beside it; unchanged without tokens. For stores
    /// authorized by OAuth bearer tokens (``GoogleCloudStorageSources``, ``AzureBlobSources``).
    func bearerAuthorized(
        _ request: DataRequest, by tokens: (any BearerTokens)?, fields: [String: String] = [:]
    ) async throws(DataLoadingError) -> DataRequest {
        guard let tokens else { return request }
        var authorized = request
        authorized.headers["Authorization"] = try await tokens.authorization()
        for (name, value) in fields { authorized.headers[name] = value }
        return authorized
    }

    /// With `tokens`, `true` after dropping the token `request` carried, so the load is tried again with a new one.
    func bearerRefused(_ request: DataRequest, by tokens: (any BearerTokens)?) -> Bool {
        guard let tokens, let authorization = request.headers["Authorization"] else { return false }
        tokens.refused(authorization: authorization)
        return true
    }
}

/// Loads the sources of the object stores it is given (``ObjectStoreMapping``) through `remote` at the HTTP URLs
/// they map to, and hands every other URL to `remote` unchanged.
///
/// `remote` signs what needs signing (``CurlDataLoader/Configuration/awsSigning`` and
/// ``CurlDataLoader/Configuration/azureSigning`` for the stores' hosts); its address policy, limits, retries and
/// resumption apply to these loads as to any other. A source without a bucket or key fails as HTTP 404 would.
package struct ObjectStoreLoader: DataLoading {
    /// The stores, by scheme.
    let stores: [String: any ObjectStoreMapping]
    /// Loads the mapped URLs and every URL of no store's scheme.
    let remote: any DataLoading

    /// A loader of the sources of `stores` as they map them, and of other URLs, through `remote`.
    package init(stores: [any ObjectStoreMapping], remote: any DataLoading) {
        self.stores = Dictionary(stores.map { ($0.scheme, $0) }, uniquingKeysWith: { first, _ in first })
        self.remote = remote
    }

    package func load(_ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void) -> any DataLoadTask
    {
        guard let scheme = request.url.scheme?.lowercased(), let store = stores[scheme] else {
            return remote.load(request, handler: handler)
        }
        guard let url = store.httpURL(for: request.url) else {
            let source = request.url
            return OneShotLoadTask(handler: handler) { .failure(.statusCode(404, url: source)) }
        }
        var mapped = request
        mapped.url = url
        guard let authorizing = store as? any ObjectStoreAuthorizing else {
            return remote.load(mapped, handler: handler)
        }
        return AuthorizedLoadTask(mapped, store: authorizing, remote: remote, handler: handler)
    }

    /// The bucket (container) and key (blob name) of `source`, percent-decoded: its host and its path without
    /// the leading slashes; `nil` when `source` is not of `scheme` or either is empty.
    static func bucketAndKey(of source: URL, scheme: String) -> (bucket: String, key: String)? {
        guard source.scheme?.lowercased() == scheme, let bucket = source.host(percentEncoded: false), !bucket.isEmpty
        else { return nil }
        let key = String(source.path(percentEncoded: false).drop { $0 == "/" })
        return key.isEmpty ? nil : (bucket, key)
    }

    /// `base` (an endpoint URL, without its trailing `/`), then `/BUCKET/KEY`, each URI-encoded as
    /// ``encodedPath(_:)`` encodes: the path-style address of an object.
    static func pathStyleURL(base: URL, bucket: String, key: String) -> String {
        joined(base, "\(encoded(bucket))/\(encodedPath(key))")
    }

    /// `base` without its trailing `/`, then `/` and `path` (already percent-encoded).
    static func joined(_ base: URL, _ path: String) -> String {
        let text = base.absoluteString
        return (text.hasSuffix("/") ? String(text.dropLast()) : text) + "/" + path
    }

    /// `key` with each `/`-separated segment URI-encoded as the stores' signatures canonicalise paths: every
    /// UTF-8 byte but `A–Z a–z 0–9 - . _ ~` as `%XX`.
    static func encodedPath(_ key: String) -> String {
        key.split(separator: "/", omittingEmptySubsequences: false).map { encoded(String($0)) }.joined(separator: "/")
    }

    /// `text` URI-encoded: every UTF-8 byte but `A–Z a–z 0–9 - . _ ~` (RFC 3986's unreserved characters) as `%XX`.
    static func encoded(_ text: String) -> String { PercentEncoding.unreserved(text) }
}
