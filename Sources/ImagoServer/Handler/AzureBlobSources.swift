import Foundation
import Imago

/// Where `abs://container/blob` sources are fetched from (imgproxy's `IMGPROXY_USE_ABS`, `IMGPROXY_ABS_NAME`,
/// `IMGPROXY_ABS_ENDPOINT`): the Blob Storage of one Azure storage account, or an emulator's (Azurite).
///
/// Private blobs need either the loader to sign for ``signedHosts`` (``CurlDataLoader/Configuration/azureSigning``
/// with an ``AzureSharedKeySigning`` of the account, as `imago serve --abs` sets up from `--abs-key`,
/// `IMAGO_ABS_KEY`), or ``tokens``: Entra ID bearer tokens (``AzureAccessTokens``, from the credentials
/// ``AzureCredentials/default(environment:assetTagFile:)`` finds), sent with every request; a token the service
/// refuses (HTTP 401) is dropped and the load tried once more with a new one. A source's query is ignored, as
/// imgproxy ignores it.
public struct AzureBlobSources: ObjectStoreAuthorizing, Hashable {
    /// The storage account (`media` of `media.blob.core.windows.net`).
    public var accountName: String
    /// The Blob service's URL, e.g. Azurite's `http://127.0.0.1:10000/devstoreaccount1`. Default `nil`:
    /// `https://ACCOUNT.blob.core.windows.net`.
    public var endpoint: URL?
    /// The Entra ID tokens sent with every request. Default `nil`: none (the loader's Shared Key signing, or public
    /// containers).
    public var tokens: AzureAccessTokens?

    /// The blobs of `accountName`, at `endpoint` (default `nil`: Azure's endpoint of the account), authorized by
    /// `tokens` (default none).
    public init(accountName: String, endpoint: URL? = nil, tokens: AzureAccessTokens? = nil) {
        self.accountName = accountName
        self.endpoint = endpoint
        self.tokens = tokens
    }

    /// `abs`.
    public var scheme: String { "abs" }

    /// `request` with `Authorization: Bearer TOKEN` from ``tokens`` and the `x-ms-version` bearer tokens need;
    /// unchanged without them.
    public func authorized(_ request: DataRequest) async throws(DataLoadingError) -> DataRequest {
        try await bearerAuthorized(request, by: tokens, fields: ["x-ms-version": AzureSharedKeySigning.version])
    }

    /// With ``tokens``, `true`: the refused token is dropped, so the load is tried again with a new one.
    public func refused(_ request: DataRequest) -> Bool {
        bearerRefused(request, by: tokens)
    }

    /// The Blob service's URL: ``endpoint``, else `https://ACCOUNT.blob.core.windows.net`.
    public var serviceURL: URL? {
        endpoint ?? URL(string: "https://\(ObjectStoreLoader.encoded(accountName)).blob.core.windows.net")
    }

    /// The hosts whose requests carry Shared Key signatures: the ``AzureSharedKeySigning/hosts`` of these sources.
    public var signedHosts: [String] {
        guard let service = serviceURL, let (host, port) = HostPatterns.hostAndPort(of: service) else { return [] }
        return ["\(host):\(port)"]
    }

    /// The HTTP URL of `source` (`abs://container/blob`), the blob name URI-encoded segment by segment; `nil` for a
    /// URL that is not `abs:` or has no container or blob.
    public func httpURL(for source: URL) -> URL? {
        guard let (container, blob) = ObjectStoreLoader.bucketAndKey(of: source, scheme: scheme), let serviceURL
        else { return nil }
        return URL(string: ObjectStoreLoader.pathStyleURL(base: serviceURL, bucket: container, key: blob))
    }
}
