import Foundation
import Testing

@testable import ImagoCore

@Suite struct MemoryCachePressureSourceTests {
    typealias Source = LinuxMemoryPressureSource

    @Test func parsesPSIText() throws {
        let text = """
            some avg10=12.50 avg60=3.20 avg300=0.75 total=123456
            full avg10=1.25 avg60=0.50 avg300=0.00 total=9876

            """
        let stall = try #require(Source.parsePressure(text))
        #expect(stall.some == Source.StallAverages(avg10: 12.5, avg60: 3.2, avg300: 0.75, total: 123_456))
        #expect(stall.full == Source.StallAverages(avg10: 1.25, avg60: 0.5, avg300: 0, total: 9876))
        let someOnly = try #require(Source.parsePressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
        #expect(someOnly.full == nil)
        #expect(Source.parsePressure("") == nil)
        #expect(Source.parsePressure("garbage\nfull avg10=1.00\n") == nil)
    }

    @Test func parsesCgroupFiles() {
        #expect(Source.parseByteCount("max\n") == nil)
        #expect(Source.parseByteCount("536870912\n") == 536_870_912)
        #expect(Source.parseByteCount("9223372036854771712\n") == nil)  // cgroup v1's "no limit"
        #expect(Source.parseByteCount("-3") == nil)
        let events = "low 0\nhigh 7\nmax 2\noom 1\noom_kill 1\noom_group_kill 0\n"
        #expect(Source.parseMemoryEvents(events) == Source.MemoryEvents(high: 7, max: 2, oom: 1, oomKill: 1))
        #expect(Source.parseMemoryEvents("nothing here") == nil)
        #expect(Source.parseInactiveFile("anon 100\nfile 900\ninactive_file 400\nactive_file 500\n") == 400)
    }

    @Test func aLimitSetOnAParentCgroupIsFound() throws {
        func detect(_ root: String) -> Source.Paths {
            Source.Paths.detect(procSelfCgroup: root + "/self-cgroup", root: root + "/cg")
        }
        // A limit on the parent only (a systemd slice's MemoryMax=, a Kubernetes pod's): the parent is read
        try withCgroupTree([
            "self-cgroup": "0::/app.slice/imago.service\n",
            "cg/app.slice/memory.max": "536870912\n",
            "cg/app.slice/imago.service/memory.max": "max\n",
        ]) { root in
            let paths = detect(root)
            #expect(paths.memoryMax == root + "/cg/app.slice/memory.max")
            #expect(paths.memoryCurrent == root + "/cg/app.slice/memory.current")
            #expect(Source.cgroupMemoryLimit(paths: paths) == 536_870_912)
        }
        // The least of several; with none set, the process's own cgroup as before
        try withCgroupTree([
            "self-cgroup": "0::/pod/c\n", "cg/pod/memory.max": "1073741824\n", "cg/pod/c/memory.max": "268435456\n",
        ]) { root in #expect(Source.cgroupMemoryLimit(paths: detect(root)) == 268_435_456) }
        try withCgroupTree(["self-cgroup": "0::/a/b\n", "cg/a/memory.max": "max\n", "cg/a/b/memory.max": "max\n"]) {
            root in
            #expect(detect(root).memoryMax == root + "/cg/a/b/memory.max")
            #expect(Source.cgroupMemoryLimit(paths: detect(root)) == nil)
        }
        // cgroup v1: the memory controller's hierarchy, walked the same way
        try withCgroupTree([
            "self-cgroup": "4:memory:/docker/abc\n",
            "cg/memory/memory.limit_in_bytes": "9223372036854771712\n",
            "cg/memory/docker/memory.limit_in_bytes": "104857600\n",
            "cg/memory/docker/abc/memory.limit_in_bytes": "9223372036854771712\n",
        ]) { root in
            #expect(detect(root).memoryCurrent == root + "/cg/memory/docker/memory.usage_in_bytes")
            #expect(Source.cgroupMemoryLimit(paths: detect(root)) == 104_857_600)
        }
        // A hierarchy that mounts memory beside another controller, with a cpu line before it
        try withCgroupTree([
            "self-cgroup": "3:cpu,cpuacct:/x\n7:memory,hugetlb:/x\n",
            "cg/memory,hugetlb/x/memory.limit_in_bytes": "52428800\n",
        ]) { root in
            #expect(detect(root).memoryMax == root + "/cg/memory,hugetlb/x/memory.limit_in_bytes")
            #expect(Source.cgroupMemoryLimit(paths: detect(root)) == 52_428_800)
        }
        // Nothing to read: no limit
        try withCgroupTree([:]) { root in #expect(detect(root).memoryMax == nil) }
    }

    @Test func thresholdsJudgeUsageStallsAndEvents() {
        let thresholds = Source.Thresholds()
        func level(_ reading: Source.Reading, _ before: Source.MemoryEvents? = nil) -> MemoryPressureLevel {
            thresholds.level(for: reading, previousEvents: before)
        }
        #expect(level(.init(memoryInUse: 89, memoryLimit: 100)) == .normal)
        #expect(level(.init(memoryInUse: 90, memoryLimit: 100)) == .warning)
        #expect(level(.init(memoryInUse: 97, memoryLimit: 100)) == .critical)
        #expect(level(.init(memoryInUse: 99)) == .normal)  // no limit: no ratio
        #expect(level(.init(pressure: .init(some: .init(avg10: 10)))) == .warning)
        #expect(level(.init(pressure: .init(some: .init(avg10: 30), full: .init(avg10: 5)))) == .critical)
        let before = Source.MemoryEvents(high: 1)
        #expect(level(.init(events: .init(high: 1)), before) == .normal)
        #expect(level(.init(events: .init(high: 2)), before) == .warning)
        #expect(level(.init(events: .init(high: 1, oomKill: 1)), before) == .critical)
        #expect(level(.init(events: .init(high: 5))) == .normal)  // no baseline yet
    }

    @Test func readsFakeFilesAndComparesEventCountersBetweenSamples() throws {
        // Given a fake cgroup directory: 1000-byte limit, 950 used of which 100 is inactive file cache
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-psi-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func write(_ name: String, _ text: String) throws {
            try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        try write(
            "memory.pressure",
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
        try write("memory.max", "1000\n")
        try write("memory.current", "950\n")
        try write("memory.stat", "anon 850\ninactive_file 100\n")
        try write("memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n")
        let source = Source(paths: .cgroupV2(directory: directory.path))
        // Then 850 / 1000 is normal and the reading shows every file
        let reading = source.reading()
        #expect(reading.memoryInUse == 850 && reading.memoryLimit == 1000)
        #expect(reading.events == Source.MemoryEvents())
        #expect(reading.pressure?.full?.avg10 == 0)
        #expect(source.currentLevel() == .normal)
        // When the high counter grows it is a warning once, then normal again while it stays
        try write("memory.events", "low 0\nhigh 3\nmax 0\noom 0\noom_kill 0\n")
        #expect(source.currentLevel() == .warning)
        #expect(source.currentLevel() == .normal)
        // When usage reaches 98 % it is critical
        try write("memory.stat", "inactive_file 0\n")
        try write("memory.current", "980\n")
        #expect(source.currentLevel() == .critical)
        // A trigger is never armed on an ordinary file, and the file is left as it was
        #expect(source.openTrigger() == nil)
        #expect(
            Source.parseByteCount(
                try String(contentsOf: directory.appendingPathComponent("memory.max"), encoding: .utf8)) == 1000)
    }

    @Test func missingFilesGiveEmptyReadingAndNormalLevel() {
        let source = Source(paths: .cgroupV2(directory: "/nonexistent/imago"))
        #expect(source.reading() == Source.Reading())
        #expect(source.currentLevel() == .normal)
    }

    @Test(.enabled(if: getuid() == 0 && FileManager.default.isWritableFile(atPath: "/proc/pressure/memory")))
    func armsRealPSITriggerWhenKernelAllows() throws {
        let source = Source(paths: .init(pressure: "/proc/pressure/memory"))
        let fd = try #require(source.openTrigger())
        close(fd)
        #expect(source.reading().pressure != nil)
    }
}
