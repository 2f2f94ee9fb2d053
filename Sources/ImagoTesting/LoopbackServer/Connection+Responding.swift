import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Connection {
    /// A response decided but not yet sent.
    struct Plan {
        enum Body {
            case data(Data)
            case endless(pattern: Data)
        }

        var status: Int
        var headers: LoopbackServer.Headers
        var body: Body
        var framing: LoopbackServer.Route.Framing = .contentLength
        var drip: LoopbackServer.Route.Drip?
        var interruption: LoopbackServer.Route.Interruption?
        var headerDelay: Duration?
    }

    /// Decides and sends the response to `request`; `keepOpen` says whether the connection may serve another.
    func respond(to request: LoopbackServer.Request) -> (outcome: Outcome, keepOpen: Bool) {
        let plan = makePlan(for: request)
        if let delay = plan.headerDelay, !server.pause(delay) { return (.serverStopped, false) }
        let hasBody = request.method != "HEAD" && plan.status != 304 && plan.status != 204 && plan.status >= 200
        var headers = plan.headers
        var keepOpen = request.wantsKeepAlive && plan.interruption == nil
        switch (plan.framing, plan.body) {
        case (.chunked, _):
            headers["Transfer-Encoding"] = "chunked"
        case (.closeDelimited, _), (.contentLength, .endless):
            keepOpen = false
        case (.declaredContentLength(let length), _):
            headers["Content-Length"] = String(length)
            keepOpen = false
        case (.contentLength, .data(let data)):
            if plan.status != 304 && plan.status != 204 { headers["Content-Length"] = String(data.count) }
        }
        headers["Connection"] = keepOpen ? "keep-alive" : "close"
        var head = "HTTP/1.1 \(plan.status) \(Self.reason(plan.status))\r\n"
        for field in headers { head += "\(field.name): \(field.value)\r\n" }
        head += "\r\n"
        guard sendAll(Data(head.utf8)) else { return (.aborted, false) }
        guard hasBody else { return (.completed, keepOpen) }
        let outcome = sendBody(plan)
        return (outcome, keepOpen && outcome == .completed)
    }

    // MARK: - Deciding

    private func makePlan(for request: LoopbackServer.Request) -> Plan {
        guard let (route, remainder) = server.route(for: request.path) else {
            return Self.textPlan(404, "No route for \(request.path) on this LoopbackServer.")
        }
        var status = route.status
        var headers = LoopbackServer.Headers()
        var contentType = route.contentType
        let body: Plan.Body
        switch route.content {
        case .bytes(let data):
            body = .data(data)
        case .endless(let pattern):
            body = .endless(pattern: pattern.isEmpty ? Data([0]) : pattern)
        case .directory(let root):
            guard let file = Self.file(in: root, remainder: remainder), let data = try? Data(contentsOf: file) else {
                return Self.textPlan(404, "No file for \(request.path) on this LoopbackServer.")
            }
            body = .data(data)
            contentType = contentType ?? Self.contentType(forExtension: file.pathExtension)
        case .handler(let handler):
            let response = handler(request)
            status = response.status
            headers = response.headers
            if headers["Content-Type"] != nil { contentType = nil }
            body = .data(response.body)
        }
        if let contentType { headers["Content-Type"] = contentType }
        if let etag = route.etag { headers["ETag"] = etag }
        if let date = route.lastModified { headers["Last-Modified"] = HTTPDateParser.imfFixdate(from: date) }
        if let cacheControl = route.cacheControl { headers["Cache-Control"] = cacheControl }
        if let encoding = route.contentEncoding { headers["Content-Encoding"] = encoding }
        for field in route.headers { headers.add(field.name, field.value) }
        if status == 200, request.method == "GET" || request.method == "HEAD", Self.isNotModified(request, route) {
            headers["Content-Type"] = nil
            headers["Content-Encoding"] = nil
            return Plan(status: 304, headers: headers, body: .data(Data()), headerDelay: route.headerDelay)
        }
        return Plan(
            status: status, headers: headers, body: body, framing: route.framing, drip: route.drip,
            interruption: route.interruption, headerDelay: route.headerDelay)
    }

    private static func textPlan(_ status: Int, _ text: String) -> Plan {
        Plan(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: .data(Data(text.utf8)))
    }

    /// `If-None-Match` wins over `If-Modified-Since` (RFC 9110 §13.2.2); weak comparison for ETags.
    private static func isNotModified(_ request: LoopbackServer.Request, _ route: LoopbackServer.Route) -> Bool {
        if let ifNoneMatch = request.headers["If-None-Match"] {
            guard let etag = route.etag else { return false }
            func opaque(_ tag: Substring) -> Substring {
                let trimmed = tag.drop { $0 == " " }
                return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
            }
            return ifNoneMatch.split(separator: ",").contains {
                $0.trimmingCharacters(in: .whitespaces) == "*" || opaque($0) == opaque(etag[...])
            }
        }
        if let text = request.headers["If-Modified-Since"], let since = HTTPDateParser.date(from: text),
            let modified = route.lastModified
        {
            return modified.timeIntervalSince1970.rounded(.down) <= since.timeIntervalSince1970
        }
        return false
    }

    /// The file under `root` named by `remainder`; nil for `..`, `.`, NUL or an empty name.
    static func file(in root: URL, remainder: String) -> URL? {
        var url = root
        var components = 0
        for component in remainder.split(separator: "/") {
            guard let name = String(component).removingPercentEncoding, name != "..", name != ".",
                !name.contains("/"), !name.contains("\0")
            else { return nil }
            url.appendPathComponent(name)
            components += 1
        }
        return components > 0 ? url : nil
    }

    static func contentType(forExtension pathExtension: String) -> String {
        switch pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "avif": "image/avif"
        case "heic", "heif": "image/heic"
        case "jxl": "image/jxl"
        case "bmp": "image/bmp"
        case "tif", "tiff": "image/tiff"
        case "svg": "image/svg+xml"
        case "ico": "image/x-icon"
        case "json": "application/json"
        case "txt": "text/plain; charset=utf-8"
        case "html", "htm": "text/html; charset=utf-8"
        case "css": "text/css"
        case "js": "text/javascript"
        default: "application/octet-stream"
        }
    }

    // MARK: - Sending the body

    private func sendBody(_ plan: Plan) -> Outcome {
        let isChunked: Bool
        var pieceLimit = plan.drip?.bytes ?? Int.max
        if case .chunked(let chunkSize) = plan.framing {
            isChunked = true
            pieceLimit = min(pieceLimit, max(1, chunkSize))
        } else {
            isChunked = false
        }
        let cutAfter: Int? =
            switch plan.interruption {
            case .stall(let bytes), .reset(let bytes), .close(let bytes): max(0, bytes)
            case nil: nil
            }
        let source: Data
        let isEndless: Bool
        switch plan.body {
        case .data(let data): (source, isEndless) = (data, false)
        case .endless(let pattern): (source, isEndless) = (pattern, true)
        }
        var sentTotal = 0
        var offset = 0
        while true {
            if let cutAfter, sentTotal >= cutAfter { return interrupt(plan.interruption) }
            if offset == source.count {
                guard isEndless else { break }
                offset = 0
            }
            var count = min(pieceLimit, source.count - offset)
            if let cutAfter { count = min(count, cutAfter - sentTotal) }
            if sentTotal > 0, let drip = plan.drip, !server.pause(drip.interval) { return .serverStopped }
            let piece = source[(source.startIndex + offset)..<(source.startIndex + offset + count)]
            let delivered =
                isChunked
                ? sendAll(Data(String(count, radix: 16).utf8) + Data("\r\n".utf8) + piece + Data("\r\n".utf8))
                : sendAll(piece)
            guard delivered else { return .aborted }
            offset += count
            sentTotal += count
        }
        if isChunked, !sendAll(Data("0\r\n\r\n".utf8)) { return .aborted }
        return .completed
    }

    private func interrupt(_ interruption: LoopbackServer.Route.Interruption?) -> Outcome {
        switch interruption {
        case .stall:
            return server.waitForClientClose(socket) ? .aborted : .serverStopped
        case .reset:
            waitUntilSent()
            var option = linger(l_onoff: 1, l_linger: 0)
            setsockopt(socket, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
            return .interrupted
        case .close, nil:
            return .interrupted
        }
    }

    /// Gives the kernel up to ~100 ms to hand what was sent to the peer, so a reset comes after those bytes.
    private func waitUntilSent() {
        for _ in 0..<100 {
            var unsent: Int32 = 0
            // SIOCOUTQ (0x5411): bytes in the send queue not yet acknowledged.
            guard ioctl(socket, 0x5411, &unsent) == 0, unsent > 0 else { return }
            guard server.pause(.milliseconds(1)) else { return }
        }
    }
}
