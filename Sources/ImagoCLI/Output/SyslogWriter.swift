import Foundation
import ImagoCore
import ImagoServer
import Synchronization

/// Sends log lines to syslog (imgproxy's `IMGPROXY_SYSLOG_*`, as Go's `log/syslog` writes them): to the local
/// daemon's socket (`/dev/log`, a Unix datagram socket) as `<PRI>Mmm dd hh:mm:ss TAG[PID]: MESSAGE`, or to a remote
/// collector over UDP or TCP as `<PRI>RFC3339-TIME HOST TAG[PID]: MESSAGE` and a line feed. The facility is
/// `user`; the severity is the record's.
///
/// Sending never blocks the caller: every line is sent without waiting, so a full socket buffer drops it, and a TCP
/// stream that fails or takes only part of a line is closed and reopened for the next one. Lines dropped are
/// counted (``droppedCount``). Thread-safe: one line is sent at a time.
final class SyslogWriter: Sendable {
    /// Where the lines go.
    enum Destination: Sendable, Equatable {
        /// A Unix datagram socket (the local daemon: `/dev/log`).
        case unix(path: String)
        /// A collector's UDP port.
        case udp(host: String, port: UInt16)
        /// A collector's TCP port (one line a message).
        case tcp(host: String, port: UInt16)

        /// The local daemon's socket, `/dev/log`.
        static let local = Destination.unix(path: "/dev/log")

        /// imgproxy's form: `network` (`unix`, `unixgram`, `udp`, `tcp`; empty: the local daemon) and `address` (a
        /// socket path, or `host:port`); `nil` for anything else.
        init?(network: String, address: String) {
            switch network {
            case "": self = address.isEmpty ? .local : .unix(path: address)
            case "unix", "unixgram": self = .unix(path: address.isEmpty ? "/dev/log" : address)
            case "udp", "tcp":
                guard let colon = address.lastIndex(of: ":"),
                    let port = UInt16(address[address.index(after: colon)...]),
                    port > 0
                else { return nil }
                let host = String(address[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                guard !host.isEmpty else { return nil }
                self = network == "udp" ? .udp(host: host, port: port) : .tcp(host: host, port: port)
            default: return nil
            }
        }

        var isRemote: Bool {
            if case .unix = self { return false }
            return true
        }
    }

    /// Syslog's severities, most severe first.
    enum Severity: Int, Sendable {
        case error = 3
        case warning = 4
        case info = 6
        case debug = 7

        /// The severity of an access log record's `level`.
        init(_ level: AccessLogRecord.Level) {
            switch level {
            case .debug: self = .debug
            case .info: self = .info
            case .warn: self = .warning
            case .error: self = .error
            }
        }
    }

    let destination: Destination
    /// The name each line is tagged with.
    let tag: String
    private let socket = Locked<Int32>(-1)
    private let dropped = Atomic<Int>(0)
    private static let facility = 1  // user

    /// A writer to `destination`, each line tagged `tag`; the socket is opened at once, so a bad address fails
    /// at start.
    ///
    /// - Throws: ``UsageError`` naming the destination when it cannot be reached.
    init(destination: Destination, tag: String) throws {
        self.destination = destination
        self.tag = tag
        let opened = try Self.open(destination)
        socket.withLock { $0 = opened }
    }

    deinit {
        socket.withLock { if $0 >= 0 { close($0) } }
    }

    /// Lines that could not be sent.
    var droppedCount: Int { dropped.load(ordering: .relaxed) }

    /// Sends `message` (one line: line feeds become spaces) at `severity`.
    func write(_ message: String, severity: Severity) {
        let text = format(message.replacingOccurrences(of: "\n", with: " "), severity: severity, at: Date())
        let sent = socket.withLock { fd -> Bool in
            if fd < 0, let reopened = try? Self.open(destination) { fd = reopened }
            guard fd >= 0 else { return false }
            let ok = Array(text.utf8).withUnsafeBytes { bytes in
                Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) == bytes.count
            }
            if !ok, case .tcp = destination {
                close(fd)  // a stalled or broken stream: the next line reconnects
                fd = -1
            }
            return ok
        }
        if !sent { dropped.add(1, ordering: .relaxed) }
    }

    /// `message` as the line sent: the local form for a Unix socket, the remote form (with a line feed) otherwise.
    func format(_ message: String, severity: Severity, at date: Date) -> String {
        let priority = "<\(Self.facility * 8 + severity.rawValue)>"
        let process = "\(tag)[\(getpid())]: \(message)"
        guard destination.isRemote else {
            return priority + Self.stamp(date) + " " + process
        }
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "localhost"
        return priority + date.formatted(.iso8601) + " " + host + " " + process + "\n"
    }

    /// `Mmm dd hh:mm:ss` in local time (RFC 3164's timestamp, the day padded with a space).
    static func stamp(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970)
        var parts = tm()
        localtime_r(&time, &parts)
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let day = parts.tm_mday < 10 ? " \(parts.tm_mday)" : "\(parts.tm_mday)"
        return "\(months[Int(parts.tm_mon)]) \(day) "
            + String(
                format: "%02d:%02d:%02d", Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    /// A socket connected to `destination`.
    private static func open(_ destination: Destination) throws -> Int32 {
        switch destination {
        case .unix(let path):
            let fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw UsageError("syslog: no socket (errno \(errno))") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
                close(fd)
                throw UsageError("syslog: the socket path '\(path)' is too long")
            }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                raw.copyBytes(from: bytes)
                raw[bytes.count] = 0
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard connected == 0 else {
                close(fd)
                throw UsageError("syslog: cannot reach the socket '\(path)' (errno \(errno))")
            }
            return fd
        case .udp(let host, let port), .tcp(let host, let port):
            let isTCP = if case .tcp = destination { true } else { false }
            var hints = addrinfo()
            hints.ai_socktype = isTCP ? Int32(SOCK_STREAM.rawValue) : Int32(SOCK_DGRAM.rawValue)
            var found: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else {
                throw UsageError("syslog: cannot resolve '\(host)'")
            }
            defer { freeaddrinfo(found) }
            let fd = Glibc.socket(first.pointee.ai_family, first.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw UsageError("syslog: no socket (errno \(errno))") }
            guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
                close(fd)
                throw UsageError("syslog: cannot reach \(host):\(port) (errno \(errno))")
            }
            return fd
        }
    }
}
