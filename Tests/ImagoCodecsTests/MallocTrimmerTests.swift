import Foundation
import Imago
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `MallocTrimmer` (the `Imago` module): the opt-in return of glibc's free arena pages to the kernel.
@Suite struct MallocTrimmerTests {
    /// Whether glibc's allocator serves `malloc`: under ThreadSanitizer or AddressSanitizer (the TSan leg of CI) the
    /// sanitizer's own allocator does, and `malloc_trim` has nothing of glibc's to give back.
    static let glibcServesMalloc = dlsym(nil, "__tsan_init") == nil && dlsym(nil, "__asan_init") == nil

    /// Given 4 MiB of freed blocks held in the middle of an arena (a block allocated after them stays alive, so
    /// glibc cannot give them back by lowering the top), when a trim runs, then glibc reports memory released.
    @Test(.enabled(if: glibcServesMalloc, "a sanitizer's allocator serves malloc"))
    func trimReleasesFreedBlocksInsideAnArena() {
        let blocks = (0..<64).map { _ in
            let block = UnsafeMutableRawPointer.allocate(byteCount: 64 << 10, alignment: 16)
            block.initializeMemory(as: UInt8.self, repeating: 0xA5, count: 64 << 10)  // resident pages
            return block
        }
        let pin = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
        defer { pin.deallocate() }
        for block in blocks { block.deallocate() }

        let trimmer = MallocTrimmer(interval: .seconds(3600))
        defer { trimmer.cancel() }
        #expect(trimmer.trim())
        let statistics = trimmer.statistics
        #expect(statistics.trims == 1)
        #expect(statistics.releasingTrims == 1)
        #expect(statistics.longestDuration > .zero && statistics.totalDuration == statistics.longestDuration)
    }

    /// Given a trimmer with a short interval, when time passes, then it trims on its own, and stops when
    /// cancelled.
    @Test(.timeLimit(.minutes(1))) func trimsOnItsTimerUntilCancelled() async throws {
        let trimmer = MallocTrimmer(interval: .milliseconds(100))
        let deadline = ContinuousClock.now + .seconds(20)
        while trimmer.statistics.trims < 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(trimmer.statistics.trims >= 2)
        trimmer.cancel()
        trimmer.cancel()  // twice is harmless
    }
}
