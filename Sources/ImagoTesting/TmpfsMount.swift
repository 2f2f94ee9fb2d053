import Foundation

/// Small tmpfs file systems for tests that need a real full disk (ENOSPC): mounting needs root on Linux, so
/// tests check ``isAvailable`` and are disabled with a message where it is false.
public enum TmpfsMount {
    /// Whether this machine lets the process mount and unmount a tmpfs (probed once, with a 64 KB mount).
    public static let isAvailable: Bool = {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent(
            "imago-tmpfs-probe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: probe) }
        try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)
        guard mount(size: "64k", at: probe) else { return false }
        return unmount(probe)
    }()

    /// Mounts a tmpfs of `size` (mount(8) syntax: `512k`, `1m`) on the existing folder `mountPoint`.
    /// Returns whether it worked.
    @discardableResult
    public static func mount(size: String, at mountPoint: URL) -> Bool {
        run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", mountPoint.path])
    }

    /// Unmounts `mountPoint`; returns whether it worked.
    @discardableResult
    public static func unmount(_ mountPoint: URL) -> Bool {
        run("/bin/umount", [mountPoint.path])
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: tool) else { return false }
        return (try? ImagoTesting.run(tool, arguments, standardError: .nullDevice).status) == 0
    }
}
