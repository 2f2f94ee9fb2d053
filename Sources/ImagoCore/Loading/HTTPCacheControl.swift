import Foundation

/// The directives of a response's `Cache-Control` header that decide whether and how long its bytes may be kept
/// (RFC 9111 §5.2.2): `no-store`, `no-cache` and `max-age`. Directive names are matched case-insensitively;
/// others are ignored.
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

    /// The directives of `header` (the field's value; `nil` or empty: none).
    package init(_ header: String?) {
        let directives = (header ?? "").lowercased().split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        noStore = directives.contains("no-store")
        noCache = directives.contains("no-cache")
        if let maxAge = directives.first(where: { $0.hasPrefix("max-age=") }),
            let seconds = TimeInterval(maxAge.dropFirst("max-age=".count))
        {
            self.maxAge = max(0, seconds)
        }
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
}
