import Foundation
import ImagoCore

/// A credential (an access token, with what came with it) kept until `margin` before it expires (or half its life,
/// when that is shorter than twice `margin`), or until it is dropped, and fetched by one exchange at a time however many callers ask at once. A failed exchange is not
/// kept: the next caller starts another.
final class ExpiringCredential<Value: Sendable & Equatable>: Sendable {
    /// A credential and when it expires; `nil`: kept until dropped.
    struct Issued: Sendable {
        var value: Value
        var expiresAt: ContinuousClock.Instant?
    }

    private struct State {
        var kept: Issued?
        /// When ``kept`` arrived.
        var keptAt = ContinuousClock.now
        var exchange: Task<Issued, any Error>?
        var exchangeCount = 0
    }

    /// What a call finds: a credential still good, or the exchange to wait for.
    private enum Lookup {
        case kept(Value)
        case exchange(Task<Issued, any Error>)
    }

    private let state = Locked(State())
    private let margin: Duration
    private let exchange: @Sendable () async throws -> Issued

    /// Credentials from `exchange`, each kept until `margin` before it expires.
    init(margin: Duration, exchange: @escaping @Sendable () async throws -> Issued) {
        self.margin = margin
        self.exchange = exchange
    }

    /// The credential kept, or the one the exchange in flight or a new exchange gives.
    ///
    /// - Throws: what the exchange threw.
    func value() async throws -> Value {
        let now = ContinuousClock.now
        let lookup = state.withLock { state -> Lookup in
            if let kept = state.kept, kept.expiresAt.map({ now < $0 - min(margin, ($0 - state.keptAt) / 2) }) ?? true {
                return .kept(kept.value)
            }
            if let running = state.exchange { return .exchange(running) }
            let running = Task { [exchange] in try await exchange() }
            state.exchange = running
            state.exchangeCount += 1
            return .exchange(running)
        }
        let running: Task<Issued, any Error>
        switch lookup {
        case .kept(let value): return value
        case .exchange(let task): running = task
        }
        do {
            let issued = try await running.value
            state.withLock { state in
                // A later credential than the one kept (another exchange may have finished first).
                let isLater = state.kept.map { kept in
                    guard let old = kept.expiresAt, let new = issued.expiresAt else { return true }
                    return old < new
                }
                if isLater ?? true { (state.kept, state.keptAt) = (issued, .now) }
                state.exchange = nil
            }
            return issued.value
        } catch {
            state.withLock { $0.exchange = nil }
            throw error
        }
    }

    /// Drops the credential kept when `isStale` says so of it (a service refused it), so the next call exchanges
    /// again. `isStale` runs outside the lock.
    func drop(where isStale: (Value) -> Bool) {
        guard let kept = state.withLock({ $0.kept?.value }), isStale(kept) else { return }
        state.withLock { state in
            if state.kept?.value == kept { state.kept = nil }
        }
    }

    /// The credential kept, good or not; `nil` before the first exchange or after a drop.
    var latest: Value? { state.withLock { $0.kept?.value } }

    /// Number of exchanges started (for tests).
    var exchangeCount: Int { state.withLock { $0.exchangeCount } }
}
