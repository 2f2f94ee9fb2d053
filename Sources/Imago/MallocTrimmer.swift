import CImagoShims
import Dispatch
import ImagoCore

/// Hands the free memory glibc's `malloc` keeps inside its arenas back to the kernel (`malloc_trim(0)`), once or on
/// a timer. **Opt-in**: Imago never calls it by itself and never changes malloc's settings (no `mallopt`,
/// no `MALLOC_ARENA_MAX`): those are the program's, not a library's.
///
/// Why a long-running server may want it: glibc gives each thread that allocates an arena (up to 8 per core), and
/// returns a freed block to the kernel only when it sits at the top of its arena. Decoded images, response bodies
/// and the buffers of the loader's and Dispatch's threads are freed in the middle of arenas, so a process's RSS
/// climbs towards the high-water mark of every arena while the memory actually in use stays flat. A trim hands
/// those free pages back; what is left is memory alive at that moment. `imago-bench soak` measures both
/// (RELIABILITY.md §17: at quiet points the heap in use stays flat; RSS without trims keeps the arenas'
/// high-water mark). A trim walks every arena's free lists and holds each arena's lock while it does; on a heavily
/// loaded machine one trim can take a large fraction of a second of wall time, during which threads allocating
/// from that arena wait: do not trim more often than every few seconds. A server that knows when it is idle (its
/// queue just emptied) gets the most from one ``trimNow()`` then: nothing in flight holds the pages the trim
/// could return.
///
/// On a C library other than glibc, trimming does nothing (``trimNow()`` returns `false`).
///
/// ```swift
/// let trimmer = MallocTrimmer(interval: .seconds(30))   // keep it alive as long as trims should run
/// ```
///
/// Thread-safe: every method may be called from any thread.
public final class MallocTrimmer: @unchecked Sendable {  // safe: `timer` is set once, Dispatch sources are thread-safe
    /// What the trimmer has done so far.
    public struct Statistics: Sendable, Equatable {
        /// Trims run (timer ticks and ``trim()`` calls); starts at 0.
        public var trims = 0
        /// Trims after which glibc reported releasing memory; starts at 0.
        public var releasingTrims = 0
        /// Time spent inside `malloc_trim`, all trims together; starts at zero.
        public var totalDuration = Duration.zero
        /// The longest single trim; starts at zero.
        public var longestDuration = Duration.zero
    }

    private let timer: any DispatchSourceTimer
    private let counters = Locked(Statistics())

    /// Starts trimming every `interval` (default 30 s; at least 100 ms, at most a day) on a utility-QoS Dispatch timer, the first
    /// trim one interval from now, until ``cancel()`` is called or the trimmer is released.
    public init(interval: Duration = .seconds(30)) {
        // Whole milliseconds, at most a day (a repeating Dispatch interval must fit in its nanoseconds).
        let milliseconds = Int(min(max(interval, .milliseconds(100)), .seconds(86_400)).milliseconds)
        timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        // A tenth of the interval of leeway lets the system batch the wake-up with other timers.
        timer.schedule(
            deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds),
            leeway: .milliseconds(milliseconds / 10))
        timer.setEventHandler { [counters] in _ = Self.trim(counting: counters) }
        timer.resume()
    }

    deinit { timer.cancel() }

    /// Stops the timer; a trim already running finishes. Calling it again does nothing.
    public func cancel() { timer.cancel() }

    /// What this trimmer has done so far.
    public var statistics: Statistics { counters.value }

    /// Trims once, now, on the calling thread, and counts it in this trimmer's ``statistics``. Returns whether
    /// glibc released memory (always `false` off glibc).
    @discardableResult
    public func trim() -> Bool { Self.trim(counting: counters) }

    /// Trims once, now, on the calling thread (`malloc_trim(0)`). Returns whether glibc released memory (always
    /// `false` off glibc).
    @discardableResult
    public static func trimNow() -> Bool { cimago_malloc_trim() == 1 }

    private static func trim(counting counters: Locked<Statistics>) -> Bool {
        let clock = ContinuousClock()
        let start = clock.now
        let released = trimNow()
        let duration = clock.now - start
        counters.withLock { s in
            s.trims += 1
            if released { s.releasingTrims += 1 }
            s.totalDuration += duration
            s.longestDuration = max(s.longestDuration, duration)
        }
        return released
    }
}
