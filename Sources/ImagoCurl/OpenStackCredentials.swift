import Foundation

/// Who signs in to an OpenStack identity service (Keystone, or Swift's own v1 auth) for Swift object storage,
/// as imgproxy's `IMGPROXY_SWIFT_*` settings say it: ``OpenStackTokens`` trades them for a token and the storage
/// URL.
public struct OpenStackCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The identity service's URL: `…/v3` (Keystone v3), `…/v2.0` (Keystone v2) or `…/auth/v1.0` (v1).
    public var authURL: URL
    /// The user name (v1's `X-Auth-User`).
    public var username: String
    /// The password or API key (v1's `X-Auth-Key`). Never printed.
    public var apiKey: String
    /// The user's and project's domain name (v3 only). Default empty: `Default`.
    public var domain: String
    /// The project (tenant) name the token is scoped to (v2 and v3). Default empty: none.
    public var tenant: String
    /// The auth API version: 1, 2 or 3; 0 (the default) reads it from ``authURL`` (`v3`, `v2`, `v1` in it, in that
    /// order), as imgproxy's Swift client does.
    public var authVersion: Int

    /// Credentials for `username` with `apiKey` at `authURL` (in `domain` and scoped to `tenant` when given; the
    /// version read from the URL unless `authVersion` is 1, 2 or 3).
    public init(
        authURL: URL, username: String, apiKey: String, domain: String = "", tenant: String = "", authVersion: Int = 0
    ) {
        self.authURL = authURL
        self.username = username
        self.apiKey = apiKey
        self.domain = domain
        self.tenant = tenant
        self.authVersion = authVersion
    }

    /// The version used: ``authVersion`` when 1, 2 or 3, else the one the URL names; `nil` when neither says.
    public var resolvedVersion: Int? {
        if (1...3).contains(authVersion) { return authVersion }
        guard authVersion == 0 else { return nil }
        let text = authURL.absoluteString
        if text.contains("v3") { return 3 }
        if text.contains("v2") { return 2 }
        if text.contains("v1") { return 1 }
        return nil
    }

    /// The URL, user, domain and tenant; never the key.
    public var description: String {
        "OpenStack user \(username)\(domain.isEmpty ? "" : "@\(domain)")\(tenant.isEmpty ? "" : " (\(tenant))") at "
            + authURL.absoluteString
    }
}
