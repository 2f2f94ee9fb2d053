// imago-fuzz: libFuzzer targets for Imago's parsers of untrusted input.
//
// Fuzzing build (make fuzz):  swift build --build-path .build-fuzz -Xswiftc -sanitize=fuzzer,address
//   -Xswiftc -parse-as-library -Xswiftc -DFUZZING --product imago-fuzz
// then `IMAGO_FUZZ_TARGET=NAME .build-fuzz/debug/imago-fuzz [libFuzzer flags] CORPUS_DIR`.
// Normal build: `imago-fuzz NAME FILE...` runs each file through the target once (regression replay).
import Foundation
import ImagoCodecs

#if FUZZING
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    // SwiftPM links executables with `--defsym main=imago_fuzz_main`: define that symbol and hand over to libFuzzer.
    @_cdecl("imago_fuzz_main")
    func fuzzMain(
        _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    ) -> CInt {
        let name = ProcessInfo.processInfo.environment["IMAGO_FUZZ_TARGET"] ?? ""
        guard FuzzTargets.named(name) != nil else {
            FileHandle.standardError.write(
                Data("set IMAGO_FUZZ_TARGET to one of: \(FuzzTargets.all.map(\.name).joined(separator: ", "))\n".utf8))
            return 2
        }
        // LeakSanitizer's report at the end of a run listed the cached colour transforms (their ICC `Data` keys,
        // made in HEIFDecoder.colour(of:)): not leaks, it cannot follow Swift's references into the cache. Empty
        // the cache at exit (this handler is registered after LeakSanitizer's, so it runs before the check).
        atexit { ColorManagement.removeCachedTransforms() }
        var argc = argc
        var argv = argv
        return LLVMFuzzerRunDriver(&argc, &argv) { data, count in fuzzOneInput(data, count) }
    }

    // libFuzzer's runtime also references this symbol directly.
    @_cdecl("LLVMFuzzerTestOneInput")
    func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
        let bytes = data.map { Data(bytes: $0, count: count) } ?? Data()
        FuzzTargets.named(ProcessInfo.processInfo.environment["IMAGO_FUZZ_TARGET"] ?? "")?.run(bytes)
        return 0
    }
#else
    @main
    struct FuzzReplay {
        static func main() {
            let arguments = Array(CommandLine.arguments.dropFirst())
            guard let name = arguments.first, let target = FuzzTargets.named(name) else {
                print(
                    "usage: imago-fuzz TARGET FILE...   targets: \(FuzzTargets.all.map(\.name).joined(separator: ", "))"
                )
                exit(2)
            }
            var count = 0
            for path in arguments.dropFirst() {
                guard let data = readFile(path) else {
                    print("cannot read \(path)")
                    exit(1)
                }
                target.run(data)
                count += 1
            }
            // Cached colour transforms are not leaks; LeakSanitizer cannot see Swift's references to them.
            ColorManagement.removeCachedTransforms()
            var usage = rusage()
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
            print("\(name): \(count) inputs replayed, no crash, peak RSS \(usage.ru_maxrss) KiB")
        }

        /// The file's bytes, through `FileHandle`: FoundationEssentials' `FileManager.contents(atPath:)` leaks its
        /// 4 KiB buffer for an empty file (Swift 6.3), which LeakSanitizer reported in every ASan-sweep batch
        /// holding one of the corpus's empty files.
        static func readFile(_ path: String) -> Data? {
            guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
            defer { try? handle.close() }
            do { return try handle.readToEnd() ?? Data() } catch { return nil }
        }
    }
#endif
