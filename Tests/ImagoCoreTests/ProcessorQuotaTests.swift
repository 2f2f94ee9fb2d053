import Foundation
import Testing

@testable import ImagoCore

/// The cores pools are sized by: the processors, held to the cgroup's CPU quota (v2 `cpu.max`, v1 CFS), read
/// from fixture trees laid out as `/proc/self/cgroup` and `/sys/fs/cgroup` are.
@Suite struct ProcessorQuotaTests {
    func cores(_ root: String, active: Int = 64) -> Int {
        ProcessorQuota.cores(activeProcessors: active, procSelfCgroup: root + "/self-cgroup", root: root + "/cg")
    }

    @Test func cgroupV2QuotaIsRoundedUpAndAncestorsCount() throws {
        // Kubernetes' layout seen from the host's view: the pod's limit above the container's
        try withCgroupTree([
            "self-cgroup": "0::/kubepods/pod1/c1\n",
            "cg/kubepods/cpu.max": "max 100000\n",
            "cg/kubepods/pod1/cpu.max": "250000 100000\n",
            "cg/kubepods/pod1/c1/cpu.max": "max 100000\n",
        ]) { root in
            #expect(cores(root) == 3)  // 2.5 CPUs: three threads may each run part of the time
            #expect(cores(root, active: 2) == 2)  // never more than the processors
        }
        // Inside the container (cgroup namespace): the path is `/`, the mount is the container's own cgroup
        try withCgroupTree(["self-cgroup": "0::/\n", "cg/cpu.max": "50000 100000\n"]) { root in
            #expect(cores(root) == 1)  // half a CPU: one
        }
        // The host's path not mounted inside the container: the mount itself is read
        try withCgroupTree(["self-cgroup": "0::/system.slice/docker-abc.scope\n", "cg/cpu.max": "200000 100000\n"]) {
            root in
            #expect(cores(root) == 2)
        }
    }

    @Test func cgroupV1QuotaIsReadFromTheCPUController() throws {
        try withCgroupTree([
            "self-cgroup": "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n",
            "cg/cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "150000\n",
            "cg/cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
        ]) { root in
            #expect(cores(root) == 2)
        }
        try withCgroupTree([
            "self-cgroup": "4:cpu,cpuacct:/docker/abc\n",
            "cg/cpu/cpu.cfs_quota_us": "-1\n",
            "cg/cpu/cpu.cfs_period_us": "100000\n",
        ]) { root in
            #expect(cores(root, active: 6) == 6)  // -1: no quota
        }
    }

    @Test func noQuotaOrUnreadableFilesLeaveTheProcessors() throws {
        try withCgroupTree([
            "self-cgroup": "0::/a\n", "cg/a/cpu.max": "max 100000\n",
        ]) { root in #expect(cores(root, active: 6) == 6) }
        try withCgroupTree(["self-cgroup": "0::/a\n"]) { root in #expect(cores(root, active: 6) == 6) }
        try withCgroupTree([:]) { root in #expect(cores(root, active: 6) == 6) }
        // Damaged contents are no quota, never a crash or zero
        for bad in ["", "max", "100000", "0 100000", "100000 0", "-5 100000", "x y", "99999999999999999999 1"] {
            try withCgroupTree(["self-cgroup": "0::/\n", "cg/cpu.max": bad]) { root in
                #expect(cores(root, active: 6) == 6, "\(bad)")
            }
        }
        try withCgroupTree(["self-cgroup": "garbage\n0:cpu\n::\n"]) { root in #expect(cores(root, active: 1) == 1) }
        // The largest quota a file can hold: no overflow while rounding up
        try withCgroupTree(["self-cgroup": "0::/\n", "cg/cpu.max": "\(Int.max) 100000"]) { root in
            #expect(cores(root, active: 6) == 6)
        }
        #expect(ProcessorQuota.cores(activeProcessors: 0, procSelfCgroup: "/nonexistent", root: "/nonexistent") == 1)
        // This process's own: at least one, at most its processors
        #expect((1...ProcessInfo.processInfo.activeProcessorCount).contains(ProcessorQuota.cores))
    }
}

/// A scratch folder holding `files` (relative path → contents: a `/proc/self/cgroup` and a `/sys/fs/cgroup`
/// laid out as the kernel's), removed by `body`'s end.
func withCgroupTree(_ files: [String: String], _ body: (_ root: String) throws -> Void) throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("cgroup-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    for (path, contents) in files {
        let file = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try contents.write(to: file, atomically: false, encoding: .utf8)
    }
    try body(root.path)
}
