import Foundation
import Synchronization

/// Who asked and under which ID, as imgproxy tells them (its `X-Request-ID` and `client_ip`): the request ID is the
/// client's `X-Request-ID` when it is one (1 to 128 of `A–Z a–z 0–9 _ -`, as a load balancer or CDN sets it), else
/// a new one, this proxy's prefix and a counter (unique within the process, one atomic add: no random number per
/// request); the client's address is the first of `CF-Connecting-IP`, `X-Forwarded-For`'s first entry and
/// `X-Real-IP`, else the connection's (the headers are taken as given, as imgproxy takes them: behind a proxy that
/// sets them).
final class RequestIdentity: Sendable {
    /// What this proxy's new IDs start with: 8 random letters and digits, then `-`.
    let prefix: String
    private let counter = Atomic<Int>(0)

    init() {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        prefix = String((0..<8).map { _ in alphabet.randomElement(using: &generator)! }) + "-"
    }

    /// The ID of `request`: its own `X-Request-ID` when valid, else a new one.
    func requestID(for request: ServerRequest) -> String {
        if let given = request.headers["x-request-id"], Self.isValid(given) { return given }
        return prefix + String(counter.add(1, ordering: .relaxed).newValue, radix: 36)
    }

    /// Whether `id` may be taken as a request ID: 1 to 128 ASCII letters, digits, `_` and `-`.
    static func isValid(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count)
            && id.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F
                    || c == 0x2D
            }
    }

    /// The client's address of `request` (see the type), `nil` when nothing says it.
    static func clientIP(of request: ServerRequest) -> String? {
        func trimmed(_ text: String?) -> String? {
            text.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : String($0.prefix(64)) }
        }
        return trimmed(request.headers["cf-connecting-ip"])
            ?? trimmed(request.headers["x-forwarded-for"]?.split(separator: ",").first.map(String.init))
            ?? trimmed(request.headers["x-real-ip"]) ?? request.clientAddress
    }
}
