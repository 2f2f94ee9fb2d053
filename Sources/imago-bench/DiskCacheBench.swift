import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#endif

/// Disk cache: reads against `Data(contentsOf:)` of the same files, writes against a plain open/write/close of
/// the same bytes, and opening a 100,000-entry cache against listing its directory tree.
enum DiskCacheBench {
    static func run() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-diskcache-\(getpid())")
        defer { try? FileManager.default.removeItem(at: root) }
        // IMAGO_BENCH_DISKCACHE=read,write,open runs only those parts (all by default).
        let parts = ProcessInfo.processInfo.environment["IMAGO_BENCH_DISKCACHE"].map {
            Set($0.split(separator: ",").map(String.init))
        }
        if parts?.contains("read") ?? true { try reads(root.appendingPathComponent("read")) }
        if parts?.contains("write") ?? true { try writes(root.appendingPathComponent("write")) }
        if parts?.contains("open") ?? true { try open(root.appendingPathComponent("open")) }
    }

    static func key(_ i: Int) -> String { "https://images.example.com/photos/2024/\(i)/large.jpg?w=1200" }

    static func payload(_ size: Int, seed: Int) -> Data {
        Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) })
    }

    /// 200 entries of 200 KB, each read once per round.
    static func reads(_ directory: URL) throws {
        let count = 200
        let cache = try DiskCache(directory: directory)
        for i in 0..<count { try cache.storeSynchronously(payload(200 * 1024, seed: i), for: key(i)) }
        let layout = DiskCacheDirectory(root: cache.directory.path)
        let urls = (0..<count).map { URL(fileURLWithPath: layout.entryPath(SHA256.hash(key($0)))) }
        var sink = 0
        func peerReads() -> Double {
            time {
                for url in urls { sink &+= (try? Data(contentsOf: url))?.count ?? 0 }
            } * 1e6 / Double(count)
        }
        compare(
            "diskcache read 200 KB entry, again (file version verified before)", unit: "µs/read", goal: 1.2,
            peerName: "Data(contentsOf:) of the same file", rounds: 9,
            imago: {
                time {
                    for i in 0..<count { sink &+= cache.entry(for: key(i))?.data.count ?? 0 }
                } * 1e6 / Double(count)
            },
            peer: peerReads)
        // First reads in a process. A cache instance opened (untimed) for each round has verified nothing and
        // hashed no key, as in a new process. The files were written by `cache`, which sealed them for this boot.
        // (The last instance closes when the closure is released.)
        func firstReads(_ configuration: @escaping () -> DiskCache.Configuration) -> () -> Double {
            var fresh: DiskCache?
            return {
                fresh?.close()
                fresh = try? DiskCache(directory: directory, configuration: configuration())
                guard let fresh else { return .nan }
                return time {
                    for i in 0..<count { sink &+= fresh.entry(for: key(i))?.data.count ?? 0 }
                } * 1e6 / Double(count)
            }
        }
        compare(
            "diskcache read 200 KB entry, first in this process (file sealed this boot by the process that wrote it)",
            unit: "µs/read", goal: 1.2, peerName: "Data(contentsOf:) of the same file", rounds: 9,
            imago: firstReads { DiskCache.Configuration() }, peer: peerReads)
        // As after a restart of the machine: each round's cache stands for a new boot, so no seal matches and every
        // read computes the payload checksum. The files are still in the page cache here, which after a real
        // restart they are not (next row).
        let newBoot = firstReads {
            var configuration = DiskCache.Configuration()
            configuration.bootIdentityOverride = Array(UUID().uuidString.utf8)
            return configuration
        }
        compare(
            "diskcache read 200 KB entry, first after a restart, page cache hot (payload checksum computed)",
            unit: "µs/read", goal: 1.2, peerName: "Data(contentsOf:) of the same file", rounds: 9,
            imago: newBoot, peer: peerReads)
        // After a real restart: the page cache is empty too. Each side drops the files from it (written back
        // first, so that POSIX_FADV_DONTNEED can drop them) before its round, and reads them from the disk.
        let paths = urls.map(\.path)
        for path in paths { dropFromPageCache(path, sync: true) }
        compare(
            "diskcache read 200 KB entry, first after a restart, page cache cold (payload checksum computed)",
            unit: "µs/read", goal: 1.2, peerName: "Data(contentsOf:) of the same file, page cache cold", rounds: 5,
            imago: {
                for path in paths { dropFromPageCache(path, sync: false) }
                return newBoot()
            },
            peer: {
                for path in paths { dropFromPageCache(path, sync: false) }
                return peerReads()
            })
        if sink == 42 { print(sink) }
    }

    /// Asks the kernel to drop `path`'s pages from the page cache (after writing them back when `sync`: dirty
    /// pages are not dropped).
    static func dropFromPageCache(_ path: String, sync: Bool) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        if sync { fsync(fd) }
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
        Glibc.close(fd)
    }

    /// 100 new entries of 200 KB per round.
    static func writes(_ directory: URL) throws {
        let count = 100
        let cache = try DiskCache(directory: directory.appendingPathComponent("cache"))
        let plain = directory.appendingPathComponent("plain").path
        try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: true)
        let data = (0..<count).map { payload(200 * 1024, seed: $0) }
        var round = 0
        try compare(
            "diskcache write 200 KB entry (temp + rename + journal)", unit: "µs/write", goal: 2.0,
            peerName: "open+write(2)+close of the same bytes", rounds: 9,
            imago: {
                cache.removeAll()
                round += 1
                return try time {
                    for i in 0..<count { try cache.storeSynchronously(data[i], for: "\(round)-" + key(i)) }
                } * 1e6 / Double(count)
            },
            peer: {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: plain)) ?? [] {
                    unlink(plain + "/" + name)
                }
                round += 1
                return time {
                    for i in 0..<count {
                        let fd = Glibc.open(plain + "/\(round)-\(i)", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
                        data[i].withUnsafeBytes { buffer in
                            var done = 0
                            while done < buffer.count {
                                let n = write(fd, buffer.baseAddress! + done, buffer.count - done)
                                if n <= 0 { break }
                                done += n
                            }
                        }
                        Glibc.close(fd)
                    }
                } * 1e6 / Double(count)
            })
    }

    /// A cache of 100,000 entries of 100 bytes, built once.
    static func open(_ directory: URL) throws {
        let count = 100_000
        let t0 = now()
        do {
            let cache = try DiskCache(directory: directory)
            let bytes = payload(100, seed: 1)
            for i in 0..<count { cache.store(bytes, for: key(i)) }
            cache.close()
        }
        print(String(format: "  (built the 100,000-entry cache in %.1f s)", now() - t0))
        let entries = directory.appendingPathComponent("entries")
        var listed = 0
        var opened = 0
        try compare(
            "diskcache open 100,000 entries (index snapshot + journal)", unit: "ms", goal: 0.1,
            peerName: "FileManager enumerator over entries/", rounds: 5,
            imago: {
                var cache: DiskCache?
                let seconds = try time { cache = try DiskCache(directory: directory) }
                opened = cache?.statistics.entryCount ?? 0
                cache?.close()
                return seconds * 1e3
            },
            peer: {
                time {
                    listed = 0
                    let enumerator = FileManager.default.enumerator(atPath: entries.path)
                    while enumerator?.nextObject() != nil { listed += 1 }
                } * 1e3
            })
        print("  (opened \(opened) entries; the enumerator listed \(listed) names, shard directories included)")
    }
}
