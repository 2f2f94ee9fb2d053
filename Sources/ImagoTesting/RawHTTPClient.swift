import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A blocking HTTP/1.1 client over one socket to 127.0.0.1 (or ::1) or a Unix socket, for tests that must see
/// exactly what the server sends (framing, keep-alive, closes). Each call blocks its thread (but
/// ``readUntilClosed(waitingAtMost:)``, which waits on a Dispatch thread): run it off Swift's concurrency pool when
/// the server under test needs that pool. One caller at a time.
public final class RawHTTPClient: @unchecked Sendable {
    /// One response as received.
    public struct Response: Sendable {
        /// The status code.
        public var status: Int
        /// The header fields, names lowercased (a repeated field keeps its last value).
        public var headers: [String: String]
        /// The body, after any chunked framing.
        public var body: [UInt8]
    }

    /// Why a call did not return a response; `received` is what had arrived.
    public enum Failure: Error {
        /// The connection could not be made (the errno).
        case connectFailed(Int32)
        /// The server closed the connection before a whole response.
        case closedEarly(received: [UInt8])
        /// The server reset the connection.
        case reset(received: [UInt8])
        /// Nothing more arrived within the receive timeout.
        case timedOut(received: [UInt8])
        /// The response's head could not be parsed.
        case malformed
    }

    /// The connected socket, closed on deinit.
    public let socket: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port` (`[::1]:port` when `overIPv6`, default `false`); each read waits at most
    /// `receiveTimeout` (default 5 s) for more bytes.
    public convenience init(port: UInt16, overIPv6: Bool = false, receiveTimeout: Duration = .seconds(5)) throws {
        try self.init(receiveTimeout: receiveTimeout) { () throws(POSIXError) in
            try LoopbackSocket.connect(port: port, overIPv6: overIPv6)
        }
    }

    /// Connects to the Unix socket at `socketPath`; each read waits at most `receiveTimeout` (default 5 s) for
    /// more bytes.
    public convenience init(socketPath: String, receiveTimeout: Duration = .seconds(5)) throws {
        try self.init(receiveTimeout: receiveTimeout) { () throws(POSIXError) in
            try LoopbackSocket.connect(socketPath: socketPath)
        }
    }

    private init(receiveTimeout: Duration, connect: () throws(POSIXError) -> Int32) throws {
        do {
            socket = try connect()
        } catch {
            throw Failure.connectFailed(error.code.rawValue)
        }
        setReceiveTimeout(receiveTimeout)
    }

    deinit { close(socket) }

    /// Sends `text` as it is (no framing added).
    public func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Sends a request for `path` (`method`, default GET, with `headers`) and reads one response, framed by
    /// Content-Length, chunked encoding or connection close.
    public func get(_ path: String, headers: [String: String] = [:], method: String = "GET") throws -> Response {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        send(request + "\r\n")
        return try readResponse(isHead: method == "HEAD")
    }

    /// Reads the next response; `isHead` for the answer to a HEAD (no body whatever its Content-Length).
    public func readResponse(isHead: Bool = false) throws -> Response {
        var headEnd: Int?
        while headEnd == nil {
            headEnd = findBlankLine()
            if headEnd == nil { try receive() }
        }
        guard let headEnd else { throw Failure.malformed }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        buffer.removeFirst(headEnd + 4)
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure.malformed }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        if isHead || status == 304 || status == 204 { return Response(status: status, headers: headers, body: []) }
        if let length = headers["content-length"].flatMap(Int.init) {
            while buffer.count < length { try receive() }
            let body = Array(buffer[..<length])
            buffer.removeFirst(length)
            return Response(status: status, headers: headers, body: body)
        }
        if headers["transfer-encoding"] == "chunked" {
            var body: [UInt8] = []
            while true {
                var lineEnd = findCRLF()
                while lineEnd == nil {
                    try receive()
                    lineEnd = findCRLF()
                }
                guard let lineEnd, let size = Int(String(decoding: buffer[..<lineEnd], as: UTF8.self), radix: 16)
                else { throw Failure.malformed }
                buffer.removeFirst(lineEnd + 2)
                while buffer.count < size + 2 { try receive() }
                body += buffer[..<size]
                buffer.removeFirst(size + 2)
                if size == 0 { return Response(status: status, headers: headers, body: body) }
            }
        }
        while true {
            do { try receive() } catch Failure.closedEarly { break }
        }
        let body = buffer
        buffer = []
        return Response(status: status, headers: headers, body: body)
    }

    /// True when the server closed the connection (end of stream) within the receive timeout.
    public func isClosedByPeer() -> Bool {
        do {
            while true { try receive() }
        } catch Failure.closedEarly {
            return true
        } catch Failure.reset {
            return true
        } catch {
            return false
        }
    }

    /// Everything the server sends (after what was read already) until it closes the connection or nothing
    /// arrives for `timeout`, as text, and whether it closed it. The blocking reads run on a Dispatch thread, so
    /// they never hold one of the concurrency pool's few threads that the server's handler may need; later reads
    /// wait `timeout` too.
    public func readUntilClosed(waitingAtMost timeout: Duration) async -> (text: String, closed: Bool) {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                self.setReceiveTimeout(timeout)
                let closed = self.isClosedByPeer()
                let text = String(decoding: self.buffer, as: UTF8.self)
                self.buffer = []
                continuation.resume(returning: (text, closed))
            }
        }
    }

    private func setReceiveTimeout(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    private func receive() throws {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let count = recv(socket, &chunk, chunk.count, 0)
        if count > 0 {
            buffer += chunk[..<count]
            return
        }
        if count == 0 { throw Failure.closedEarly(received: buffer) }
        if errno == EAGAIN || errno == EWOULDBLOCK { throw Failure.timedOut(received: buffer) }
        if errno == ECONNRESET { throw Failure.reset(received: buffer) }
        throw Failure.closedEarly(received: buffer)
    }

    private func findBlankLine() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    private func findCRLF() -> Int? {
        guard buffer.count >= 2 else { return nil }
        for index in 0...(buffer.count - 2) where buffer[index] == 13 && buffer[index + 1] == 10 { return index }
        return nil
    }
}
