import Foundation
import Imago

/// Where `gs://bucket/object` sources are fetched from (imgproxy's `IMGPROXY_USE_GCS`, `IMGPROXY_GCS_KEY`,
/// `IMGPROXY_GCS_ENDPOINT`): Google Cloud Storage's XML API, `https://storage.googleapis.com/BUCKET/OBJECT`, or an
/// endpoint that speaks it (an emulator).
///
/// A source's query, if any, is the object's generation (`gs://bucket/object?GENERATION`). With ``tokens`` (a
/// service account's, ``GoogleAccessTokens``), every request carries `Authorization: Bearer …`, and a token Cloud
/// Storage refuses (HTTP 401) is dropped and the load tried once more with a new one; without, objects must be
/// public.
public struct GoogleCloudStorageSources: ObjectStoreAuthorizing {
    /// The endpoint (without a scheme, `http://` is assumed, as imgproxy does). Default `nil`:
    /// `https://storage.googleapis.com`.
    public var endpoint: URL?
    /// The service account's tokens sent with every request. Default `nil`: none (public objects only).
    public var tokens: GoogleAccessTokens?

    /// Sources of `endpoint` (default Google's), authorized by `tokens` (default none).
    public init(endpoint: URL? = nil, tokens: GoogleAccessTokens? = nil) {
        self.endpoint = endpoint
        self.tokens = tokens
    }

    /// `gs`.
    public var scheme: String { "gs" }

    /// The HTTP URL of `source` (`gs://bucket/object[?generation]`): `ENDPOINT/BUCKET/OBJECT[?generation=N]`,
    /// each path segment percent-encoded; `nil` for a URL that is not `gs:` or has no bucket or object.
    public func httpURL(for source: URL) -> URL? {
        guard let (bucket, key) = ObjectStoreLoader.bucketAndKey(of: source, scheme: scheme) else { return nil }
        let base = endpoint ?? URL(string: "https://storage.googleapis.com")!
        var text = ObjectStoreLoader.pathStyleURL(base: base, bucket: bucket, key: key)
        if let generation = source.query(percentEncoded: false), !generation.isEmpty {
            text += "?generation=" + ObjectStoreLoader.encoded(generation)
        }
        return URL(string: text)
    }

    /// `request` with `Authorization: Bearer TOKEN` from ``tokens``; unchanged without them.
    public func authorized(_ request: DataRequest) async throws(DataLoadingError) -> DataRequest {
        try await bearerAuthorized(request, by: tokens)
    }

    /// With ``tokens``, `true`: the refused token is dropped, so the load is tried again with a new one.
    public func refused(_ request: DataRequest) -> Bool {
        bearerRefused(request, by: tokens)
    }
}
