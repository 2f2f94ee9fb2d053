import CImagoShims
import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One child process of a ``ChildProcessDecoder`` or ``ChildProcessEncoder``, answering requests one after another
/// over a socket that is its standard input and output.
///
/// Started by ``ProcessSpawning`` (a process group of its own, no blocked signal, the default `SIGPIPE`, standard
/// error to `/dev/null`), with no descriptor of this process but its end of the socket; ended by killing the whole
/// group and reaping the child with `waitpid`. Foundation's `Process` was not used: it learns that a child ended
/// from a socket the child inherits, so a child killed while a process it started still ran (a shell's command)
/// was never seen to end, and `waitUntilExit()` blocked as long as that grandchild lived (RELIABILITY.md §47).
///
/// Used by one thread at a time: a pool hands a worker out and takes it back (hence `@unchecked Sendable`).
final class ChildWorker: @unchecked Sendable {
    /// What moving bytes to or from the child came to.
    enum Transfer: Equatable {
        /// All of them.
        case done
        /// The child closed its end (it ended) first.
        case closed
        /// The deadline passed first.
        case timedOut
    }

    /// The child's process ID, also its process group's.
    let pid: pid_t
    /// This process's end of the socket (non-blocking).
    private let socket: Int32
    /// Requests the child has answered.
    var answered = 0
    /// The child's wait status, once reaped.
    private var status: Int32?

    private init(pid: pid_t, socket: Int32) {
        self.pid = pid
        self.socket = socket
    }

    /// Starts `executable ARGUMENTS…`.
    static func start(executable: URL, arguments: [String]) throws(ProcessSpawning.Failure) -> ChildWorker {
        var pair: [Int32] = [-1, -1]
        guard cimago_socketpair_cloexec(&pair) == 0 else {
            throw ProcessSpawning.Failure(call: "socketpair", code: errno)
        }
        let pid: pid_t
        do {
            // The socket is close-on-exec; every other descriptor is closed in the child too, whatever it is.
            pid = try ProcessSpawning.spawn(
                executable.path, arguments: arguments, environment: environment,
                standardInput: .descriptor(pair[1]), standardOutput: .descriptor(pair[1])
            ) { _ = cimago_spawn_close_from($0, 3) }
        } catch {
            close(pair[0])
            close(pair[1])
            throw error
        }
        close(pair[1])
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
        return ChildWorker(pid: pid, socket: pair[0])
    }

    /// Whether the child has ended (reaped here if so).
    var hasEnded: Bool {
        if status != nil { return true }
        var waited: Int32 = 0
        guard waitpid(pid, &waited, WNOHANG) == pid else { return false }
        status = waited
        return true
    }

    /// Sends all of `bytes` by `deadline`.
    func transmit(_ bytes: some ContiguousBytes, deadline: ContinuousClock.Instant) -> Transfer {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return .done }
            var done = 0
            while done < raw.count {
                let sent = send(socket, base + done, raw.count - done, Int32(MSG_NOSIGNAL))
                if sent >= 0 {
                    done += sent
                    continue
                }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK:
                    guard wait(for: Int16(POLLOUT), until: deadline) else { return .timedOut }
                default: return .closed
                }
            }
            return .done
        }
    }

    /// Reads exactly `count` bytes by `deadline`; `nil` with what stopped it.
    func receive(_ count: Int, deadline: ContinuousClock.Instant) -> (Data?, Transfer) {
        var data = Data(count: count)
        let transfer = data.withUnsafeMutableBytes { raw -> Transfer in
            guard let base = raw.baseAddress else { return .done }
            var done = 0
            while done < count {
                let received = recv(socket, base + done, count - done, 0)
                if received > 0 {
                    done += received
                    continue
                }
                if received == 0 { return .closed }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK:
                    guard wait(for: Int16(POLLIN), until: deadline) else { return .timedOut }
                default: return .closed
                }
            }
            return .done
        }
        return (transfer == .done ? data : nil, transfer)
    }

    /// Tells the child that no request follows (its standard input ends after what was sent).
    func finishRequests() {
        shutdown(socket, Int32(SHUT_WR))
    }

    /// Kills the child's process group, closes the socket and reaps the child; returns its wait status.
    @discardableResult
    func end() -> Int32 {
        if status == nil { kill(-pid, SIGKILL) }
        close(socket)
        if let status { return status }
        var waited: Int32 = 0
        while waitpid(pid, &waited, 0) < 0, errno == EINTR {}
        status = waited
        return waited
    }

    /// Waits until the socket is ready for `events` or `deadline` passes; `false` at the deadline.
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let left = deadline - .now
            guard left > .zero else { return false }
            var ready = pollfd(fd: socket, events: events, revents: 0)
            let polled = poll(&ready, 1, Int32(clamping: Int(left.timeInterval * 1000) + 1))
            if polled > 0 { return true }
            if polled < 0, errno != EINTR { return true }  // the next call reports the error
        }
    }

    /// This process's environment for the child, with Swift's crash backtracer turned off: a child that crashes
    /// would otherwise hold its answer open while the backtracer symbolicates, for a report written to `/dev/null`.
    private static var environment: [String] {
        ProcessInfo.processInfo.environment.filter { $0.key != "SWIFT_BACKTRACE" }.map { "\($0.key)=\($0.value)" }
            + ["SWIFT_BACKTRACE=enable=no"]
    }
}
