import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads memory pressure the way Linux reports it: PSI stall averages (`/proc/pressure/memory` or the cgroup's
/// `memory.pressure`), cgroup usage against its limit (`memory.current` less inactive file cache, against
/// `memory.max`), and the cgroup's `memory.events` counters. See ``Thresholds`` for how a reading becomes a level.
///
/// Every path is configurable (``Paths``), so tests can point the source at files holding made-up content.
/// When the kernel allows it, ``openTrigger()`` arms a PSI trigger (`some 200000 2000000`: 200 ms of stall in a
/// 2 s window) so the monitor wakes as soon as stalls begin rather than at its next interval.
///
/// Thread-safe: the only state, the last event counters, sits behind one lock.
public final class LinuxMemoryPressureSource: MemoryPressureSource {
    /// The files a source reads; a `nil` path is skipped, as is a file that cannot be read.
    public struct Paths: Sendable, Hashable {
        /// PSI text (`some …`/`full …`).
        public var pressure: String?
        /// Bytes in use: cgroup v2 `memory.current` or v1 `memory.usage_in_bytes`.
        public var memoryCurrent: String?
        /// The limit: cgroup v2 `memory.max` or v1 `memory.limit_in_bytes`.
        public var memoryMax: String?
        /// cgroup v2 `memory.events` (v1 has none).
        public var memoryEvents: String?
        /// `memory.stat`, for `inactive_file` (subtracted from the bytes in use).
        public var memoryStat: String?

        /// Explicit paths (each default `nil`: not read).
        public init(
            pressure: String? = nil, memoryCurrent: String? = nil, memoryMax: String? = nil,
            memoryEvents: String? = nil, memoryStat: String? = nil
        ) {
            self.pressure = pressure
            self.memoryCurrent = memoryCurrent
            self.memoryMax = memoryMax
            self.memoryEvents = memoryEvents
            self.memoryStat = memoryStat
        }

        /// The cgroup v2 files inside `directory` (`memory.pressure`, `memory.current`, `memory.max`,
        /// `memory.events`, `memory.stat`).
        public static func cgroupV2(directory: String) -> Paths {
            Paths(
                pressure: directory + "/memory.pressure", memoryCurrent: directory + "/memory.current",
                memoryMax: directory + "/memory.max", memoryEvents: directory + "/memory.events",
                memoryStat: directory + "/memory.stat")
        }

        /// This process's files, found once: the cgroup v2 directory (from `/proc/self/cgroup`, under
        /// `/sys/fs/cgroup`) with the least `memory.max` on the path from this process's cgroup up to the mount (a
        /// limit may be set on a parent only: a systemd slice's `MemoryMax=`, a Kubernetes pod's), else the
        /// deepest one with the file, else the cgroup v1 memory controller's, chosen the same way; PSI from that
        /// cgroup's `memory.pressure` when readable, else `/proc/pressure/memory`.
        public static let system: Paths = detect()

        static func detect(procSelfCgroup: String = "/proc/self/cgroup", root: String = "/sys/fs/cgroup") -> Paths {
            let systemPressure =
                FileManager.default.isReadableFile(atPath: "/proc/pressure/memory")
                ? "/proc/pressure/memory" : nil
            let membership = CgroupMembership(reading: procSelfCgroup)
            if let directory = limiting(among: membership.unifiedDirectories(root: root), limitFile: "memory.max") {
                var paths = cgroupV2(directory: directory)
                if readSmallFile(directory + "/memory.pressure") == nil { paths.pressure = systemPressure }
                return paths
            }
            let v1 = membership.directories(controller: "memory", root: root)
            if let directory = limiting(among: v1, limitFile: "memory.limit_in_bytes") {
                return Paths(
                    pressure: systemPressure, memoryCurrent: directory + "/memory.usage_in_bytes",
                    memoryMax: directory + "/memory.limit_in_bytes", memoryStat: directory + "/memory.stat")
            }
            return Paths(pressure: systemPressure)
        }

        /// Of `directories` (top first), those that hold `limitFile`, the one with the least limit, else the
        /// deepest; `nil` when none holds it.
        static func limiting(among directories: [String], limitFile: String) -> String? {
            let holding = directories.filter {
                FileManager.default.fileExists(atPath: $0 + "/" + limitFile)
            }
            let limits = holding.compactMap { directory in
                readSmallFile(directory + "/" + limitFile).flatMap(parseByteCount).map { (directory, $0) }
            }
            return limits.min { $0.1 < $1.1 }?.0 ?? holding.last
        }
    }

    /// The files read.
    public let paths: Paths
    /// When a reading is a warning or critical.
    public let thresholds: Thresholds
    /// Whether ``openTrigger()`` tries to arm a PSI trigger (default `true`).
    public let usesTrigger: Bool
    private let previousEvents = Locked<MemoryEvents?>(nil)

    /// A source reading `paths` (default: this process's, see ``Paths/system``).
    public init(paths: Paths = .system, thresholds: Thresholds = Thresholds(), usesTrigger: Bool = true) {
        self.paths = paths
        self.thresholds = thresholds
        self.usesTrigger = usesTrigger
    }

    /// Reads every configured file now.
    public func reading() -> Reading {
        var reading = Reading()
        reading.pressure = paths.pressure.flatMap(Self.readSmallFile).flatMap(Self.parsePressure)
        reading.memoryLimit = paths.memoryMax.flatMap(Self.readSmallFile).flatMap(Self.parseByteCount)
        reading.events = paths.memoryEvents.flatMap(Self.readSmallFile).flatMap(Self.parseMemoryEvents)
        if let current = paths.memoryCurrent.flatMap(Self.readSmallFile).flatMap(Self.parseByteCount) {
            let inactive = paths.memoryStat.flatMap(Self.readSmallFile).flatMap(Self.parseInactiveFile) ?? 0
            reading.memoryInUse = max(0, current - inactive)
        }
        return reading
    }

    /// Reads the files and judges the reading by ``thresholds``; event counters are compared with the previous
    /// call's (the first call only records them).
    public func currentLevel() -> MemoryPressureLevel {
        let reading = reading()
        let previous = previousEvents.withLock { stored in
            defer { if let events = reading.events { stored = events } }
            return stored
        }
        return thresholds.level(for: reading, previousEvents: previous)
    }

    /// Arms a PSI trigger on ``Paths/pressure`` (`some 200000 2000000`), or returns `nil` when disabled, when the
    /// file is missing or not under `/proc` or `/sys` (a test's stand-in file is never written to), or when the
    /// kernel refuses (no PSI support, or no permission).
    public func openTrigger() -> Int32? {
        guard usesTrigger, let path = paths.pressure, Self.isKernelFile(path) else { return nil }
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        let trigger = Array("some 200000 2000000".utf8CString)
        let written = trigger.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == trigger.count else {
            close(fd)
            return nil
        }
        return fd
    }

    // Only kernel files (procfs, cgroupfs under /sys) take PSI triggers; writing the trigger text into an
    // ordinary stand-in file would overwrite it.
    private static func isKernelFile(_ path: String) -> Bool {
        guard let resolved = realpath(path, nil) else { return false }
        defer { free(resolved) }
        let real = String(cString: resolved)
        return real.hasPrefix("/proc/") || real.hasPrefix("/sys/")
    }

    /// The hard memory limit of this process's cgroup in bytes, or `nil` when unlimited or unknown.
    public static func cgroupMemoryLimit(paths: Paths = .system) -> Int? {
        paths.memoryMax.flatMap(readSmallFile).flatMap(parseByteCount)
    }

    /// Reads a small text file in full, up to 1 MiB (proc and sysfs files report size 0: ``FileContents`` reads
    /// until end of file), bytes that are not UTF-8 replaced.
    static func readSmallFile(_ path: String) -> String? {
        guard let bytes = try? FileContents.bytes(atPath: path, limit: 1 << 20) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
