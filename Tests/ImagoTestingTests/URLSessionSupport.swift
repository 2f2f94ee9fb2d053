import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An ephemeral session for one test: `maxConnections` per host (6 by default), `timeout` per request.
func makeSession(maxConnections: Int = 6, timeout: TimeInterval = 10) -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = maxConnections
    configuration.timeoutIntervalForRequest = timeout
    configuration.urlCache = nil
    return URLSession(configuration: configuration)
}

extension URLResponse {
    var status: Int { (self as? HTTPURLResponse)?.statusCode ?? -1 }
    func header(_ name: String) -> String? { (self as? HTTPURLResponse)?.value(forHTTPHeaderField: name) }
}

/// Sixty-four kilobytes of a recognisable pattern, so truncation and reordering show.
func patternData(count: Int = 64 * 1024) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) })
}
