import Foundation
import ImagoCore

/// A keeper of OAuth bearer tokens for a store's requests (``GoogleAccessTokens``, ``AzureAccessTokens``): the
/// `Authorization` value to send, and what to do when the store refuses it.
public protocol BearerTokens: AnyObject, Sendable {
    /// `Bearer TOKEN`, from the token kept or a new exchange.
    ///
    /// - Throws: ``DataLoadingError/requestModifierFailed(url:reason:)`` naming the token endpoint when the
    ///   exchange fails.
    func authorization() async throws(DataLoadingError) -> String

    /// Drops the token kept if `authorization` (`Bearer TOKEN`) carries it, after the store refused it (HTTP 401:
    /// revoked or expired early), so the next load exchanges again.
    func refused(authorization: String)
}

extension ExpiringCredential where Value == String {
    /// `Bearer TOKEN` from the token kept or a new exchange; a failed exchange is
    /// ``DataLoadingError/requestModifierFailed(url:reason:)`` naming `tokenURL`.
    func bearer(tokenURL: @autoclosure () -> URL) async throws(DataLoadingError) -> String {
        do {
            return "Bearer " + (try await value())
        } catch {
            throw .requestModifierFailed(url: tokenURL(), reason: "\(error)")
        }
    }

    /// Drops the token kept if `authorization` is `Bearer` and it.
    func dropBearer(_ authorization: String) {
        drop { "Bearer " + $0 == authorization }
    }
}
