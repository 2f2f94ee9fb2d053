import Foundation
import ImagoCore
import ImagoTesting
import Testing

/// Records the events one load delivers, and checks the loader's contract on them (one terminal event, nothing
/// after it).
final class EventRecorder: Sendable {
    private let state = Locked<[DataLoadEvent]>([])
    private let onEvent: (@Sendable (DataLoadEvent) -> Void)?

    init(onEvent: (@Sendable (DataLoadEvent) -> Void)? = nil) { self.onEvent = onEvent }

    var handler: @Sendable (DataLoadEvent) -> Void {
        { [self] event in
            state.withLock { $0.append(event) }
            onEvent?(event)
        }
    }

    var events: [DataLoadEvent] { state.value }

    var terminalCount: Int {
        events.count { if case .finished = $0 { true } else if case .failed = $0 { true } else { false } }
    }

    /// Whether the only terminal event is the last one.
    var isWellFormed: Bool {
        let events = self.events
        guard let index = events.firstIndex(where: { $0.isTerminalEvent }) else { return true }
        return index == events.count - 1
    }

    var result: Result<DataResponse, DataLoadingError>? {
        for event in events {
            switch event {
            case .finished(let response): return .success(response)
            case .failed(let error): return .failure(error)
            default: continue
            }
        }
        return nil
    }

    var response: DataResponse? { if case .success(let r) = result { r } else { nil } }
    var error: DataLoadingError? { if case .failure(let e) = result { e } else { nil } }

    /// Waits (up to `timeout`) for the terminal event.
    @discardableResult
    func waitForResult(timeout: Duration = .seconds(60)) async -> Result<DataResponse, DataLoadingError>? {
        await ImagoTesting.eventually(timeout: timeout) { self.terminalCount > 0 }
        return result
    }
}

extension DataLoadEvent {
    var isTerminalEvent: Bool {
        switch self {
        case .finished, .failed: true
        case .progress, .partialData: false
        }
    }
}

/// A ``DataLoadingError`` case without its payload, to compare errors whose payload is not predictable.
enum LoadErrorKind: Hashable {
    case cancelled, unsupportedScheme, statusCode(Int), timedOut, connectionFailed, truncated, bodyTooLarge
    case unacceptableContentType, tooManyRedirects, unreadable, requestModifierFailed, addressRefused, invalidURL
    case tlsRefused
}

extension DataLoadingError {
    /// The case without its payload.
    var kind: LoadErrorKind {
        switch self {
        case .cancelled: .cancelled
        case .unsupportedScheme: .unsupportedScheme
        case .statusCode(let code, _): .statusCode(code)
        case .timedOut: .timedOut
        case .connectionFailed: .connectionFailed
        case .truncated: .truncated
        case .bodyTooLarge: .bodyTooLarge
        case .unacceptableContentType: .unacceptableContentType
        case .tooManyRedirects: .tooManyRedirects
        case .unreadable: .unreadable
        case .requestModifierFailed: .requestModifierFailed
        case .addressRefused: .addressRefused
        case .invalidURL: .invalidURL
        case .tlsRefused: .tlsRefused
        }
    }
}

/// Deterministic bytes of `count` length.
func testBytes(_ count: Int, seed: UInt8 = 1) -> Data {
    // A 251-byte pattern (prime, so it never lines up with chunk sizes) repeated: fast even in debug builds.
    let pattern = Data((0..<251).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    var data = Data(capacity: count + pattern.count)
    while data.count < count { data.append(pattern) }
    return data.prefix(count)
}

/// Every test that talks to the loopback server runs inside this suite, one at a time: each starts a server and a
/// loader (with their threads), and timeouts are tested with short intervals, which a crowded 2-core machine
/// (or the thread sanitizer) would otherwise disturb.
@Suite(.serialized) struct LoadingNetworkTests {}

/// How long a test waits for something that should happen (only a failing test waits this long).
let patience: Duration = .seconds(30)

/// A loader configuration for tests: no retries, fast progress, timeouts short enough to end a hang but long
/// enough for a busy 2-core machine running the suites in parallel (tests of timeouts shorten them further).
func testLoaderConfiguration(concurrency: Int = 6) -> HTTPDataLoader.Configuration {
    var configuration = HTTPDataLoader.Configuration()
    configuration.maximumConcurrentTransfers = concurrency
    configuration.idleTimeout = .seconds(20)
    configuration.resourceTimeout = .seconds(60)
    configuration.retryPolicy = .none
    configuration.progressInterval = .milliseconds(1)
    return configuration
}
