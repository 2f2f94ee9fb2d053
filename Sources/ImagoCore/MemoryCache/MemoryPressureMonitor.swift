import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Watches the process's memory pressure and tells its subscribers (caches) when the level changes.
///
/// Costs nothing while nobody listens: the first ``subscribe(_:)`` starts one thread, which samples the
/// ``MemoryPressureSource`` every `interval` (default 2 s) and at once whenever the source's PSI trigger fires
/// (it waits in poll(2), so it uses no CPU in between); the thread ends when the last subscriber leaves
/// (unsubscribes or is deallocated: subscribers are held weakly) or on ``stop()``.
/// Subscribers are told on the monitor's thread, outside any lock, in no particular order.
///
/// Linux has no `DispatchSource.makeMemoryPressureSource`; this is its stand-in. Trim by hand with
/// ``simulate(_:)`` (or call a cache's `trim`) when the application knows better.
///
/// ```swift
/// let monitor = MemoryPressureMonitor(source: LinuxMemoryPressureSource(), interval: .seconds(1))
/// monitor.subscribe(cache)   // the cache halves on .warning, empties on .critical
/// ```
///
/// Thread-safe.
public final class MemoryPressureMonitor: Sendable {
    /// The process-wide monitor, reading ``LinuxMemoryPressureSource/Paths/system``; ``MemoryCache`` subscribes
    /// to it unless its configuration says otherwise.
    public static let shared = MemoryPressureMonitor()

    /// Where readings come from.
    public let source: any MemoryPressureSource
    /// How often the source is sampled (default 2 s).
    public let interval: Duration

    private struct Subscriber {
        weak var object: (any MemoryPressureResponding)?
    }

    private struct State {
        var subscribers: [ObjectIdentifier: Subscriber] = [:]
        var level = MemoryPressureLevel.normal
        var loop: PollingLoop?
    }

    private let state = Locked(State())

    /// A monitor over `source` (default: a ``LinuxMemoryPressureSource`` for this process), sampling every
    /// `interval` (default 2 s) once somebody subscribes.
    public init(source: any MemoryPressureSource = LinuxMemoryPressureSource(), interval: Duration = .seconds(2)) {
        self.source = source
        self.interval = interval
    }

    /// The level at the last sample (or simulation); `.normal` before the first.
    public var level: MemoryPressureLevel { state.withLock { $0.level } }

    /// Whether the sampling thread is running (it runs exactly while there are subscribers).
    public var isRunning: Bool { state.withLock { $0.loop != nil } }

    /// The number of live subscribers.
    public var subscriberCount: Int {
        state.withLock { state in state.subscribers.values.count { $0.object != nil } }
    }

    /// The number of sampling threads alive now, counting one that has been told to stop but has not yet ended
    /// (0 or 1 outside of a restart; for tests).
    package var activeThreadCount: Int { activeThreads.value }
    fileprivate let activeThreads = Locked(0)

    /// Adds `subscriber` (held weakly; adding it twice has no effect) and starts sampling if it is the first.
    public func subscribe(_ subscriber: any MemoryPressureResponding) {
        let loop = state.withLock { state -> PollingLoop? in
            state.subscribers[ObjectIdentifier(subscriber)] = Subscriber(object: subscriber)
            guard state.loop == nil else { return nil }
            let loop = PollingLoop()
            state.loop = loop
            return loop
        }
        loop?.start(monitor: self)
    }

    /// Removes `subscriber`; stops sampling (and waits for the thread to end) if it was the last.
    public func unsubscribe(_ subscriber: any MemoryPressureResponding) {
        unsubscribe(id: ObjectIdentifier(subscriber))
    }

    /// Removes the subscriber with this identity (what a subscriber calls from its `deinit`, when a reference
    /// to it can no longer be formed).
    package func unsubscribe(id: ObjectIdentifier) {
        let loop = state.withLock { state -> PollingLoop? in
            state.subscribers[id] = nil
            state.subscribers = state.subscribers.filter { $0.value.object != nil }
            guard state.subscribers.isEmpty, let loop = state.loop else { return nil }
            state.loop = nil
            return loop
        }
        loop?.stop()
    }

    /// Forgets every subscriber and stops sampling. When it returns, the thread has ended and no further
    /// notification will arrive (unless called from a subscriber's callback on the monitor's own thread, which
    /// ends right after). A later ``subscribe(_:)`` starts again.
    public func stop() {
        let loop = state.withLock { state -> PollingLoop? in
            state.subscribers = [:]
            defer { state.loop = nil }
            return state.loop
        }
        loop?.stop()
    }

    /// Acts as if the source had reported `level`: records it and, if it differs from the current level, tells
    /// every subscriber on the calling thread before returning. The next real sample may change it back.
    public func simulate(_ level: MemoryPressureLevel) {
        publish(level, from: nil)
    }

    /// Samples the source once, now, on the calling thread, and tells subscribers if the level changed.
    public func sampleNow() {
        publish(source.currentLevel(), from: nil)
    }

    // Records `level` and tells live subscribers outside the lock if it changed. A loop that has been stopped
    // publishes nothing. Returns false when `loop` should end (stopped, or nobody left to tell).
    @discardableResult
    fileprivate func publish(_ level: MemoryPressureLevel, from loop: PollingLoop?) -> Bool {
        let (keepRunning, toTell) = state.withLock { state -> (Bool, [any MemoryPressureResponding]) in
            if let loop, state.loop !== loop { return (false, []) }
            state.subscribers = state.subscribers.filter { $0.value.object != nil }
            if loop != nil, state.subscribers.isEmpty {
                state.loop = nil
                return (false, [])
            }
            guard level != state.level else { return (true, []) }
            state.level = level
            return (true, state.subscribers.values.compactMap(\.object))
        }
        for subscriber in toTell { subscriber.didReceiveMemoryPressure(level) }
        return keepRunning
    }

    // One sampling thread and its wake-up pipe. Stopping writes to the pipe, which ends the thread's poll(2).
    // @unchecked Sendable: the descriptors are immutable after init; `stopping` and `threadID` sit behind locks;
    // `exited` is a semaphore, safe from any thread.
    fileprivate final class PollingLoop: @unchecked Sendable {
        private let wakeRead: Int32
        private let wakeWrite: Int32
        private let stopping = Locked(false)
        private let threadID = Locked<pthread_t?>(nil)
        private let exited = DispatchSemaphore(value: 0)

        init() {
            var fds: [Int32] = [-1, -1]
            if pipe(&fds) == 0 {
                _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
                _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            }
            wakeRead = fds[0]
            wakeWrite = fds[1]
        }

        // The pipe lives as long as the loop object, so a late `stop()` never writes to a closed descriptor.
        deinit {
            if wakeRead >= 0 { close(wakeRead) }
            if wakeWrite >= 0 { close(wakeWrite) }
        }

        func start(monitor: MemoryPressureMonitor) {
            let thread = Thread { [self] in run(monitor: monitor) }
            thread.name = "imago.memory-pressure"
            thread.start()
        }

        func stop() {
            let alreadyStopping = stopping.withLock { stopping in
                defer { stopping = true }
                return stopping
            }
            guard !alreadyStopping else { return }
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
            // Waiting on our own thread would never end; it exits as soon as the current callback returns.
            if let id = threadID.value, pthread_equal(id, pthread_self()) != 0 { return }
            exited.wait()
        }

        private var isStopping: Bool { stopping.value }

        private func run(monitor: MemoryPressureMonitor) {
            threadID.withLock { $0 = pthread_self() }
            monitor.activeThreads.withLock { $0 += 1 }
            var trigger = monitor.source.openTrigger() ?? -1
            defer {
                if trigger >= 0 { close(trigger) }
                monitor.activeThreads.withLock { $0 -= 1 }
                exited.signal()
            }
            let components = monitor.interval.components
            let timeout = Int32(
                clamping: max(1, components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000))
            while !isStopping, monitor.publish(monitor.source.currentLevel(), from: self) {
                var fds = [
                    pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: trigger, events: Int16(POLLPRI), revents: 0),
                ]
                let ready = poll(&fds, nfds_t(fds.count), timeout)
                if ready < 0, errno != EINTR { break }
                if fds[1].revents & Int16(POLLERR | POLLNVAL) != 0 {
                    // The trigger went away (its cgroup was removed): fall back to sampling every interval.
                    close(trigger)
                    trigger = -1
                }
            }
        }
    }
}
