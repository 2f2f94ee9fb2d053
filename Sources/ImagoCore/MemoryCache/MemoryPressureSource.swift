/// How short of memory the process is, from calm to urgent.
public enum MemoryPressureLevel: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Enough memory: caches keep what they hold.
    case normal = 0
    /// Memory is getting short: caches should give up part of what they hold (``MemoryCache`` halves its cost).
    case warning = 1
    /// The process is close to being killed or is stalling on reclaim: caches should empty themselves.
    case critical = 2

    /// Orders by urgency: `.normal < .warning < .critical`.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `normal`, `warning` or `critical`.
    public var description: String {
        switch self {
        case .normal: "normal"
        case .warning: "warning"
        case .critical: "critical"
        }
    }
}

/// An object that frees memory when told the process is short of it; ``MemoryCache`` adopts it.
///
/// Register with ``MemoryPressureMonitor/subscribe(_:)``; the monitor holds subscribers weakly.
public protocol MemoryPressureResponding: AnyObject, Sendable {
    /// Called whenever the monitor's level changes (including back to `.normal`), on the monitor's thread or the
    /// thread that called ``MemoryPressureMonitor/simulate(_:)``, never while any Imago lock is held.
    func didReceiveMemoryPressure(_ level: MemoryPressureLevel)
}

/// Where a ``MemoryPressureMonitor`` gets its readings: ``LinuxMemoryPressureSource`` in production, a fake in
/// tests.
public protocol MemoryPressureSource: Sendable {
    /// Reads the pressure now. Called by the monitor's thread, one call at a time, every interval and whenever
    /// the trigger fires; must not block for long (reading a few small files is fine).
    func currentLevel() -> MemoryPressureLevel

    /// Opens a file descriptor that poll(2) reports with `POLLPRI` when pressure rises (a Linux PSI trigger), so
    /// the monitor samples at once instead of at its next interval; the monitor closes it when it stops.
    /// The default implementation returns `nil`: the monitor then only samples every interval.
    func openTrigger() -> Int32?
}

extension MemoryPressureSource {
    /// No trigger: the monitor samples every interval.
    public func openTrigger() -> Int32? { nil }
}
