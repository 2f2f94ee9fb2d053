import CCurl
import Foundation
import ImagoCore

/// ``CurlDataLoader``'s transport: one ``CurlMulti`` thread; each attempt becomes a ``CurlEasy`` added to it.
final class CurlTransport: LoadTransporting {
    let configuration: CurlDataLoader.Configuration
    let multi: CurlMulti?

    init(configuration: CurlDataLoader.Configuration) {
        self.configuration = configuration
        multi = CurlMulti(
            maximumConnectionsPerHost: configuration.maximumConnectionsPerHost,
            maximumConnections: configuration.maximumConnections,
            multiplexes: configuration.httpVersion == .http2OverTLS,
            poolLimit: configuration.loading.maximumConcurrentTransfers + 2)
    }

    func makeHandle(for attempt: LoadAttempt) -> (any LoadTransportHandle)? {
        guard let multi else { return nil }
        return CurlEasy(attempt: attempt, configuration: configuration, multi: multi)
    }

    /// Stops the multi thread (which frees the handles still on it).
    func close() { multi?.stop() }
}
