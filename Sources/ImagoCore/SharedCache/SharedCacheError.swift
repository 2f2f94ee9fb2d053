import Foundation

/// Why a shared tier could not answer. The pipeline counts it (``ImagePipeline/Statistics/sharedCacheErrors``),
/// reports it (``ImagePipeline/Event/sharedCacheFailed(source:error:)``) and goes on with its local tiers: none
/// of these is ever a user-facing failure.
public enum SharedCacheError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The tier could not be reached (connection refused, reset, name not resolved).
    case unavailable(reason: String)
    /// No answer within the command or connect timeout.
    case timedOut(after: Duration)
    /// The circuit breaker is open after repeated failures: no call is made until the back-off ends.
    case circuitOpen
    /// The server answered with an error (wrong password, out of memory, read-only replica …).
    case refused(reason: String)

    /// One sentence saying what happened.
    public var description: String {
        switch self {
        case .unavailable(let reason): "the shared cache is unavailable: \(reason)"
        case .timedOut(let after): "the shared cache did not answer within \(after)"
        case .circuitOpen: "the shared cache is skipped after repeated failures (circuit open)"
        case .refused(let reason): "the shared cache refused the command: \(reason)"
        }
    }
}
