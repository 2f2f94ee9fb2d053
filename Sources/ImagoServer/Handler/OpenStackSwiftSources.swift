import Foundation
import Imago

/// Where `swift://container/object` sources are fetched from (imgproxy's `IMGPROXY_USE_SWIFT` and
/// `IMGPROXY_SWIFT_*`): OpenStack Swift object storage, at the storage URL the identity service names with each
/// token (``OpenStackTokens``), with `X-Auth-Token`.
///
/// A token the storage refuses (HTTP 401: it expired or was revoked early) is dropped and the load tried once
/// more with a new one, as imgproxy's Swift client does.
public struct OpenStackSwiftSources: ObjectStoreAuthorizing {
    /// The tokens and storage URL every request is made with.
    public var tokens: OpenStackTokens

    /// Sources of the account `tokens` sign in to.
    public init(tokens: OpenStackTokens) {
        self.tokens = tokens
    }

    /// `swift`.
    public var scheme: String { "swift" }

    /// The path of `source` (`swift://container/object`) relative to the storage URL, `CONTAINER/OBJECT` with each
    /// segment percent-encoded: the address comes with the token (``authorized(_:)``). `nil` for a URL that is not
    /// `swift:` or has no container or object.
    public func httpURL(for source: URL) -> URL? {
        guard let (container, object) = ObjectStoreLoader.bucketAndKey(of: source, scheme: scheme) else { return nil }
        return URL(string: ObjectStoreLoader.encoded(container) + "/" + ObjectStoreLoader.encodedPath(object))
    }

    /// `request` at the storage URL of the session kept (or a new one), with its `X-Auth-Token`.
    public func authorized(_ request: DataRequest) async throws(DataLoadingError) -> DataRequest {
        let session = try await tokens.session()
        guard let url = URL(string: ObjectStoreLoader.joined(session.storageURL, request.url.relativeString)) else {
            throw .requestModifierFailed(url: session.storageURL, reason: "the storage URL cannot take the object")
        }
        var authorized = request
        authorized.url = url
        authorized.headers["X-Auth-Token"] = session.token
        return authorized
    }

    /// `true`: the refused token is dropped, so the load is tried again after a new sign-in.
    public func refused(_ request: DataRequest) -> Bool {
        guard let token = request.headers["X-Auth-Token"] else { return false }
        tokens.refused(token: token)
        return true
    }
}
