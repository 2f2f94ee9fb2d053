import Foundation
import ImagoCore

/// An OAuth 2.0 token endpoint's answer (RFC 6749 §5.1), as Google's, Entra ID's and the cloud metadata services
/// give it: `access_token`, its lifetime in `expires_in` (a number, or a string at Azure's managed identity
/// endpoints), and on refusal `error`.
struct OAuthTokenAnswer: Decodable {
    var access_token: String?
    var expires_in: Lifetime?
    var error: String?

    /// A number of seconds, written as a number or as a string.
    struct Lifetime: Decodable {
        var seconds: Double?

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            seconds = (try? container.decode(Double.self)) ?? (try? container.decode(String.self)).flatMap(Double.init)
        }
    }

    /// Why an endpoint gave no token, in words without a secret.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// The token of `answered`, kept until its lifetime (an hour when none is given; 1 minute to 1 day) after
    /// `started`.
    ///
    /// - Throws: ``Refusal`` naming the status and the OAuth error when there is no usable token (not ASCII, or
    ///   with a space or a line break, which no header may carry).
    static func token(
        in answered: CurlExchange.Answer, startedAt started: ContinuousClock.Instant
    ) throws -> ExpiringCredential<String>.Issued {
        let answer = try? JSONDecoder().decode(Self.self, from: answered.data)
        guard answered.status == 200, let value = answer?.access_token, !value.isEmpty,
            value.allSatisfy({ $0.isASCII && !$0.isNewline && $0 != " " })
        else {
            throw Refusal(
                description:
                    "the token exchange answered HTTP \(answered.status)\(answer?.error.map { " (\($0))" } ?? "")")
        }
        let lifetime = max(60, min(answer?.expires_in?.seconds ?? 3600, 86_400))
        return .init(value: value, expiresAt: started + .seconds(lifetime))
    }
}
