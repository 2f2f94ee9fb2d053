extension LinuxMemoryPressureSource {
    /// One line of a PSI file: the share of wall time (percent) some or all tasks were stalled on memory.
    public struct StallAverages: Sendable, Hashable {
        /// Percent over the last 10 seconds.
        public var avg10: Double
        /// Percent over the last 60 seconds.
        public var avg60: Double
        /// Percent over the last 300 seconds.
        public var avg300: Double
        /// Total stall time in microseconds since boot (or since the cgroup was made).
        public var total: UInt64

        /// Averages as the kernel reports them.
        public init(avg10: Double, avg60: Double = 0, avg300: Double = 0, total: UInt64 = 0) {
            self.avg10 = avg10
            self.avg60 = avg60
            self.avg300 = avg300
            self.total = total
        }
    }

    /// The content of `/proc/pressure/memory` or a cgroup's `memory.pressure` (Linux PSI).
    public struct PressureStall: Sendable, Hashable {
        /// `some`: at least one task was stalled on memory.
        public var some: StallAverages
        /// `full`: every non-idle task was stalled at once (thrashing); absent on old kernels.
        public var full: StallAverages?

        /// Both lines.
        public init(some: StallAverages, full: StallAverages? = nil) {
            self.some = some
            self.full = full
        }
    }

    /// The counters of a cgroup v2 `memory.events` file (each only ever grows).
    public struct MemoryEvents: Sendable, Hashable {
        /// Times the cgroup went over `memory.high` and was throttled.
        public var high: UInt64
        /// Times the cgroup hit `memory.max` and had to reclaim.
        public var max: UInt64
        /// Times the cgroup ran out of memory after reclaim failed.
        public var oom: UInt64
        /// Processes the OOM killer killed in the cgroup.
        public var oomKill: UInt64

        /// Counters as the kernel reports them (default all zero).
        public init(high: UInt64 = 0, max: UInt64 = 0, oom: UInt64 = 0, oomKill: UInt64 = 0) {
            self.high = high
            self.max = max
            self.oom = oom
            self.oomKill = oomKill
        }
    }

    /// Everything one sample read; a missing file leaves its field `nil`.
    public struct Reading: Sendable, Hashable {
        /// PSI stall averages.
        public var pressure: PressureStall?
        /// Bytes the cgroup uses, less its inactive file cache (what the kernel cannot drop for free).
        public var memoryInUse: Int?
        /// The cgroup's hard limit in bytes; `nil` when unlimited (`max`) or unknown.
        public var memoryLimit: Int?
        /// cgroup v2 event counters.
        public var events: MemoryEvents?

        /// A reading (every field default `nil`).
        public init(
            pressure: PressureStall? = nil, memoryInUse: Int? = nil, memoryLimit: Int? = nil,
            events: MemoryEvents? = nil
        ) {
            self.pressure = pressure
            self.memoryInUse = memoryInUse
            self.memoryLimit = memoryLimit
            self.events = events
        }

        /// `memoryInUse / memoryLimit`, or `nil` without both.
        public var usageRatio: Double? {
            guard let memoryInUse, let memoryLimit, memoryLimit > 0 else { return nil }
            return Double(memoryInUse) / Double(memoryLimit)
        }
    }

    /// When a reading counts as a warning or as critical.
    ///
    /// Critical when any of: usage ≥ `usageCritical` (default 0.97) of the limit; PSI `full avg10` ≥
    /// `fullStallCritical` (default 5 %); the `max`, `oom` or `oom_kill` counter grew since the last sample.
    /// Otherwise a warning when any of: usage ≥ `usageWarning` (default 0.90); PSI `some avg10` ≥
    /// `someStallWarning` (default 10 %); the `high` counter grew. Otherwise normal.
    public struct Thresholds: Sendable, Hashable {
        /// Usage ratio (in use ÷ limit) from which the level is a warning (default 0.90).
        public var usageWarning: Double
        /// Usage ratio from which the level is critical (default 0.97).
        public var usageCritical: Double
        /// PSI `some avg10` percent from which the level is a warning (default 10).
        public var someStallWarning: Double
        /// PSI `full avg10` percent from which the level is critical (default 5).
        public var fullStallCritical: Double

        /// Thresholds with the documented defaults.
        public init(
            usageWarning: Double = 0.90, usageCritical: Double = 0.97, someStallWarning: Double = 10,
            fullStallCritical: Double = 5
        ) {
            self.usageWarning = usageWarning
            self.usageCritical = usageCritical
            self.someStallWarning = someStallWarning
            self.fullStallCritical = fullStallCritical
        }

        /// The level `reading` indicates; event counters count only when they grew since `previousEvents`.
        public func level(for reading: Reading, previousEvents: MemoryEvents?) -> MemoryPressureLevel {
            var grew = (high: false, severe: false)
            if let now = reading.events, let before = previousEvents {
                grew.high = now.high > before.high
                grew.severe = now.max > before.max || now.oom > before.oom || now.oomKill > before.oomKill
            }
            let ratio = reading.usageRatio ?? 0
            let some = reading.pressure?.some.avg10 ?? 0
            let full = reading.pressure?.full?.avg10 ?? 0
            if ratio >= usageCritical || full >= fullStallCritical || grew.severe { return .critical }
            if ratio >= usageWarning || some >= someStallWarning || grew.high { return .warning }
            return .normal
        }
    }

    // MARK: - Parsing the kernel's text

    /// Parses PSI text (`some avg10=0.00 avg60=0.00 avg300=0.00 total=0` then an optional `full …` line);
    /// `nil` when there is no well-formed `some` line.
    public static func parsePressure(_ text: String) -> PressureStall? {
        var some: StallAverages?
        var full: StallAverages?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let kind = fields.first else { continue }
            var values: [Substring: Substring] = [:]
            for field in fields.dropFirst() {
                guard let equals = field.firstIndex(of: "=") else { continue }
                values[field[..<equals]] = field[field.index(after: equals)...]
            }
            guard let avg10 = values["avg10"].flatMap({ Double($0) }) else { continue }
            let averages = StallAverages(
                avg10: avg10, avg60: values["avg60"].flatMap { Double($0) } ?? 0,
                avg300: values["avg300"].flatMap { Double($0) } ?? 0,
                total: values["total"].flatMap { UInt64($0) } ?? 0)
            if kind == "some" { some = averages } else if kind == "full" { full = averages }
        }
        return some.map { PressureStall(some: $0, full: full) }
    }

    /// Parses a cgroup v2 `memory.events` file (`high 3` lines); `nil` when no known counter is present.
    public static func parseMemoryEvents(_ text: String) -> MemoryEvents? {
        var events = MemoryEvents()
        var found = false
        for (key, value) in keyValues(text) {
            switch key {
            case "high": events.high = value
            case "max": events.max = value
            case "oom": events.oom = value
            case "oom_kill": events.oomKill = value
            default: continue
            }
            found = true
        }
        return found ? events : nil
    }

    /// Parses a byte count file (`memory.max`, `memory.current`, v1 `memory.limit_in_bytes`); `nil` for `max`
    /// (unlimited), for v1's "no limit" value (≥ 2⁶² bytes) and for anything not a number.
    public static func parseByteCount(_ text: String) -> Int? {
        let trimmed = text.split(whereSeparator: \.isWhitespace).first ?? ""
        guard let value = Int(trimmed), value >= 0, value < 1 << 62 else { return nil }
        return value
    }

    /// The `inactive_file` bytes of a `memory.stat` file (page cache the kernel can drop), or `nil`.
    public static func parseInactiveFile(_ text: String) -> Int? {
        for (key, value) in keyValues(text) where key == "inactive_file" {
            return Int(clamping: value)
        }
        return nil
    }

    private static func keyValues(_ text: String) -> [(Substring, UInt64)] {
        text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 2, let value = UInt64(parts[1]) else { return nil }
            return (parts[0], value)
        }
    }
}
