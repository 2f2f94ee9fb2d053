import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The bytes of one response as they arrive, in one block sized once (from `Content-Length` when the server sends
/// one, bounded by the caller) and grown by doubling only when the length is unknown, never beyond `limit`.
///
/// Blocks of ``pageThreshold`` bytes and more are pages of their own (`mmap`, through ``ResponseBodyBlocks``), handed
/// to the finished response as its `Data` without a copy and given back when the last reference to that `Data`
/// goes, on whatever thread that is. A response body lives on after its transfer (in the disk cache's staged
/// writes, until it is decoded); in a `malloc` arena it would sit between the transport thread's short-lived
/// buffers, and the arena would keep the highest backlog it ever held as resident memory (RELIABILITY.md §18).
/// Smaller bodies use `malloc`: a page each would waste more than the arena's spread.
///
/// Not thread-safe: one transfer's buffer, touched only under the coordinator's lock.
package final class ResponseBodyBuffer {
    /// Blocks from this size up are mapped pages of their own: 8 KiB (at most half a page's rounding wasted).
    package static let pageThreshold = 8 << 10

    /// Bytes received so far.
    package private(set) var count = 0
    /// Bytes the block holds.
    package private(set) var capacity = 0
    /// Whether the block is mapped pages (else `malloc`ed).
    package private(set) var isMapped = false
    private var base: UnsafeMutableRawPointer?
    /// The block's address when it is mapped pages (for tests: whether they were given back).
    package var mappedAddress: UnsafeRawPointer? { isMapped ? UnsafeRawPointer(base) : nil }
    /// The most bytes the buffer may ever hold (the body limit).
    package let limit: Int
    /// Where mapped blocks come from and go back to.
    private let blocks: ResponseBodyBlocks

    /// An empty buffer that never holds more than `limit` bytes, its mapped blocks from `blocks` (default the
    /// process's ``ResponseBodyBlocks/shared``).
    package init(limit: Int, blocks: ResponseBodyBlocks = .shared) {
        self.limit = max(0, limit)
        self.blocks = blocks
    }

    deinit { release() }

    /// Makes room for `capacity` bytes in all (at most ``limit``), in one block. Returns `false` when the memory
    /// cannot be had; the bytes already held are kept then.
    @discardableResult
    package func reserve(_ capacity: Int) -> Bool {
        let wanted = min(capacity, limit)
        guard wanted > self.capacity else { return true }
        return resize(to: wanted)
    }

    /// Appends `bytes`; returns `false` (and keeps nothing of them) when they would pass ``limit`` or the memory
    /// cannot be had. Grows to what is needed, at least doubling, at most ``limit``.
    package func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty else { return true }
        let needed = count + bytes.count
        guard needed <= limit else { return false }
        if needed > capacity {
            guard resize(to: min(limit, max(needed, capacity * 2, 4 << 10))) else { return false }
        }
        guard let base, let source = bytes.baseAddress else { return false }
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count = needed
        return true
    }

    /// Replaces the contents with `data` and makes room for `capacity` bytes in all (a resumed body's kept bytes,
    /// continued up to its whole length). Returns `false` when the memory cannot be had or `data` passes ``limit``.
    package func replace(with data: Data, reserving capacity: Int) -> Bool {
        release()
        guard data.count <= limit, reserve(max(capacity, data.count)) else { return false }
        return data.withUnsafeBytes { append($0) }
    }

    /// A copy of the bytes received so far (progress with partial data).
    package func copy() -> Data {
        guard let base, count > 0 else { return Data() }
        return Data(bytes: base, count: count)
    }

    /// The bytes received as `Data`, without a copy: the block goes with it (its deallocator gives it back) and the
    /// buffer is empty afterwards. A mapped block grown past twice what it holds is first cut to the pages needed.
    package func take() -> Data {
        guard let block = base, count > 0 else {
            release()
            return Data()
        }
        let length = count
        let mapped = isMapped
        let held = capacity
        forgetBlock()
        guard mapped else { return Data(bytesNoCopy: block, count: length, deallocator: .free) }
        let needed = ResponseBodyBlocks.pageRounded(length)
        let isCut = needed * 2 <= held && munmap(block + needed, held - needed) == 0
        let mappedLength = isCut ? needed : held
        return Data(
            bytesNoCopy: block, count: length,
            deallocator: .custom { [blocks] pointer, _ in blocks.giveBack(pointer, length: mappedLength) })
    }

    /// Frees the block; the buffer is empty afterwards.
    package func release() {
        if let base { freeBlock(base) }
        forgetBlock()
    }

    /// Gives `block`, held as this buffer's block is (mapped or `malloc`ed, ``capacity`` bytes), back.
    private func freeBlock(_ block: UnsafeMutableRawPointer) {
        if isMapped { blocks.giveBack(block, length: capacity) } else { free(block) }
    }

    /// Leaves the buffer empty without freeing its block (it was freed or handed over).
    private func forgetBlock() {
        base = nil
        count = 0
        capacity = 0
        isMapped = false
    }

    /// Moves the bytes to a block of `newCapacity` bytes: mapped pages from ``pageThreshold`` up (a mapped block
    /// grows by a new block and one copy, as doubling makes rare), else `realloc`.
    private func resize(to newCapacity: Int) -> Bool {
        guard newCapacity >= Self.pageThreshold else {
            guard let grown = realloc(base, newCapacity) else { return false }
            base = grown
            capacity = newCapacity
            return true
        }
        guard let (block, length) = blocks.take(atLeast: newCapacity) else { return false }
        if let base {
            block.copyMemory(from: base, byteCount: count)
            freeBlock(base)
        }
        base = block
        capacity = length
        isMapped = true
        return true
    }
}

/// The mapped blocks of ``ResponseBodyBuffer``: blocks given back by finished bodies are kept for the next ones,
/// most recent first, up to ``retainedBytesLimit`` bytes and ``retainedCountLimit`` blocks; any other block is
/// unmapped at once. A fresh page costs a fault on first touch (on the benchmark VM, 100–200 µs of CPU for a 200 KB
/// body, against 2–4 µs in a reused block); the kept blocks make a steady stream of bodies reuse warm pages while
/// what is kept stays bounded, whatever the backlog was. One set serves the process (``shared``); tests make their own.
package final class ResponseBodyBlocks: Sendable {
    /// The blocks every ``ResponseBodyBuffer`` uses unless given others.
    package static let shared = ResponseBodyBlocks()

    /// The most bytes of free blocks kept for reuse: 4 MiB.
    package static let retainedBytesLimit = 4 << 20
    /// The most free blocks kept for reuse: 64.
    package static let retainedCountLimit = 64

    struct Pool {
        var blocks: [(address: UInt, length: Int)] = []
        var bytes = 0
        var unmapped = 0
    }

    private let pool = Locked(Pool())

    /// An empty set of kept blocks.
    package init() {}

    /// Bytes and blocks kept for reuse now.
    package var retained: (bytes: Int, count: Int) { pool.withLock { ($0.bytes, $0.blocks.count) } }

    /// How many blocks given back were unmapped (their pages returned to the kernel) rather than kept.
    package var unmappedCount: Int { pool.withLock { $0.unmapped } }

    /// A block of at least `length` bytes (page-rounded) and its length: a kept one no larger than twice that, else
    /// a new mapping; `nil` when the memory cannot be had.
    func take(atLeast length: Int) -> (UnsafeMutableRawPointer, Int)? {
        let wanted = Self.pageRounded(length)
        let kept = pool.withLock { pool -> (address: UInt, length: Int)? in
            var best: Int?  // the smallest that fits, the most recent of equals
            for i in pool.blocks.indices.reversed() {
                let length = pool.blocks[i].length
                guard length >= wanted, length <= 2 * wanted else { continue }
                if let best, pool.blocks[best].length <= length { continue }
                best = i
            }
            guard let best else { return nil }
            pool.bytes -= pool.blocks[best].length
            return pool.blocks.remove(at: best)
        }
        if let kept, let address = UnsafeMutableRawPointer(bitPattern: kept.address) { return (address, kept.length) }
        guard let mapped = mmap(nil, wanted, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            mapped != UnsafeMutableRawPointer(bitPattern: -1)  // MAP_FAILED, a C macro Swift does not import
        else { return nil }
        return (mapped, wanted)
    }

    /// Keeps a block for reuse when the limits allow, else unmaps it.
    func giveBack(_ block: UnsafeMutableRawPointer, length: Int) {
        let address = UInt(bitPattern: block)
        let isKept = pool.withLock { pool -> Bool in
            guard pool.bytes + length <= Self.retainedBytesLimit, pool.blocks.count < Self.retainedCountLimit else {
                return false
            }
            pool.blocks.append((address, length))
            pool.bytes += length
            return true
        }
        if !isKept, munmap(block, length) == 0 { pool.withLock { $0.unmapped += 1 } }
    }

    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    static func pageRounded(_ length: Int) -> Int {
        (length + pageSize - 1) / pageSize * pageSize
    }
}
