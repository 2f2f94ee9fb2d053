import CMicroHTTPD
import Foundation
import ImagoCore

/// An HTTP/1.1 server on libmicrohttpd that hands every request to an async handler (an ``ImageProxy``):
/// libmicrohttpd's epoll thread (one by default, or a pool: `threads`) reads requests; a request the optional
/// `immediate` handler answers (a cached output) is answered on that thread at once, any other has its
/// connection suspended while the async handler runs and resumed with the response, so no thread waits on a
/// request. Response bodies are handed to libmicrohttpd without a copy (it holds the `Data` until sent).
///
/// ```swift
/// let proxy = ImageProxy(configuration: configuration)
/// let server = try MicroHTTPServer(
///     host: "127.0.0.1", port: 8080, rejected: { proxy.countRejection(status: $0) },
///     immediate: { proxy.immediateResponse(to: $0) }
/// ) { await proxy.respond(to: $0) }
/// _ = await server.drain(timeout: .seconds(10))   // on SIGTERM: stop accepting, finish what is in flight
/// server.stop()
/// ```
public final class MicroHTTPServer: @unchecked Sendable {
    // @unchecked Sendable: `daemon` is set once in init and cleared only by `stop`, which holds `state`'s lock
    // while it does; everything else that changes is inside `state`.

    /// Why the server could not start.
    public enum Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// The host is not a numeric IPv4 or IPv6 address.
        case invalidHost(String)
        /// libmicrohttpd refused to start (the port is taken, or the address is not this machine's).
        case startFailed(host: String, port: UInt16)
        /// The Unix domain socket could not be made at `path` (`reason` says why: too long, in use, not a socket,
        /// or the system's error).
        case socketFailed(path: String, reason: String)

        /// A sentence naming what to change.
        public var description: String {
            switch self {
            case .invalidHost(let host): "'\(host)' is not a numeric IPv4 or IPv6 address (e.g. 127.0.0.1 or ::1)"
            case .startFailed(let host, let port):
                "could not listen on \(host):\(port) (is the port in use, or the address not this machine's?)"
            case .socketFailed(let path, let reason): "could not listen on the Unix socket \(path): \(reason)"
            }
        }
    }

    /// The port listened on (the chosen one when started with port 0); 0 on a Unix socket.
    public private(set) var port: UInt16 = 0
    /// The address listened on: the `host` given, or `0.0.0.0` when `::` was given and the machine has no IPv6;
    /// empty on a Unix socket.
    public private(set) var host = ""
    /// The Unix domain socket listened on, if the server was started on one; removed when the server stops.
    public let socketPath: String?
    /// The socket file's inode, so that `stop` removes only the file it made.
    private var socketInode: ino_t = 0
    private var daemon: OpaquePointer?
    private let handler: @Sendable (ServerRequest) async -> ServerResponse
    private let immediate: (@Sendable (ServerRequest) -> ServerResponse?)?
    fileprivate let rejected: (@Sendable (Int) -> Void)?
    /// Requests received and not yet completed (their response sent, or their connection gone).
    private let inFlight = AtomicCounters(count: 1)
    private let state = Locked(State())

    private struct State {
        /// The suspended requests (waiting for their async handler), so that `stop` can answer them.
        var contexts: [ObjectIdentifier: RequestContext] = [:]
        /// The listening socket `drain` took from the daemon; closed after the daemon stops, as MHD asks.
        var listener: Int32?
        var isQuiesced = false
        var isStopping = false
        var isStopped = false
    }

    /// Starts listening on `host` (a numeric address) and `port` (0: any free one). `::` (IPv6's unspecified
    /// address) is every interface of both families, as Go's and so imgproxy's `:PORT` is: one dual-stack socket
    /// (IPv4 peers appear as `::ffff:a.b.c.d`), or `0.0.0.0` where the machine has no IPv6. Any other IPv6 address
    /// is IPv6 only; `0.0.0.0` is every IPv4 interface.
    ///
    /// - Parameters:
    ///   - connectionLimit: the most connections open at once (default 1024).
    ///   - connectionTimeout: seconds an idle connection stays open (default 30).
    ///   - reusesPort: whether other processes may listen on the same port at once (`SO_REUSEPORT`; imgproxy's
    ///     `IMGPROXY_SO_REUSEPORT`), the kernel spreading connections among them: one server process per core.
    ///     Default `false`.
    ///   - threads: libmicrohttpd's polling threads, each with its own epoll set, sharing the listening socket
    ///     (default 1: a pool once left resumed connections unanswered until the client gave up, not reproduced
    ///     since and not explained; RELIABILITY.md §15 records it).
    ///   - rejected: called on a polling thread with the status of each request libmicrohttpd answers itself,
    ///     before `immediate` or `handler` could see it: 414 for a request line and 431 for header fields over the
    ///     connection's 16 KiB, 400 for a malformed header (a line without a colon, a `Content-Length` that is no
    ///     number), 413 for a `Content-Length` too large to hold, 505 for an HTTP version other than 1.0 and 1.1.
    ///     Default `nil` (not told). It must not block.
    ///   - immediate: answers a request on the polling thread when it can do so without waiting (no I/O, no
    ///     lock held for long), else returns `nil` and `handler` answers it. Default `nil` (always `handler`).
    ///   - handler: answers each request; runs on the Swift concurrency pool.
    /// - Throws: ``Error``.
    public init(
        host: String, port: UInt16, connectionLimit: Int = 1024, connectionTimeout: Int = 30,
        reusesPort: Bool = false, threads: Int = 1, rejected: (@Sendable (Int) -> Void)? = nil,
        immediate: (@Sendable (ServerRequest) -> ServerResponse?)? = nil,
        handler: @escaping @Sendable (ServerRequest) async -> ServerResponse
    ) throws {
        self.handler = handler
        self.immediate = immediate
        self.rejected = rejected
        self.host = host
        socketPath = nil
        var flags = Self.flags
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        let context = Unmanaged.passUnretained(self).toOpaque()
        var started: OpaquePointer?
        func start(_ address: UnsafePointer<sockaddr>) -> OpaquePointer? {
            imago_mhd_start(
                flags, address, -1, UInt32(connectionLimit), UInt32(connectionTimeout), Self.backlog,
                UInt32(clamping: max(1, threads)), microHTTPAccess, context, microHTTPCompleted, context,
                microHTTPLog, context, reusesPort ? 1 : 0)
        }
        /// Starts on `v4`'s address (already set) at `port`.
        func startIPv4() -> OpaquePointer? {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            return withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, start) }
        }
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            started = startIPv4()
        } else if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            let everyInterface = withUnsafeBytes(of: v6.sin6_addr) { $0.allSatisfy { $0 == 0 } }
            flags |= everyInterface ? MHD_USE_DUAL_STACK.rawValue : MHD_USE_IPv6.rawValue
            started = withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, start) }
            if started == nil, everyInterface {
                // No IPv6 here (a container without it, `ipv6.disable=1`): every IPv4 interface instead.
                flags = Self.flags
                v4.sin_addr.s_addr = 0
                self.host = "0.0.0.0"
                started = startIPv4()
            }
        } else {
            throw Error.invalidHost(host)
        }
        guard let started else { throw Error.startFailed(host: host, port: port) }
        daemon = started
        self.port = imago_mhd_bound_port(started)
    }

    /// Starts listening on a Unix domain socket at `socketPath` (imgproxy's `IMGPROXY_NETWORK=unix`), for a
    /// front server such as nginx on the same machine (`proxy_pass http://unix:PATH;`). The socket file is made
    /// with the process's umask and removed when the server stops. A socket file left by a process that is gone
    /// (nothing accepts on it) is replaced; one still in use, or a file that is not a socket, is an error, so
    /// that no file is ever deleted that the server did not make.
    ///
    /// - Parameters: as ``init(host:port:connectionLimit:connectionTimeout:reusesPort:threads:immediate:handler:)``
    ///   (without a port to reuse).
    /// - Throws: ``Error/socketFailed(path:reason:)``, ``Error/startFailed(host:port:)``.
    public init(
        socketPath: String, connectionLimit: Int = 1024, connectionTimeout: Int = 30, threads: Int = 1,
        rejected: (@Sendable (Int) -> Void)? = nil, immediate: (@Sendable (ServerRequest) -> ServerResponse?)? = nil,
        handler: @escaping @Sendable (ServerRequest) async -> ServerResponse
    ) throws {
        self.handler = handler
        self.immediate = immediate
        self.rejected = rejected
        self.socketPath = socketPath
        let (listener, inode) = try UnixListener.open(socketPath, backlog: Int32(Self.backlog))
        let context = Unmanaged.passUnretained(self).toOpaque()
        let started = imago_mhd_start(
            Self.flags, nil, listener, UInt32(connectionLimit), UInt32(connectionTimeout), Self.backlog,
            UInt32(clamping: max(1, threads)), microHTTPAccess, context, microHTTPCompleted, context, microHTTPLog,
            context, 0)
        guard let started else {
            // Not closed here: libmicrohttpd closes a socket it was given when it fails to start (its
            // free_and_fail path), and closing it again could close a descriptor another thread just opened.
            UnixListener.remove(socketPath, inode: inode)
            throw Error.startFailed(host: "unix:" + socketPath, port: 0)
        }
        daemon = started
        socketInode = inode
    }

    /// The daemon's flags: its own epoll thread (or pool), connections suspended while the handler works, and its
    /// log lines sent to `microHTTPLog` (never to standard error), which tells `rejected`.
    private static let flags =
        MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
        | MHD_USE_ERROR_LOG.rawValue
    /// Connections the kernel queues before they are accepted.
    private static let backlog: UInt32 = 128

    deinit { stop() }

    /// Requests received and not yet answered.
    public var inFlightCount: Int { inFlight[0] }

    /// Stops accepting connections (the daemon lets go of its listening socket, closed once the daemon stops),
    /// then waits until every request in flight has been answered or `timeout` has passed. Returns whether all
    /// were answered.
    public func drain(timeout: Duration) async -> Bool {
        state.withLock { s in
            guard !s.isQuiesced, !s.isStopped, let daemon else { return }
            s.isQuiesced = true
            let listener = MHD_quiesce_daemon(daemon)
            if listener >= 0 { s.listener = listener }
        }
        let deadline = ContinuousClock.now + timeout
        while inFlightCount > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return inFlightCount == 0
    }

    /// Stops the server: requests still waiting for their handler are answered 503 first (libmicrohttpd cannot
    /// stop with suspended connections), then the daemon and its thread end. Safe to call twice.
    public func stop() {
        // From here on no request is suspended (`access` answers 503 at once), so the ones collected below are
        // all there are.
        let waiting = state.withLock { s -> [RequestContext] in
            guard !s.isStopped, !s.isStopping else { return [] }
            s.isStopping = true
            return Array(s.contexts.values)
        }
        let busy = ImageProxy.error(.overloaded(retryAfterSeconds: 1), retryAfter: 1)
        for context in waiting { context.answer(busy) }
        // Give the polling thread a moment to send those answers before the daemon goes.
        if !waiting.isEmpty { usleep(100_000) }
        let (daemon, listener) = state.withLock { s -> (OpaquePointer?, Int32?) in
            guard !s.isStopped else { return (nil, nil) }
            s.isStopped = true
            defer {
                self.daemon = nil
                s.listener = nil
            }
            return (self.daemon, s.listener)
        }
        if let daemon { MHD_stop_daemon(daemon) }
        if let listener { close(listener) }
        if daemon != nil, let socketPath { UnixListener.remove(socketPath, inode: socketInode) }
    }

    // MARK: - Called on libmicrohttpd's thread

    fileprivate func access(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>,
        uploadSize: UnsafeMutablePointer<Int>, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let raw = slot.pointee else {
            // The headers are in. The request is answered on the next call, which comes once any body is read (at
            // once without one): an answer queued on this first call makes libmicrohttpd close the connection
            // after it. No route reads a body, so one over `largeBody` bytes, or of a length not given (chunked),
            // is not waited for: the request is answered now, on its headers, and the connection closed after the
            // answer, as Go's server does with more than 256 KiB its handler leaves. Waiting would read all of a
            // large body first, however large, and leave a client that promised more than it sent without an
            // answer until the connection timeout.
            slot.pointee = receivedMarker
            inFlight.add(1, at: 0)
            guard Self.declaresLargeBody(connection) else { return .YES }
            return start(connection, url: url, method: method, slot: slot)
        }
        if uploadSize.pointee > 0 {
            uploadSize.pointee = 0  // request bodies are not used
            return .YES
        }
        if raw == answeredMarker { return .YES }  // its response is queued already
        if raw != receivedMarker {
            let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
            if let response = context.takeResponse() { return Self.queue(response, on: connection) }
            return .YES  // suspended; resumed with its response
        }
        return start(connection, url: url, method: method, slot: slot)
    }

    /// Hands the request to ``immediate`` or, suspending the connection, to the handler.
    private func start(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>,
        slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        let request = ServerRequest(
            method: String(cString: method), path: Self.originForm(String(cString: url)),
            headers: Self.headers(of: connection),
            clientAddress: Self.clientAddress(of: connection))
        if let immediate, let response = immediate(request) {
            slot.pointee = answeredMarker
            return Self.queue(response, on: connection)
        }
        let context = RequestContext(connection: connection)
        _ = context.start()
        let isStopping = state.withLock { s -> Bool in
            if !s.isStopping { s.contexts[ObjectIdentifier(context)] = context }
            return s.isStopping
        }
        if isStopping {
            slot.pointee = answeredMarker
            return Self.queue(ImageProxy.error(.overloaded(retryAfterSeconds: 1), retryAfter: 1), on: connection)
        }
        slot.pointee = Unmanaged.passRetained(context).toOpaque()
        MHD_suspend_connection(connection)
        let handler = handler
        Task {
            let response = await handler(request)
            context.answer(response)
        }
        return .YES
    }

    fileprivate func completed(slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        guard let raw = slot.pointee else { return }
        slot.pointee = nil
        inFlight.add(-1, at: 0)
        guard raw != receivedMarker, raw != answeredMarker else { return }
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeRetainedValue()
        context.finish()
        state.withLock { $0.contexts[ObjectIdentifier(context)] = nil }
    }

    private static func queue(_ response: ServerResponse, on connection: OpaquePointer) -> MHD_Result {
        let isLength = { (header: ServerResponse.Header) in
            header.name.utf8.count == 14 && header.name.lowercased() == "content-length"
        }
        // libmicrohttpd writes Content-Length itself, from the body (and keeps it for HEAD while sending no body).
        // 0.9.75 writes it for a 304 too, from the empty body ("Content-Length: 0", which RFC 9110 forbids there):
        // the 304's response is made with the length its handler named and no bytes, which are never read.
        let made: OpaquePointer?
        if response.status == 304, let named = response.headers.first(where: isLength).flatMap({ UInt64($0.value) }) {
            made = MHD_create_response_from_callback(named, 4096, microHTTPNoBody, nil, nil)
        } else {
            made = makeResponse(response.body)
        }
        guard let made else { return .NO }
        defer { MHD_destroy_response(made) }
        for header in response.headers where !isLength(header) {
            _ = MHD_add_response_header(made, header.name, header.value)
        }
        return MHD_queue_response(connection, UInt32(response.status), made)
    }

    /// A libmicrohttpd response over `body`'s bytes. A body past `Data`'s inline size lives in a heap buffer
    /// that stays put while a `Data` holding it is alive and unchanged: the response keeps a retained copy of the
    /// `Data` (no byte is copied) and releases it in the free callback once the bytes are sent. A small body is
    /// copied (MHD_RESPMEM_MUST_COPY), its bytes being inside the `Data` value itself.
    private static func makeResponse(_ body: Data) -> OpaquePointer? {
        guard body.count > 64 else {
            // MHD_RESPMEM_MUST_COPY (2): the body is copied, so `body` may go once this returns.
            guard let mustCopy = MHD_ResponseMemoryMode(rawValue: 2) else { return nil }
            return body.withUnsafeBytes { bytes in
                MHD_create_response_from_buffer(
                    bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), mustCopy)
            }
        }
        let owner = Unmanaged.passRetained(BodyOwner(body))
        let base = owner.takeUnretainedValue().body.withUnsafeBytes { $0.baseAddress }
        let made = MHD_create_response_from_buffer_with_free_callback_cls(
            body.count, UnsafeMutableRawPointer(mutating: base), microHTTPReleaseBody, owner.toOpaque())
        if made == nil { owner.release() }
        return made
    }

    /// The address `connection` came from, as text.
    private static func clientAddress(of connection: OpaquePointer) -> String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            imago_mhd_client_address(connection, buffer.baseAddress, buffer.count) != 0
                ? String(cString: buffer.baseAddress!) : nil
        }
    }

    /// The path of a request target in absolute form (`http://host:port/path`, which RFC 9112 §3.2.2 has every
    /// server accept, as Go's does), else the target as it is.
    static func originForm(_ target: String) -> String {
        guard !target.hasPrefix("/"), let separator = target.range(of: "://"),
            ["http", "https"].contains(target[..<separator.lowerBound].lowercased())
        else { return target }
        let authorityAndPath = target[separator.upperBound...]
        return authorityAndPath.firstIndex(of: "/").map { String(authorityAndPath[$0...]) } ?? "/"
    }

    /// The most body bytes read (and dropped) before a request is answered: Go's server drops up to 256 KiB
    /// a handler leaves to keep the connection.
    static let largeBody = 256 * 1024

    /// Whether the request says a body over ``largeBody`` follows, or one of a length it does not give (a
    /// `Transfer-Encoding`).
    private static func declaresLargeBody(_ connection: OpaquePointer) -> Bool {
        if MHD_lookup_connection_value(connection, .HEADER_KIND, "Transfer-Encoding") != nil { return true }
        guard let length = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length") else {
            return false
        }
        return UInt64(String(cString: length).trimmingCharacters(in: .whitespaces)).map { $0 > largeBody } ?? true
    }

    private static func headers(of connection: OpaquePointer) -> [String: String] {
        let box = HeaderBox()
        let raw = Unmanaged.passUnretained(box).toOpaque()
        _ = MHD_get_connection_values(connection, .HEADER_KIND, microHTTPHeader, raw)
        return withExtendedLifetime(box) { box.headers }
    }
}

/// Marks a request slot whose headers are in and which has no handler yet, and one answered on the polling thread
/// (only the completion callback sees it); neither is ever dereferenced.
private var receivedMarker: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 0x1).unsafelyUnwrapped }
private var answeredMarker: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 0x2).unsafelyUnwrapped }

/// Keeps a response body's bytes alive while libmicrohttpd sends them (see `MicroHTTPServer.makeResponse`).
private final class BodyOwner {
    let body: Data
    init(_ body: Data) { self.body = body }
}

private func microHTTPReleaseBody(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<BodyOwner>.fromOpaque(cls).release()
}

/// The reader of a 304's response (see `MicroHTTPServer.queue`): libmicrohttpd sends no body with a 304 and never
/// calls it; should it ever, the connection ends (-2, MHD_CONTENT_READER_END_WITH_ERROR) rather than send bytes.
private func microHTTPNoBody(
    _ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int
) -> Int {
    -2
}

/// The headers gathered by `microHTTPHeader` (only touched on the polling thread, during one call).
private final class HeaderBox {
    var headers: [String: String] = [:]
}

/// One request's state between libmicrohttpd's calls: started, answered (by the handler or by `stop`), and
/// whether its connection is still there to resume.
private final class RequestContext: @unchecked Sendable {
    // @unchecked Sendable: `connection` is only used while `state` says the request is suspended and unanswered,
    // and every change goes through `state`'s lock.
    private enum Phase {
        case received, suspended, answered, finished
    }

    private struct State {
        var phase = Phase.received
        var response: ServerResponse?
    }

    private let connection: OpaquePointer
    private let state = Locked(State())

    init(connection: OpaquePointer) { self.connection = connection }

    /// Marks the handler started; `false` if it already was.
    func start() -> Bool {
        state.withLock { s in
            guard s.phase == .received else { return false }
            s.phase = .suspended
            return true
        }
    }

    /// Stores the response and resumes the connection, unless it was answered already or is gone.
    func answer(_ response: ServerResponse) {
        // Resuming under the lock keeps `finish` (and `stop`) from racing the call.
        state.withLock { s in
            guard s.phase == .suspended else { return }
            s.phase = .answered
            s.response = response
            MHD_resume_connection(connection)
        }
    }

    /// The response to queue, once.
    func takeResponse() -> ServerResponse? {
        state.withLock { s in
            defer { s.response = nil }
            return s.response
        }
    }

    /// The connection is complete; nothing may resume it any more.
    func finish() { state.withLock { $0.phase = .finished } }
}

private func microHTTPAccess(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
    _ uploadSize: UnsafeMutablePointer<Int>?, _ slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let url, let method, let uploadSize, let slot else { return .NO }
    let server = Unmanaged<MicroHTTPServer>.fromOpaque(cls).takeUnretainedValue()
    return server.access(connection, url: url, method: method, uploadSize: uploadSize, slot: slot)
}

private func microHTTPCompleted(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ code: MHD_RequestTerminationCode
) {
    guard let cls, let slot else { return }
    Unmanaged<MicroHTTPServer>.fromOpaque(cls).takeUnretainedValue().completed(slot: slot)
}

/// libmicrohttpd's log: a line saying it answered a request itself tells the server's `rejected`; every other line
/// (a client gone mid-response, a failed accept) is dropped, as it was before the log was on.
private func microHTTPLog(
    _ cls: UnsafeMutableRawPointer?, _ format: UnsafePointer<CChar>?, _ arguments: CVaListPointer?
) {
    guard let cls, let arguments else { return }
    let status = imago_mhd_rejection_status(format, arguments)
    guard status != 0 else { return }
    Unmanaged<MicroHTTPServer>.fromOpaque(cls).takeUnretainedValue().rejected?(Int(status))
}

private func microHTTPHeader(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let box = Unmanaged<HeaderBox>.fromOpaque(cls).takeUnretainedValue()
    let name = String(cString: key).lowercased()
    let text = value.map { String(cString: $0) } ?? ""
    // Repeated fields join with a comma, as HTTP allows for list-valued headers.
    box.headers[name] = box.headers[name].map { "\($0), \(text)" } ?? text
    return .YES
}
