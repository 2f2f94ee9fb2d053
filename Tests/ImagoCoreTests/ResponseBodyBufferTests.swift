import Foundation
import ImagoCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// Each test keeps its mapped blocks in a set of its own (`blocks`), so the loaders of suites running alongside,
// which use the process's shared set, can neither take nor fill what a test looks at.
@Suite struct ResponseBodyBufferTests {
    let blocks = ResponseBodyBlocks()
    /// `count` bytes of a pattern that differs at every offset of a page.
    static func pattern(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8 &+ Int(seed)) }
    }

    /// Whether the page at `address` is mapped in this process: `mincore(2)` answers `ENOMEM` for an unmapped one.
    /// (Reading `/proc/self/maps` is no test: read in pieces while other threads map and unmap, it can skip lines.)
    static func isMapped(_ address: UnsafeRawPointer) -> Bool {
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let page = UnsafeMutableRawPointer(bitPattern: UInt(bitPattern: address) / UInt(pageSize) * UInt(pageSize))
        var residency: UInt8 = 0
        return mincore(page, pageSize, &residency) == 0
    }

    @Test func aBodySizedFromItsLengthIsOneMappedBlockThatNeverGrows() {
        // Given a buffer reserved for an announced 11,600-byte body (the soak's PNG)
        let buffer = ResponseBodyBuffer(limit: 64 << 20, blocks: blocks)
        #expect(buffer.reserve(11_600))
        #expect(buffer.isMapped)
        let reserved = buffer.capacity
        // (a kept block is at most twice the pages asked for)
        #expect(reserved >= 12_288 && reserved <= 24_576)
        // When the body arrives in chunks of 1,000 bytes
        let body = Self.pattern(11_600)
        for start in stride(from: 0, to: body.count, by: 1_000) {
            let chunk = body[start..<min(body.count, start + 1_000)]
            #expect(chunk.withUnsafeBytes { buffer.append($0) })
        }
        // Then it is in the same block, and taken as Data without a copy it reads back byte for byte
        #expect(buffer.capacity == reserved)
        #expect(buffer.count == 11_600)
        let data = buffer.take()
        #expect(Array(data) == body)
        #expect(buffer.count == 0 && buffer.capacity == 0 && !buffer.isMapped)
    }

    @Test func aSmallBodyStaysInMalloc() {
        let buffer = ResponseBodyBuffer(limit: 64 << 20, blocks: blocks)
        #expect(buffer.reserve(331))
        #expect(!buffer.isMapped && buffer.capacity == 331)
        let body = Self.pattern(331, seed: 7)
        #expect(body.withUnsafeBytes { buffer.append($0) })
        #expect(Array(buffer.take()) == body)
    }

    @Test func theLimitBoundsReservationsAndAppends() {
        // Given a buffer limited to 10,000 bytes
        let buffer = ResponseBodyBuffer(limit: 10_000, blocks: blocks)
        // When a server announces a gigabyte, only the limit is reserved
        #expect(buffer.reserve(1 << 30))
        #expect(buffer.capacity >= 10_000 && buffer.capacity <= 24_576)
        // And bytes past the limit are refused, keeping what came before
        let first = Self.pattern(9_000)
        #expect(first.withUnsafeBytes { buffer.append($0) })
        let more = Self.pattern(1_001, seed: 3)
        #expect(!more.withUnsafeBytes { buffer.append($0) })
        #expect(buffer.count == 9_000)
        let last = Self.pattern(1_000, seed: 3)
        #expect(last.withUnsafeBytes { buffer.append($0) })
        #expect(Array(buffer.take()) == first + last)
    }

    @Test func aBodyOfUnknownLengthGrowsByDoublingIntoPages() {
        // Given no announced length, 300,000 bytes arriving in 1,000-byte chunks
        let buffer = ResponseBodyBuffer(limit: 64 << 20, blocks: blocks)
        let body = Self.pattern(300_000, seed: 11)
        var capacities: [Int] = []
        for start in stride(from: 0, to: body.count, by: 1_000) {
            #expect(body[start..<start + 1_000].withUnsafeBytes { buffer.append($0) })
            if capacities.last != buffer.capacity { capacities.append(buffer.capacity) }
        }
        // Then the block grew a few times, at least doubling, into mapped pages once past the threshold
        #expect(capacities.count <= 8)
        for (smaller, larger) in zip(capacities, capacities.dropFirst()) { #expect(larger >= 2 * smaller) }
        #expect(buffer.isMapped)
        #expect(buffer.capacity <= 4 * body.count)
        // And a taken body keeps only the pages it needs
        let data = buffer.take()
        #expect(Array(data) == body)
    }

    @Test func aTakenBlockTooLargeToKeepIsUnmappedWhenTheDataGoes() throws {
        // Given a body larger than all the blocks kept for reuse may be, taken as Data
        let buffer = ResponseBodyBuffer(limit: 64 << 20, blocks: blocks)
        let length = ResponseBodyBlocks.retainedBytesLimit + 4_096
        #expect(buffer.reserve(length))
        let body = Self.pattern(length, seed: 5)
        #expect(body.withUnsafeBytes { buffer.append($0) })
        var data: Data? = buffer.take()
        let address = try #require(data?.withUnsafeBytes { $0.baseAddress })
        #expect(Self.isMapped(address))
        #expect(data.map(Array.init) == body)
        // When the last reference goes
        let unmapped = blocks.unmappedCount
        data = nil
        // Then its pages are given back to the kernel at once (unmapped, not kept; whether the address range is
        // still in /proc/self/maps cannot tell, as another thread's mapping may take it the next moment)
        #expect(blocks.unmappedCount == unmapped + 1)
        #expect(blocks.retained.count == 0)
    }

    @Test func aGivenBackBlockIsReusedByTheNextBodyOfItsSize() throws {
        // Given a 200 KB body taken and dropped
        let first = ResponseBodyBuffer(limit: 64 << 20, blocks: blocks)
        #expect(first.reserve(200_000))
        let address = try #require(first.mappedAddress)
        let body = Self.pattern(200_000, seed: 1)
        #expect(body.withUnsafeBytes { first.append($0) })
        var data: Data? = first.take()
        #expect(data?.count == 200_000)
        data = nil
        // Then its block is kept, still mapped, and the next body of that size gets it (no fresh pages to fault)
        #expect(Self.isMapped(address))
        let second = ResponseBodyBuffer(limit: 64 << 20, blocks: blocks)
        #expect(second.reserve(190_000))
        #expect(second.mappedAddress == address)
        // But not a body of less than half its size
        let small = ResponseBodyBuffer(limit: 64 << 20, blocks: blocks)
        second.release()
        #expect(small.reserve(90_000))
        #expect(small.mappedAddress != address)
    }

    @Test func theKeptBlocksStayWithinTheirLimits() {
        // When far more blocks are given back than may be kept
        var buffers: [ResponseBodyBuffer] = []
        for _ in 0..<(ResponseBodyBlocks.retainedCountLimit * 2) {
            let buffer = ResponseBodyBuffer(limit: 64 << 20, blocks: blocks)
            #expect(buffer.reserve(12_000))
            buffers.append(buffer)
        }
        for _ in 0..<20 {
            let buffer = ResponseBodyBuffer(limit: 64 << 20, blocks: blocks)
            #expect(buffer.reserve(1 << 20))
            buffers.append(buffer)
        }
        buffers.removeAll()
        // Then at most the limits are kept; the rest were unmapped
        let retained = blocks.retained
        #expect(retained.count <= ResponseBodyBlocks.retainedCountLimit)
        #expect(retained.bytes <= ResponseBodyBlocks.retainedBytesLimit)
        #expect(retained.count > 0)
    }

    @Test func aReleasedBufferGivesItsBlockBack() throws {
        let buffer = ResponseBodyBuffer(limit: 64 << 20, blocks: blocks)
        #expect(buffer.reserve(ResponseBodyBlocks.retainedBytesLimit + 1))
        let body = Self.pattern(100_000)
        #expect(body.withUnsafeBytes { buffer.append($0) })
        let data = buffer.copy()
        let address = try #require(buffer.mappedAddress)
        #expect(Self.isMapped(address))
        let unmapped = blocks.unmappedCount
        buffer.release()
        #expect(blocks.unmappedCount == unmapped + 1)
        #expect(buffer.count == 0 && buffer.capacity == 0)
        // The copy does not depend on the block
        #expect(Array(data) == body)

        var abandoned: ResponseBodyBuffer? = ResponseBodyBuffer(limit: 64 << 20, blocks: blocks)
        #expect(abandoned?.reserve(ResponseBodyBlocks.retainedBytesLimit + 1) == true)
        let other = try #require(abandoned?.mappedAddress)
        #expect(Self.isMapped(other))
        abandoned = nil
        #expect(blocks.unmappedCount == unmapped + 2)
        #expect(blocks.retained.count == 0)
    }

    @Test func aResumedBodyContinuesItsKeptBytes() {
        let buffer = ResponseBodyBuffer(limit: 64 << 20, blocks: blocks)
        let body = Self.pattern(150_000, seed: 9)
        let kept = Data(body[..<60_000])
        #expect(buffer.replace(with: kept, reserving: 150_000))
        #expect(buffer.count == 60_000 && buffer.capacity >= 150_000)
        let reserved = buffer.capacity
        #expect(body[60_000...].withUnsafeBytes { buffer.append($0) })
        #expect(buffer.capacity == reserved)
        #expect(Array(buffer.take()) == body)
        // Kept bytes past the limit are refused
        let small = ResponseBodyBuffer(limit: 1_000, blocks: blocks)
        #expect(!small.replace(with: kept, reserving: 150_000))
        #expect(small.count == 0)
    }
}
