import Foundation

/// The directives of a response's `Cache-Control` header that decide whether and how long its bytes may be kept
/// (RFC 9111 §5.2.2): `no-store`, `no-cache`, `max-age`, and for shared caches `private` and `s-maxage`.
/// Directive names are matched case-insensitively; others are ignored.
///
/// ```swift
/// let control = HTTPCacheControl("public, max-age=60")   // maxAge == 60
/// ```
package struct HTTPCacheControl: Sendable, Equatable {
    /// `no-store`: the response must not be kept.
    package var noStore = false
    /// `no-cache`: the response may be kept but must be revalidated before each use.
    package var noCache = false
    /// `max-age`, in seconds (negative values read as 0); `nil` when absent or not a number.
    package var maxAge: TimeInterval?
    /// `private` (alone or naming fields): a shared cache must not keep the response.
    package var isPrivate = false
    /// `s-maxage`, in seconds (negative values read as 0): a shared cache's freshness, in place of `max-age`;
    /// `nil` when absent or not a number.
    package var sharedMaxAge: TimeInterval?

    /// The directives of `header` (the field's value; `nil` or empty: none).
    package init(_ header: String?) {
        let directives = (header ?? "").lowercased().split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        noStore = directives.contains("no-store")
        noCache = directives.contains("no-cache")
        isPrivate = directives.contains { $0 == "private" || $0.hasPrefix("private=") }
        maxAge = Self.seconds(of: "max-age=", in: directives)
        sharedMaxAge = Self.seconds(of: "s-maxage=", in: directives)
    }

    /// The value of the first directive starting with `prefix` (`name=`), in seconds, at least 0 (quotes
    /// allowed, as RFC 9111 §5.2 lets a sender write them); `nil` when absent or not a number.
    private static func seconds(of prefix: String, in directives: [String]) -> TimeInterval? {
        guard let directive = directives.first(where: { $0.hasPrefix(prefix) }) else { return nil }
        var value = directive.dropFirst(prefix.count)
        if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
        return TimeInterval(value).map { max(0, $0) }
    }
}

extension DataCacheMetadata {
    /// The metadata a data cache keeps for a response with `headers` (names lowercased), stored at `now`: when it
    /// stops being fresh (`no-cache`: at once; else `max-age`; else `Expires`, an invalid one meaning already
    /// expired; else unknown), its validators and content type. `nil` for `Cache-Control: no-store`.
    package init?(responseHeaders headers: [String: String], validators: HTTPValidators, now: Date) {
        let control = HTTPCacheControl(headers["cache-control"])
        if control.noStore { return nil }
        var expiresAt: Date?
        if control.noCache {
            expiresAt = now
        } else if let maxAge = control.maxAge {
            expiresAt = now.addingTimeInterval(maxAge)
        } else if let expires = headers["expires"] {
            expiresAt = HTTPDateParser.date(from: expires) ?? now  // an invalid Expires means "already expired"
        }
        self.init(storedAt: now, expiresAt: expiresAt, validators: validators, contentType: headers["content-type"])
    }

    /// The metadata a cache shared by other users keeps for the same response (RFC 9111 §3 and §5.2.2): `nil`
    /// for `no-store` or `private` as well, and `s-maxage`, when given, in place of `max-age` and `Expires`.
    package init?(sharedResponseHeaders headers: [String: String], validators: HTTPValidators, now: Date) {
        let control = HTTPCacheControl(headers["cache-control"])
        guard !control.isPrivate, var metadata = Self(responseHeaders: headers, validators: validators, now: now)
        else { return nil }
        if !control.noCache, let sharedMaxAge = control.sharedMaxAge {
            metadata.expiresAt = now.addingTimeInterval(sharedMaxAge)
        }
        self = metadata
    }
}
