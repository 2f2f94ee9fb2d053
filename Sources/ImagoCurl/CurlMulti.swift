import CCurl
import Foundation
import ImagoCore

/// libcurl's multi interface driven by one dedicated thread: every transfer of a loader runs on it, sharing its
/// connection pool (HTTP/2 streams multiplexed), DNS cache and TLS sessions.
///
/// Other threads never touch a curl handle: they post `add`/`remove` commands and wake the thread with
/// `curl_multi_wakeup`, so a cancellation takes effect at once even while the thread waits in `curl_multi_poll`.
/// Each easy handle is created on the caller's thread before it is added, and cleaned up on this thread.
// @unchecked Sendable: `inbox` is behind its lock; everything else is touched only by the thread.
final class CurlMulti: @unchecked Sendable {
    private enum Command {
        case add(CurlEasy)
        case remove(CurlEasy)
    }

    private struct Inbox {
        var commands: [Command] = []
        var isStopped = false
    }

    private let multi: UnsafeMutableRawPointer
    private let share: UnsafeMutableRawPointer?
    private let inbox = Locked(Inbox())
    /// The thread's id, set when it starts (`pthread_self()` of another thread never equals it before).
    private let threadID = Locked<pthread_t>(pthread_t())
    /// The transfers on the multi handle, by their easy handle (thread only).
    private var running: [UnsafeMutableRawPointer: CurlEasy] = [:]

    /// Easy handles kept for reuse, reset but with their buffers (a 256 KB read buffer each): at most `poolLimit`,
    /// freed by the thread when it stops. Reusing them spares each transfer `curl_easy_init`'s allocations and,
    /// above all, a 256 KB buffer allocated on whichever thread configured it and freed on this one, which
    /// fragmented glibc's per-thread arenas over a long soak.
    private let pool = Locked<(handles: [UnsafeMutableRawPointer], isClosed: Bool)>(([], false))
    private let poolLimit: Int

    /// Starts the thread with the connection limits given, keeping up to `poolLimit` idle easy handles.
    init?(maximumConnectionsPerHost: Int, maximumConnections: Int, multiplexes: Bool, poolLimit: Int) {
        CurlGlobal.initialize()
        self.poolLimit = max(0, poolLimit)
        guard let multi = curl_multi_init() else { return nil }
        self.multi = multi
        _ = imago_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(1, maximumConnectionsPerHost))
        _ = imago_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, max(1, maximumConnections))
        _ = imago_multi_setopt_long(multi, CURLMOPT_PIPELINING, multiplexes ? imago_pipe_multiplex : 0)
        // The multi handle already shares connections and DNS among its transfers; the share handle adds TLS
        // session reuse (resumption) across connections. Only this thread uses it, so it needs no lock callbacks.
        share = curl_share_init()
        if let share {
            _ = imago_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_DNS.rawValue))
            _ = imago_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
        }
        let thread = Thread { [self] in run() }
        thread.name = "imago.CurlDataLoader"
        thread.start()
    }

    /// A reused (reset) or new easy handle.
    func takeHandle() -> UnsafeMutableRawPointer? {
        if let handle = pool.withLock({ $0.handles.popLast() }) { return handle }
        return curl_easy_init()
    }

    /// Takes back a handle that is on no multi handle: reset and kept for the next transfer, or freed.
    func recycle(_ handle: UnsafeMutableRawPointer) {
        curl_easy_reset(handle)
        let isKept = pool.withLock { p -> Bool in
            guard !p.isClosed, p.handles.count < poolLimit else { return false }
            p.handles.append(handle)
            return true
        }
        if !isKept { curl_easy_cleanup(handle) }
    }

    /// Adds a transfer (its callbacks start running on the thread).
    func add(_ easy: CurlEasy) { post(.add(easy)) }

    /// Removes a transfer at once: the server sees its connection (HTTP/1.1) or stream (HTTP/2) closed; its
    /// completion callback is not called. Idempotent; a transfer already finished is ignored.
    func remove(_ easy: CurlEasy) { post(.remove(easy)) }

    /// Ends the thread after removing every transfer; the handles are freed on it.
    func stop() {
        inbox.withLock { $0.isStopped = true }
        curl_multi_wakeup(multi)
    }

    private func post(_ command: Command) {
        let isStopped = inbox.withLock { s -> Bool in
            if !s.isStopped { s.commands.append(command) }
            return s.isStopped
        }
        // From the thread itself (the next transfer started by a completion callback), the loop reads the inbox
        // before it polls again: a wake-up would only cost a send(2) and a spurious poll return.
        if !isStopped, !isOnThread { curl_multi_wakeup(multi) }
    }

    /// Whether the caller runs on this multi handle's thread.
    private var isOnThread: Bool { pthread_equal(pthread_self(), threadID.value) != 0 }

    // MARK: - The thread

    private func run() {
        threadID.withLock { $0 = pthread_self() }
        var stillRunning: Int32 = 0
        while true {
            let (commands, isStopped) = inbox.withLock { s -> ([Command], Bool) in
                defer { s.commands.removeAll(keepingCapacity: true) }
                return (s.commands, s.isStopped)
            }
            if isStopped { break }
            for command in commands {
                switch command {
                case .add(let easy):
                    guard let handle = easy.handle, running[handle] == nil else { continue }
                    if let share { _ = imago_easy_setopt_share(handle, share) }
                    if curl_multi_add_handle(multi, handle) == CURLM_OK {
                        easy.lastActivity = .now
                        running[handle] = easy
                    } else {
                        let outcome = easy.outcome(code: CURLE_FAILED_INIT)
                        easy.close()
                        easy.report(outcome)
                    }
                case .remove(let easy):
                    guard let handle = easy.handle, running.removeValue(forKey: handle) != nil else { continue }
                    curl_multi_remove_handle(multi, handle)
                    easy.close()
                }
            }
            curl_multi_perform(multi, &stillRunning)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                guard let easy = running.removeValue(forKey: handle) else { continue }
                curl_multi_remove_handle(multi, handle)
                // Metrics are read before the handle is freed; the loader is told after, so a retry it starts
                // cannot race with this handle.
                let outcome = easy.outcome(code: code)
                easy.close()
                easy.report(outcome)
            }
            let wait = endIdleTransfers()
            // Commands posted by this thread's own callbacks (the next transfer, started by a completion) skipped
            // the wake-up: run them now rather than after the poll's timeout.
            if inbox.withLock({ $0.commands.isEmpty }) { curl_multi_poll(multi, nil, 0, Int32(wait), nil) }
        }
        for (handle, easy) in running {
            curl_multi_remove_handle(multi, handle)
            easy.close()
        }
        running.removeAll()
        let pooled = pool.withLock { p -> [UnsafeMutableRawPointer] in
            p.isClosed = true
            defer { p.handles = [] }
            return p.handles
        }
        for handle in pooled { curl_easy_cleanup(handle) }  // before the share they may still point to
        curl_multi_cleanup(multi)
        if let share { curl_share_cleanup(share) }
    }

    /// Ends the transfers idle for longer than their timeout (as `CURLE_OPERATION_TIMEDOUT`); returns the
    /// milliseconds until the next one could expire (at most 1000), the longest the thread may wait.
    private func endIdleTransfers() -> Int {
        let now = ContinuousClock.now
        var wait = Duration.seconds(1)
        var expired: [(UnsafeMutableRawPointer, CurlEasy)] = []
        for (handle, easy) in running {
            let remaining = easy.idleTimeout - (now - easy.lastActivity)
            if remaining <= .zero { expired.append((handle, easy)) } else { wait = min(wait, remaining) }
        }
        for (handle, easy) in expired {
            running[handle] = nil
            curl_multi_remove_handle(multi, handle)
            let outcome = easy.outcome(code: CURLE_OPERATION_TIMEDOUT)
            easy.close()
            easy.report(outcome)
        }
        return max(1, CurlEasy.milliseconds(wait))
    }
}

/// `curl_global_init`, once per process (before any other curl call, as libcurl requires).
enum CurlGlobal {
    private static let once: Bool = {
        curl_global_init(imago_global_all)
        return true
    }()

    static func initialize() { _ = once }
}
