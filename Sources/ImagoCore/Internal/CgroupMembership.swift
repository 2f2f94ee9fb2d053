import Foundation

/// This process's cgroups as `/proc/self/cgroup` lists them, one `ID:CONTROLLERS:PATH` line per hierarchy (cgroup
/// v2's is `0::PATH`), turned into the directories under a mount whose files hold its limits: the CPU quota
/// (``ProcessorQuota``) and the memory limit (``LinuxMemoryPressureSource``) read the same lines the same way.
struct CgroupMembership {
    /// The cgroup v2 path, when there is a `0::PATH` line.
    var unifiedPath: Substring?
    /// Each cgroup v1 hierarchy: its controllers (`cpu,cpuacct`) and path.
    var hierarchies: [(controllers: Substring, path: Substring)] = []

    /// The lines of `text`; lines of another shape are skipped.
    init(_ text: String) {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            if fields[0] == "0" && fields[1].isEmpty {
                unifiedPath = fields[2]
            } else {
                hierarchies.append((fields[1], fields[2]))
            }
        }
    }

    /// The file at `path` (default `/proc/self/cgroup`); none when unreadable.
    init(reading path: String = "/proc/self/cgroup") {
        self.init(LinuxMemoryPressureSource.readSmallFile(path) ?? "")
    }

    /// The cgroup v2 mount `root` and the directories along the unified path, top first; empty with no v2 line.
    func unifiedDirectories(root: String) -> [String] {
        unifiedPath.map { Self.directories(under: root, along: $0) } ?? []
    }

    /// The cgroup v1 hierarchy holding `controller`: its mount under `root` (`root/cpu,cpuacct`, else
    /// `root/cpu` for `cpu`) and the directories along its path, top first; empty when there is no such line or
    /// mount. Inside a container the path is often the host's and not mounted; the mount itself is then the
    /// container's own cgroup, which is the first directory listed.
    func directories(controller: String, root: String) -> [String] {
        guard
            let hierarchy = hierarchies.first(where: { $0.controllers.split(separator: ",").contains(controller[...]) })
        else { return [] }
        let mounts = [root + "/" + hierarchy.controllers, root + "/" + controller]
        guard let mount = mounts.first(where: { FileManager.default.fileExists(atPath: $0) }) else { return [] }
        return Self.directories(under: mount, along: hierarchy.path)
    }

    /// `base` and `base` joined with each leading part of `path` (`/a/b`: `base`, `base/a`, `base/a/b`).
    static func directories(under base: String, along path: Substring) -> [String] {
        var directory = base
        var directories = [base]
        for part in path.split(separator: "/") where part != "." && part != ".." {
            directory += "/" + part
            directories.append(directory)
        }
        return directories
    }
}
