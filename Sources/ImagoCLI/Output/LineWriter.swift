import Dispatch
import Foundation
import ImagoCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writes lines to a file descriptor from a thread of its own, so that a reader that stops reading (a full pipe to
/// a stalled log collector) never blocks the caller, and one that goes away (a closed pipe) never ends the process.
///
/// `imago serve` writes its access log through one to standard output: a request's line is appended to a buffer
/// of at most ``capacity`` bytes and the call returns; the writer's thread writes what is buffered, in the order it
/// was appended, with `write(2)`, the lines of ``gathering`` at a time. A line that does not fit in the buffer,
/// the lines of a write that fails (`ENOSPC`, `EIO`), and every line once the reader has gone (`EPIPE`) or the
/// descriptor is not open (`EBADF`), are dropped and counted (``droppedCount``), as ``SyslogWriter`` drops what its
/// socket does not take. Thread-safe.
final class LineWriter: Sendable {
    /// Bytes of lines held while the reader is behind before more are dropped (`--log-buffer`): 1 MiB by default,
    /// about 2,500 of `imago serve`'s JSON lines.
    static let defaultCapacity = 1 << 20

    private struct State {
        /// Bytes appended and not yet taken by the writer's thread.
        var pending: [UInt8] = []
        /// Lines in `pending`.
        var pendingLines = 0
        /// Whether the writer's thread is writing a batch it took.
        var writing = false
        /// Whether the reader has gone (`EPIPE`) or the descriptor is not one (`EBADF`): every line from then on
        /// is dropped. Other failures (`ENOSPC` on a full disk, `EIO`) drop their batch only.
        var readerGone = false
    }

    /// The descriptor written to.
    let descriptor: Int32
    /// Bytes of lines held at most.
    let capacity: Int
    private let state = Locked(State())
    private let dropped = Atomic<Int>(0)
    /// Signalled when `pending` goes from empty to not, to wake the writer's thread.
    private let wake = DispatchSemaphore(value: 0)

    /// A writer to `descriptor` (not closed by it), holding at most `capacity` bytes (default ``defaultCapacity``;
    /// at least one line of any length is always held when nothing else is). Its thread starts at once and lives as
    /// long as the process.
    init(descriptor: Int32, capacity: Int = LineWriter.defaultCapacity) {
        self.descriptor = descriptor
        self.capacity = max(0, capacity)
        let thread = Thread { [self] in run() }
        thread.name = "imago-log"
        thread.start()
    }

    /// Lines dropped so far: the buffer was full, or the descriptor had failed.
    var droppedCount: Int { dropped.load(ordering: .relaxed) }

    /// Appends `line` and a line feed to what is written, or drops it; never blocks on the descriptor.
    func write(_ line: String) {
        let wasEmpty = state.withLock { state -> Bool? in
            let size = line.utf8.count + 1
            guard !state.readerGone, state.pending.isEmpty || state.pending.count + size <= capacity else { return nil }
            let wasEmpty = state.pending.isEmpty
            state.pending.append(contentsOf: line.utf8)
            state.pending.append(0x0A)
            state.pendingLines += 1
            return wasEmpty
        }
        switch wasEmpty {
        case nil: dropped.add(1, ordering: .relaxed)
        case true?: wake.signal()
        case false?: break
        }
    }

    /// Waits until every line appended so far is written (or dropped), for up to `limit`; returns whether it was.
    /// For the end of the process: a reader that does not read does not hold it up for longer than `limit`.
    @discardableResult
    func drain(within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        while true {
            let done = state.withLock { $0.pending.isEmpty && !$0.writing }
            if done { return true }
            if ContinuousClock.now >= deadline { return false }
            usleep(2_000)
        }
    }

    /// How long the writer's thread lets lines gather after the first before writing them: one wake-up and one
    /// `write(2)` for the lines of that many milliseconds, not one each.
    static let gathering = Duration.milliseconds(10)

    /// The writer's thread: takes what is pending and writes it, until the process ends.
    private func run() {
        var cutLine = false
        while true {
            wake.wait()
            Thread.sleep(forTimeInterval: Self.gathering.timeInterval)
            while true {
                let (taken, lines) = state.withLock { state -> ([UInt8], Int) in
                    defer {
                        state.pending = []
                        state.pendingLines = 0
                    }
                    state.writing = !state.pending.isEmpty
                    return (state.pending, state.pendingLines)
                }
                if taken.isEmpty { break }
                // After a write that stopped within a line, a line feed first: the next lines start whole.
                let batch = cutLine ? [0x0A] + taken : taken
                let (failure, count) = batch.withUnsafeBytes { FileDescriptorWriting.writeAll(descriptor, $0) }
                if failure == 0 { cutLine = false } else if count > 0 { cutLine = batch[count - 1] != 0x0A }
                state.withLock {
                    $0.writing = false
                    if failure == EPIPE || failure == EBADF { $0.readerGone = true }
                }
                if failure != 0 { dropped.add(lines, ordering: .relaxed) }
            }
        }
    }
}
