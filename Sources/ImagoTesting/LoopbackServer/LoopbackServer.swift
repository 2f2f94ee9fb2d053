import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An in-process HTTP/1.1 server on 127.0.0.1 with fault injection and counters: the only network tests touch.
///
/// It listens on a port the kernel picks, serves routes from memory, folders or closures, keeps connections
/// alive, and can misbehave per route (drip, stall, reset, lie about lengths, redirect, loop, 304 …). Every
/// request is counted per path; requests can be held at a gate (`suspend`/`resume`) to set up races on purpose.
/// A thread serves each connection; `stop()` closes every socket and waits for every thread.
///
/// Thread safety: every method may be called from any thread or task.
///
/// ```swift
/// let server = try LoopbackServer()
/// defer { server.stop() }
/// server.setRoute("/a.jpg", .bytes(jpeg, contentType: "image/jpeg").withETag("\"v1\""))
/// let (data, _) = try await URLSession.shared.data(from: server.url(for: "/a.jpg"))
/// #expect(server.requestCount(for: "/a.jpg") == 1)
/// ```
public final class LoopbackServer: Sendable {
    /// The port the server listens on (chosen by the kernel).
    public let port: UInt16
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL

    let listenSocket: Int32
    /// Becomes readable (forever) when the server stops; every wait in the server polls it.
    let wakeReadEnd: Int32
    let wakeWriteEnd: Int32
    let state = Monitor(State())

    struct State {
        var routes: [String: Route] = [:]
        var suspendedPaths: Set<String> = []
        var isStopping = false
        var isStopped = false
        /// Accept thread plus connection threads still running.
        var liveThreads = 0
        /// Open connection sockets by connection id; a thread closes its socket under the lock after removing it,
        /// so `stop()` never shuts down a reused descriptor.
        var connections: [Int: Int32] = [:]
        var nextConnectionID = 0
        var statistics = Statistics()
    }

    /// A failure to set up the listening socket.
    public enum Error: Swift.Error, CustomStringConvertible {
        /// A socket call failed with `errno`.
        case socketCallFailed(call: String, errno: Int32)

        /// A sentence saying which call failed and why.
        public var description: String {
            switch self {
            case .socketCallFailed(let call, let code):
                "LoopbackServer could not start: \(call) failed with errno \(code) (\(SystemReason.of(errno: code)))."
            }
        }
    }

    /// Binds 127.0.0.1 on a kernel-chosen port, listens (backlog 512) and starts accepting; takes a few
    /// milliseconds. Call `stop()` when done: the accepting thread keeps the server alive, so a server that is
    /// never stopped holds its port and threads until the process exits.
    public init() throws {
        let (fd, port) = try LoopbackListener.open(backlog: 512)
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            let code = errno
            close(fd)
            throw Error.socketCallFailed(call: "pipe", errno: code)
        }
        // pipe2/accept4 are not exported to Swift; a child process started meanwhile could inherit these.
        _ = fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC)
        listenSocket = fd
        wakeReadEnd = pipeEnds[0]
        wakeWriteEnd = pipeEnds[1]
        self.port = port
        baseURL = URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
        state.withLock { $0.liveThreads += 1 }
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit {
        // Server threads hold strong references until they exit, so deinit only runs after `stop()` finished;
        // this call returns at once and is a safety net.
        stop()
    }

    /// The URL of `path` on this server (`/a.jpg?v=2`; a missing leading `/` is added).
    public func url(for path: String) -> URL {
        let absolute = path.hasPrefix("/") ? path : "/" + path
        return URL(string: baseURL.absoluteString + absolute) ?? baseURL.appendingPathComponent(absolute)
    }

    /// Serves `route` at `path` (exact match; `.directory` routes match `path` as a prefix), replacing any route
    /// there.
    public func setRoute(_ path: String, _ route: Route) {
        state.withLock { $0.routes[path] = route }
    }

    /// Stops serving `path` (requests then get 404).
    public func removeRoute(_ path: String) {
        state.withLock { $0.routes[path] = nil }
    }

    /// Closes the listener and every connection, releases gated requests, and waits for every server thread to
    /// finish. Idempotent; returns in milliseconds unless a `.handler` closure is still running.
    public func stop() {
        let firstCall = state.withLock { state -> Bool in
            guard !state.isStopping else { return false }
            state.isStopping = true
            for socket in state.connections.values { shutdown(socket, Int32(SHUT_RDWR)) }
            return true
        }
        guard firstCall else {
            state.wait(until: { $0.isStopped }, then: { _ in })
            return
        }
        var byte: UInt8 = 1
        _ = write(wakeWriteEnd, &byte, 1)
        state.wait(until: { $0.liveThreads == 0 }, then: { _ in })
        close(listenSocket)
        close(wakeReadEnd)
        close(wakeWriteEnd)
        state.withLock { $0.isStopped = true }
    }

    /// The descriptors the server holds open right now (listener, wake pipe, connections), for leak tests.
    package var openDescriptors: [Int32] {
        state.withLock { state in
            state.isStopped ? [] : [listenSocket, wakeReadEnd, wakeWriteEnd] + state.connections.values.sorted()
        }
    }

    // MARK: - Accepting

    private func acceptLoop() {
        defer { state.withLock { $0.liveThreads -= 1 } }
        var fds = [
            pollfd(fd: listenSocket, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeReadEnd, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&fds, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || fds[1].revents != 0 { return }
            guard fds[0].revents != 0 else { continue }
            let client = accept(listenSocket, nil, nil)
            guard client >= 0 else {
                // Out of descriptors (EMFILE) would otherwise spin: back off briefly, then retry.
                if errno != EINTR && errno != ECONNABORTED && !pause(.milliseconds(10)) { return }
                continue
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            var yes: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            let id = state.withLock { state -> Int? in
                guard !state.isStopping else { return nil }
                state.nextConnectionID += 1
                state.connections[state.nextConnectionID] = client
                state.liveThreads += 1
                state.statistics.connectionsAccepted += 1
                return state.nextConnectionID
            }
            guard let id else {
                close(client)
                return
            }
            Thread.detachNewThread { [self] in
                Connection(server: self, socket: client).run()
                finishConnection(id: id)
            }
        }
    }

    private func finishConnection(id: Int) {
        state.withLock { state in
            if let socket = state.connections.removeValue(forKey: id) { close(socket) }
            state.liveThreads -= 1
        }
    }

    /// Waits up to `duration` on the wake pipe; returns false when the server is stopping.
    func pause(_ duration: Duration) -> Bool {
        let (seconds, attoseconds) = duration.components
        let milliseconds = max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        var fd = pollfd(fd: wakeReadEnd, events: Int16(POLLIN), revents: 0)
        return poll(&fd, 1, Int32(clamping: milliseconds)) == 0
    }

    /// Blocks until the client closes `socket` or the server stops; returns true when the client closed it.
    func waitForClientClose(_ socket: Int32) -> Bool {
        var fds = [
            pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeReadEnd, events: Int16(POLLIN), revents: 0),
        ]
        var scratch = [UInt8](repeating: 0, count: 4096)
        while true {
            let ready = poll(&fds, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || fds[1].revents != 0 { return false }
            // Data the client sends meanwhile is discarded; end of stream or an error means it went away.
            if recv(socket, &scratch, scratch.count, 0) <= 0 { return true }
        }
    }
}
