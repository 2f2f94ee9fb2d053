import Foundation
import ImagoCore

/// Which sources get the client's cookies (imgproxy's `IMGPROXY_COOKIE_PASSTHROUGH`), for origins that serve
/// images by session: the request's `Cookie` header is sent with the source's fetch. An output made with cookies is
/// the client's own: it is never cached in any tier nor shared with another request, and is answered
/// `Cache-Control: private`.
///
/// ```swift
/// configuration.cookiePassthrough = .sameHost(baseURL: URL(string: "https://app.example.com/"))
/// ```
public enum CookiePassthrough: Sendable, Hashable {
    /// To sources on the host of `baseURL` (imgproxy's `IMGPROXY_COOKIE_BASE_URL`), or with none, on the host
    /// the request was sent to (`X-Forwarded-Host`, else `Host`, without the port): cookies as a browser would
    /// send them to that host alone.
    case sameHost(baseURL: URL?)
    /// To every source (imgproxy's `IMGPROXY_COOKIE_PASSTHROUGH_ALL`).
    case all

    /// The `Cookie` header `request` passes on to `source`, or `nil` when it has none or the source is not on the
    /// host its cookies are for.
    func cookie(for request: ServerRequest, source: URL) -> String? {
        guard let cookie = request.headers["cookie"], !cookie.isEmpty else { return nil }
        switch self {
        case .all:
            return cookie
        case .sameHost(let baseURL):
            let host =
                baseURL?.host() ?? (request.headers["x-forwarded-host"] ?? request.headers["host"]).map(Self.bare)
            guard let host, let sourceHost = source.host(), !host.isEmpty else { return nil }
            return sourceHost.lowercased() == host.lowercased() ? cookie : nil
        }
    }

    /// A `Host` value without its port (`[::1]:8080` → `::1`, `a.example:80` → `a.example`), and without the
    /// other names of a forwarded list but the first.
    static func bare(_ host: String) -> String {
        let first = host.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        if first.hasPrefix("["), let end = first.firstIndex(of: "]") {
            return String(first[first.index(after: first.startIndex)..<end])
        }
        return first.split(separator: ":", maxSplits: 1).first.map(String.init) ?? first
    }
}
