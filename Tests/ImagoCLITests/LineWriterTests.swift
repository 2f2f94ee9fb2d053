import Foundation
import ImagoTesting
import Testing

@testable import ImagoCLI

#if canImport(Glibc)
    import Glibc
#endif

/// `imago serve`'s access log writer: a reader that stops reading, or goes away, costs counted lines, never a
/// blocked caller or the process.
@Suite(.timeLimit(.minutes(1))) struct LineWriterTests {
    /// A pipe's two ends, `[read, write]`.
    func pipe() throws -> [Int32] {
        signal(SIGPIPE, SIG_IGN)  // a write to a pipe with no reader must fail with EPIPE, not end the test process
        var ends: [Int32] = [0, 0]
        try #require(Glibc.pipe(&ends) == 0)
        return ends
    }

    /// Everything readable from `descriptor` until it ends.
    func readAll(_ descriptor: Int32) -> String {
        var data = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = read(descriptor, &chunk, chunk.count)
            if n <= 0 { break }
            data += chunk[..<n]
        }
        return String(decoding: data, as: UTF8.self)
    }

    @Test func aReaderThatStopsReadingCostsDroppedLinesNotABlockedCaller() async throws {
        let ends = try pipe()
        defer { close(ends[0]) }
        // Given a pipe nobody reads and a writer holding 16 KiB, lines of 100 bytes numbered in order
        let writer = LineWriter(descriptor: ends[1], capacity: 16_384)
        var written = 0
        func writeLines(_ count: Int) {
            for _ in 0..<count {
                writer.write(String(format: "%05d", written) + String(repeating: "x", count: 94))
                written += 1
            }
        }
        // When the pipe is full (the writer's thread stuck in write(2): 64 KiB, about 650 lines)
        while writer.drain(within: .seconds(1)) && written < 10_000 { writeLines(100) }
        #expect((600...1_000).contains(written), "\(written)")
        // Then 2,000 more lines return at once: what the buffer cannot hold is dropped, whole lines
        let start = ContinuousClock.now
        writeLines(2_000)
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(writer.droppedCount >= 2_000 - 16_384 / 100, "\(writer.droppedCount)")
        #expect(!writer.drain(within: .milliseconds(50)))
        // When the reader reads again, every line not dropped arrives whole and in order
        let reading = Task.detached { readAll(ends[0]) }
        #expect(writer.drain(within: .seconds(10)))
        close(ends[1])
        let lines = await reading.value.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count + writer.droppedCount == written)
        #expect(lines.allSatisfy { $0.count == 99 && $0.hasSuffix("xxx") })
        let numbers = lines.compactMap { Int($0.prefix(5)) }
        #expect(numbers.count == lines.count && numbers == numbers.sorted() && numbers.first == 0)
        #expect(Set(numbers).count == numbers.count)
        // Everything written before the stall arrived: only lines of the second burst were dropped
        #expect(Array(numbers.prefix(written - 2_000)) == Array(0..<(written - 2_000)))
    }

    @Test func aReaderThatGoesAwayCostsDroppedLinesNotTheProcess() async throws {
        let ends = try pipe()
        defer { close(ends[1]) }
        let writer = LineWriter(descriptor: ends[1])
        writer.write("first")
        #expect(writer.drain(within: .seconds(10)))
        #expect(readAll(ends[0], upTo: 6) == "first\n")
        // When the reader closes its end, the next write fails with EPIPE: counted, and every later line too
        close(ends[0])
        writer.write("second")
        #expect(await ImagoTesting.eventually { writer.droppedCount == 1 })
        for _ in 0..<10 { writer.write("more") }
        #expect(writer.droppedCount == 11)
        #expect(writer.drain(within: .seconds(1)))
    }

    @Test func aFullDiskCostsTheLinesOfThatWriteOnly() async throws {
        // Given a writer to /dev/full, where every write fails with ENOSPC
        let ends = try pipe()
        defer { close(ends[0]) }
        let descriptor = open("/dev/full", O_WRONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let writer = LineWriter(descriptor: descriptor)
        writer.write("lost")
        #expect(await ImagoTesting.eventually { writer.droppedCount == 1 })
        #expect(writer.drain(within: .seconds(1)))
        // When room comes back (the descriptor now a pipe), the next lines are written: ENOSPC did not end it
        try #require(dup2(ends[1], descriptor) == descriptor)
        close(ends[1])
        writer.write("kept")
        #expect(writer.drain(within: .seconds(10)))
        try #require(writer.droppedCount == 1, "dropped too: the first failure ended the writer")
        #expect(readAll(ends[0], upTo: 5) == "kept\n")
    }

    /// `count` bytes from `descriptor`.
    func readAll(_ descriptor: Int32, upTo count: Int) -> String {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + got, count - got) }
            if n <= 0 { break }
            got += n
        }
        return String(decoding: bytes[..<got], as: UTF8.self)
    }
}
