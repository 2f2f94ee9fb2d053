import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One accepted connection, served on its own thread: reads requests one after another and answers each.
///
/// Not shared between threads; the server closes `socket` after `run()` returns.
final class Connection {
    /// How one response went.
    enum Outcome {
        /// The whole response was sent.
        case completed
        /// The client went away before the body was complete.
        case aborted
        /// The route cut the body short on purpose (reset, close, lying length).
        case interrupted
        /// The server stopped meanwhile.
        case serverStopped
    }

    static let maxHeadBytes = 64 * 1024
    static let maxBodyBytes = 64 * 1024 * 1024

    let server: LoopbackServer
    let socket: Int32
    private var buffer: [UInt8] = []
    private var consumed = 0
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    init(server: LoopbackServer, socket: Int32) {
        self.server = server
        self.socket = socket
        buffer.reserveCapacity(16 * 1024)
    }

    deinit { scratch.deallocate() }

    func run() {
        while true {
            guard let request = readRequest() else { return }
            guard server.admit(request) else {
                server.finish(path: request.path, outcome: .serverStopped)
                return
            }
            let (outcome, keepOpen) = respond(to: request)
            server.finish(path: request.path, outcome: outcome)
            guard keepOpen, outcome == .completed else { return }
        }
    }

    // MARK: - Reading

    /// The next request, or nil when the connection should close (client closed, error, or a 4xx/5xx answered
    /// for a request the server will not serve).
    private func readRequest() -> LoopbackServer.Request? {
        // Bytes after `consumed` already known not to start the blank line ending the head.
        var scanned = 0
        var headEnd: Int?
        while true {
            headEnd = findHeadEnd(from: consumed + scanned)
            if headEnd != nil { break }
            if buffer.count - consumed > Self.maxHeadBytes {
                sendError(431, "Request header fields larger than \(Self.maxHeadBytes) bytes.")
                return nil
            }
            scanned = max(0, buffer.count - consumed - 3)
            guard receiveMore() else { return nil }
        }
        guard let headEnd else { return nil }
        if headEnd - consumed > Self.maxHeadBytes {
            sendError(431, "Request header fields larger than \(Self.maxHeadBytes) bytes.")
            return nil
        }
        let head = buffer[consumed..<headEnd]
        consumed = headEnd + 4
        guard var request = LoopbackServer.Request.parse(head: head) else {
            sendError(400, "Malformed request.")
            return nil
        }
        if request.headers["Transfer-Encoding"] != nil {
            sendError(501, "Chunked request bodies are not supported by LoopbackServer.")
            return nil
        }
        if let lengthText = request.headers["Content-Length"] {
            guard let length = Int(lengthText), length >= 0 else {
                sendError(400, "Invalid Content-Length.")
                return nil
            }
            guard length <= Self.maxBodyBytes else {
                sendError(413, "Request body larger than \(Self.maxBodyBytes) bytes.")
                return nil
            }
            if buffer.count - consumed < length, request.headers["Expect"]?.lowercased() == "100-continue" {
                guard sendAll(Data("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return nil }
            }
            while buffer.count - consumed < length {
                guard receiveMore() else { return nil }
            }
            request.body = Data(buffer[consumed..<(consumed + length)])
            consumed += length
        }
        return request
    }

    /// Index of the `\r\n\r\n` ending the head, searching from `start`.
    private func findHeadEnd(from start: Int) -> Int? {
        guard buffer.count >= 4 else { return nil }
        var index = start
        let last = buffer.count - 4
        while index <= last {
            if buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
                return index
            }
            index += 1
        }
        return nil
    }

    /// Appends what the socket has (blocking); false on end of stream or error. Drops consumed bytes first.
    private func receiveMore() -> Bool {
        if consumed > 0 {
            buffer.removeFirst(consumed)
            consumed = 0
        }
        while true {
            let received = recv(socket, scratch.baseAddress, scratch.count, 0)
            if received < 0 && errno == EINTR { continue }
            guard received > 0 else { return false }
            // Appending from a raw buffer is one memcpy even in debug builds (element-wise appends are not).
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[..<received]))
            return true
        }
    }

    private func sendError(_ status: Int, _ message: String) {
        let body = Data(message.utf8)
        let head =
            "HTTP/1.1 \(status) \(Self.reason(status))\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        _ = sendAll(Data(head.utf8)) && sendAll(body)
    }

    // MARK: - Writing

    /// Sends all of `data`; false when the peer is gone.
    func sendAll(_ data: Data) -> Bool {
        data.withUnsafeBytes { sendAll($0) }
    }

    func sendAll(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var pointer = bytes.baseAddress else { return true }
        var remaining = bytes.count
        while remaining > 0 {
            let sent = send(socket, pointer, remaining, Int32(MSG_NOSIGNAL))
            if sent < 0 {
                if errno == EINTR { continue }
                return false
            }
            pointer += sent
            remaining -= sent
        }
        return true
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 410: "Gone"
        case 413: "Content Too Large"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status \(status)"
        }
    }
}
