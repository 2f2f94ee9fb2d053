import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The bytes of one response as they arrive, in one block sized once (from `Content-Length` when the server sends
/// one, bounded by the caller) and grown by doubling only when the length is unknown, never beyond `limit`.
///
/// Blocks of ``pageThreshold`` bytes and more are pages of their own (`mmap`), handed to the finished response as
/// its `Data` without a copy and unmapped when the last reference to that `Data` goes, on whatever thread that is.
/// A response body lives on after its transfer (in the disk cache's staged writes, until it is decoded); in a
/// `malloc` arena it would sit between the short-lived buffers of the transport's thread, and the arena would keep
/// the highest backlog it ever held as resident memory (RELIABILITY.md §18). Smaller bodies use `malloc`: a page
/// each would waste more than the arena's spread.
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

    /// An empty buffer that never holds more than `limit` bytes.
    package init(limit: Int) {
        self.limit = max(0, limit)
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

    /// A copy of the bytes received so far (progress with partial data, kept bytes of an interrupted body).
    package func copy() -> Data {
        guard let base, count > 0 else { return Data() }
        return Data(bytes: base, count: count)
    }

    /// The bytes received as `Data`, without a copy: the block goes with it (its deallocator frees it) and the
    /// buffer is empty afterwards. A mapped block is first shrunk to the pages `count` needs.
    package func take() -> Data {
        guard let block = base, count > 0 else {
            release()
            return Data()
        }
        let length = count
        let mapped = isMapped
        var mappedLength = Self.pageRounded(capacity)
        base = nil
        count = 0
        capacity = 0
        isMapped = false
        guard mapped else { return Data(bytesNoCopy: block, count: length, deallocator: .free) }
        let needed = Self.pageRounded(length)
        if needed < mappedLength, munmap(block + needed, mappedLength - needed) == 0 { mappedLength = needed }
        return Data(bytesNoCopy: block, count: length, deallocator: .custom { pointer, _ in
            munmap(pointer, mappedLength)
        })
    }

    /// Frees the block; the buffer is empty afterwards.
    package func release() {
        if let base {
            if isMapped { munmap(base, Self.pageRounded(capacity)) } else { free(base) }
        }
        base = nil
        count = 0
        capacity = 0
        isMapped = false
    }

    /// Moves the bytes to a block of `newCapacity` bytes: mapped pages from ``pageThreshold`` up (a mapped block
    /// grows by a new mapping and one copy, as doubling makes rare), else `realloc`.
    private func resize(to newCapacity: Int) -> Bool {
        guard newCapacity >= Self.pageThreshold else {
            guard let grown = realloc(base, newCapacity) else { return false }
            base = grown
            capacity = newCapacity
            return true
        }
        let newLength = Self.pageRounded(newCapacity)
        guard let mapped = mmap(nil, newLength, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            mapped != UnsafeMutableRawPointer(bitPattern: -1)  // MAP_FAILED, a C macro Swift does not import
        else { return false }
        if let base {
            mapped.copyMemory(from: base, byteCount: count)
            if isMapped { munmap(base, capacity) } else { free(base) }
        }
        base = mapped
        capacity = newLength
        isMapped = true
        return true
    }

    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    private static func pageRounded(_ length: Int) -> Int {
        (length + pageSize - 1) / pageSize * pageSize
    }
}
