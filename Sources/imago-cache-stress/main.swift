import Foundation
import ImagoCore
import ImagoTesting

// imago-cache-stress: the child process of DiskCache's crash and multi-process tests.
//   fill DIR N [SIZE_LIMIT]      writes N self-checking entries over 300 keys (replacing as it goes), alternating
//                                storeSynchronously and staged store; prints "ready" once open, "done" at the end.
//                                The crash test SIGKILLs it midway.
//   share DIR SECONDS [LIMIT]    for SECONDS, randomly stores and reads 200 keys, checking every byte read;
//                                prints "ok reads=… hits=… writes=…" and exits 0, or "bad …" and exits 1.

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func fail(_ line: String) -> Never {
    FileHandle.standardError.write(Data((line + "\n").utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
    fail("usage: imago-cache-stress fill DIR N [SIZE_LIMIT] | share DIR SECONDS [SIZE_LIMIT]")
}
let directory = URL(fileURLWithPath: arguments[2])
var configuration = DiskCache.Configuration()
configuration.maxAge = nil
configuration.sizeLimit = arguments.count > 4 ? Int(arguments[4]) ?? 1 << 20 : 1 << 20
configuration.onError = { error in FileHandle.standardError.write(Data("error: \(error)\n".utf8)) }
configuration.log = { line in FileHandle.standardError.write(Data("log: \(line)\n".utf8)) }

func key(_ n: Int) -> String { "https://example.com/images/\(n).jpg" }

switch arguments[1] {
case "fill":
    guard let count = Int(arguments[3]) else { fail("N must be a number") }
    let cache: DiskCache
    do { cache = try DiskCache(directory: directory, configuration: configuration) } catch { fail("open: \(error)") }
    say("ready")
    let base = UInt64(UInt32.random(in: 0...UInt32.max)) << 20
    for i in 0..<count {
        let k = key(i % 300)
        let data = CachePayload.make(key: k, version: base + UInt64(i))
        if i % 2 == 0 {
            do { try cache.storeSynchronously(data, for: k) } catch { fail("store: \(error)") }
        } else {
            cache.store(data, for: k)
        }
    }
    cache.close()
    say("done")

case "share":
    guard let seconds = Double(arguments[3]) else { fail("SECONDS must be a number") }
    let cache: DiskCache
    do { cache = try DiskCache(directory: directory, configuration: configuration) } catch { fail("open: \(error)") }
    say("ready")
    let deadline = Date().addingTimeInterval(seconds)
    var reads = 0
    var hits = 0
    var writes = 0
    var bad = 0
    var version = UInt64(getpid()) << 32
    while Date() < deadline {
        let k = key(Int.random(in: 0..<200))
        if Bool.random() {
            version += 1
            cache.store(CachePayload.make(key: k, version: version), for: k)
            writes += 1
        } else {
            reads += 1
            if let entry = cache.entry(for: k) {
                hits += 1
                if !CachePayload.isValid(entry.data, for: k) { bad += 1 }
            }
        }
    }
    cache.close()
    say(bad == 0 ? "ok reads=\(reads) hits=\(hits) writes=\(writes)" : "bad=\(bad) reads=\(reads)")
    exit(bad == 0 ? 0 : 1)

default:
    fail("unknown mode \(arguments[1])")
}
