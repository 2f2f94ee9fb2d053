import Foundation
import ImagoTesting

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP server on 127.0.0.1 that answers each command it receives with scripted bytes, then goes on, closes the
/// connection or stalls (keeps it open, silent): replies a real redis-server never sends (a bulk string cut short,
/// a length over any cap, a bad terminator), for the reply reader's failure paths. Runs until ``stop()``, which closes every socket (call it: its threads keep it alive).
final class ScriptedRedisServer: @unchecked Sendable {  // safe: `sockets` is behind `lock`; the rest is immutable
    /// What the server does with one command.
    enum Step: Sendable {
        /// Sends the bytes and reads the next command.
        case reply(Data)
        /// Sends the bytes, then closes the connection.
        case replyThenClose(Data)
        /// Sends the bytes, then says nothing more until ``ScriptedRedisServer/stop()``.
        case replyThenStall(Data)
    }

    /// The port it listens on.
    let port: Int
    /// The URL the tier is given.
    var url: String { "redis://127.0.0.1:\(port)" }
    private let listener: Int32
    private let script: @Sendable (_ connection: Int, _ command: Int, _ name: String) -> Step
    private let lock = NSLock()
    private var sockets: [Int32] = []
    private var isStopped = false
    private var connections = 0

    /// Listens on an ephemeral port; `script` says what to do with the `command`-th command (from 0, named
    /// `name`: `GETRANGE`, `DEL`, `HINCRBY` …) of the `connection`-th connection accepted (from 0).
    init(script: @escaping @Sendable (_ connection: Int, _ command: Int, _ name: String) -> Step) throws {
        self.script = script
        let (fd, port) = try LoopbackListener.open(backlog: 16)
        listener = fd
        self.port = Int(port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Closes the listener and every connection (a stalled client then sees the connection end). Sockets are shut
    /// down and closed under the lock: a descriptor closed and reused by another server's connection in between
    /// would be shut down by mistake.
    func stop() {
        lock.withLock {
            for fd in sockets { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
            sockets = []
            isStopped = true
            Glibc.shutdown(listener, Int32(SHUT_RDWR))
        }
    }

    /// Connections accepted so far.
    var acceptedConnections: Int { lock.withLock { connections } }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else {
                close(listener)
                return
            }
            let index = lock.withLock {
                if isStopped { Glibc.shutdown(fd, Int32(SHUT_RDWR)) } else { sockets.append(fd) }
                connections += 1
                return connections - 1
            }
            let thread = Thread { [self] in serve(fd, connection: index) }
            thread.start()
        }
    }

    private func serve(_ fd: Int32, connection: Int) {
        defer {
            lock.withLock {
                sockets.removeAll { $0 == fd }
                close(fd)
            }
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var pending: [UInt8] = []
        var command = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return }
            pending += buffer[0..<n]
            // One step per whole command received (a pipeline sends several in one write).
            while let (name, length) = Self.command(in: pending) {
                pending.removeFirst(length)
                let step = script(connection, command, name)
                command += 1
                let bytes: Data
                switch step {
                case .reply(let data), .replyThenClose(let data), .replyThenStall(let data): bytes = data
                }
                guard send(bytes, on: fd) else { return }
                switch step {
                case .reply: continue
                case .replyThenClose: return
                case .replyThenStall:
                    // Silent until stop() shuts the socket down (read then returns 0).
                    while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
                    return
                }
            }
        }
    }

    /// The name (first word, upper-cased) and byte length of the whole command `bytes` start with (a RESP array of
    /// bulk strings, as clients send them), or `nil` when it has not arrived whole.
    static func command(in bytes: [UInt8]) -> (String, Int)? {
        var at = 0
        func line() -> Int? {
            guard let end = bytes[at...].firstIndex(of: UInt8(ascii: "\r")), end + 1 < bytes.count,
                let value = Int(String(decoding: bytes[(at + 1)..<end], as: UTF8.self))
            else { return nil }
            at = end + 2
            return value
        }
        guard bytes.first == UInt8(ascii: "*"), let count = line() else { return nil }
        var name = ""
        for i in 0..<count {
            guard at < bytes.count, bytes[at] == UInt8(ascii: "$"), let length = line(), at + length + 2 <= bytes.count
            else { return nil }
            if i == 0 { name = String(decoding: bytes[at..<(at + length)], as: UTF8.self).uppercased() }
            at += length + 2
        }
        return (name, at)
    }

    private func send(_ data: Data, on fd: Int32) -> Bool {
        data.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                guard n > 0 else { return false }
                sent += n
            }
            return true
        }
    }
}
