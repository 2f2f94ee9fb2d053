import Foundation

// imago-bench [GROUP...]: runs the named benchmark groups (all when none is named), each comparison side by
// side with its baseline in one run, then writes bench-results.json. Build in release: `make bench`.
// Each group lives in its own file as a `static func run()` and is listed here.
// `imago-bench --child MODE …` (hidden): one round of Imago's side of a `peers` comparison in a fresh process.
if CommandLine.arguments.dropFirst().first == "--child" {
    exit(ChildMode.main(Array(CommandLine.arguments.dropFirst(2))))
}

let groups: [(name: String, run: () throws -> Void)] = [
    ("decode", DecodeBench.run),
    ("progressive-dc", ProgressiveDCBench.run),
    ("decode-webp-gif", WebPGIFBench.run),
    ("decode-jxl", JXLBench.run),
    ("memcache", MemoryCacheBench.run),
    ("loopback-server", LoopbackServerBench.run),
    ("processors", ProcessorsBench.run),
    ("pipeline", PipelineBench.run),
    ("diskcache", DiskCacheBench.run),
    ("loader", LoaderBench.run),
    ("curl-loader", CurlLoaderBench.run),
    ("http-date", HTTPDateBench.run),
    ("url-key", URLKeyBench.run),
    ("peers", PeersBench.run),
    ("apng", APNGBench.run),
    ("gif-encode", GIFEncodeBench.run),
    ("still-encode", StillEncodeBench.run),
    ("soak", SoakBench.run),
    ("colour", ColourBench.run),
]

let wanted = Set(CommandLine.arguments.dropFirst())
BenchReport.printHeader()
// `soak` is a reliability run, not a comparison: it runs only when named.
for group in groups where wanted.contains(group.name) || (wanted.isEmpty && group.name != "soak") {
    do { try group.run() } catch { print("benchmark group \(group.name) failed: \(error)") }
}
try BenchReport.shared.write(to: "bench-results.json")
