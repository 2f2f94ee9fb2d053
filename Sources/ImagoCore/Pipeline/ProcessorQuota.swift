import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How many cores this process may keep busy, for sizing its pools of CPU-bound work: the processors it may run
/// on (`ProcessInfo.activeProcessorCount`, which follows the CPU affinity mask), held to the CPU quota of its
/// cgroup and of every cgroup above it, rounded up: cgroup v2's `cpu.max`, cgroup v1's `cpu.cfs_quota_us` over
/// `cpu.cfs_period_us`. At least 1.
///
/// This toolchain's Foundation reads cgroup v1's quota but no `cpu.max`: in a container given 2 CPUs (`docker run
/// --cpus 2`, a Kubernetes limit of `2`) on a 64-core host under cgroup v2 it says 64, and pools sized from it run
/// 64 decodes at once against two CPUs' worth of time, each slowed by the quota's throttling, with 64 images'
/// memory in flight. Go's runtime reads the quota the same way since Go 1.25.
public enum ProcessorQuota {
    /// This process's cores, read once.
    public static let cores = cores(activeProcessors: ProcessInfo.processInfo.activeProcessorCount)

    /// `activeProcessors` held to the quota found from `procSelfCgroup` under `root`.
    static func cores(
        activeProcessors: Int, procSelfCgroup: String = "/proc/self/cgroup", root: String = "/sys/fs/cgroup"
    ) -> Int {
        max(1, min(activeProcessors, quota(procSelfCgroup: procSelfCgroup, root: root) ?? .max))
    }

    /// The least quota in cores, rounded up, over this process's cgroup and its ancestors that can be read, or
    /// `nil` when none is set. Inside a container the path in `procSelfCgroup` is often the host's and not
    /// mounted; the mount itself is then the container's own cgroup, which is read as the path's first ancestor.
    static func quota(procSelfCgroup: String, root: String) -> Int? {
        let membership = CgroupMembership(reading: procSelfCgroup)
        let v2 = membership.unifiedDirectories(root: root).map {
            LinuxMemoryPressureSource.readSmallFile($0 + "/cpu.max").flatMap(parseCPUMax)
        }
        let v1 = membership.directories(controller: "cpu", root: root).map { directory in
            let quota = LinuxMemoryPressureSource.readSmallFile(directory + "/cpu.cfs_quota_us")
            let period = LinuxMemoryPressureSource.readSmallFile(directory + "/cpu.cfs_period_us")
            return quota.flatMap { quota in period.flatMap { parseCPUMax(quota + " " + $0) } }
        }
        return (v2 + v1).compactMap { $0 }.min()
    }

    /// Cores from `QUOTA PERIOD` (microseconds; `max` or a negative quota: none), rounded up; `nil` when none or
    /// unreadable.
    static func parseCPUMax(_ text: String) -> Int? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2, let quota = Int(fields[0]), let period = Int(fields[1]), quota > 0, period > 0
        else { return nil }
        return quota / period + (quota % period == 0 ? 0 : 1)  // rounded up without overflowing
    }
}
