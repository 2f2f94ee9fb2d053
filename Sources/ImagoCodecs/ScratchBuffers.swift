import Foundation
import ImagoCore

/// A small pool of byte arrays for decoders' short-lived intermediates (the DCT-scaled image a JPEG is decoded
/// to before the final area-averaging step), so that repeated thumbnail decodes do not pay fresh page faults
/// for the same few megabytes each time.
///
/// Thread-safe: the pool is behind one lock, held only to take or return an array; the decode itself runs
/// outside it. Bounded: at most `maxCount` arrays of at most `maxBytes` each are kept.
final class ScratchBuffers: Sendable {
    /// The pool the codecs share: one array per core, each up to 32 MB (a 12 MP image at 1/2 scale is 12 MB).
    static let shared = ScratchBuffers(maxCount: ProcessInfo.processInfo.activeProcessorCount, maxBytes: 32 << 20)

    private let pool = Locked<[[UInt8]]>([])
    private let maxCount: Int
    private let maxBytes: Int

    init(maxCount: Int, maxBytes: Int) {
        self.maxCount = max(1, maxCount)
        self.maxBytes = maxBytes
    }

    /// Lends a `width × height` buffer of `format` (contents unspecified) to `body` and takes it back after.
    func withBuffer<R>(
        width: Int, height: Int, format: PixelBuffer.PixelFormat, _ body: (inout PixelBuffer) throws -> R
    ) throws -> R {
        let count = try PixelBuffer.checkedByteCount(width: width, height: height, format: format)
        var bytes = take(count: count)
        var buffer = try PixelBuffer(width: width, height: height, format: format, bytes: bytes)
        bytes = []  // the buffer holds the only reference, so writing through it never copies
        let result = try body(&buffer)
        bytes = buffer.bytes
        buffer = Self.placeholder  // drop the buffer's reference: `bytes` is unique again
        give(bytes)
        return result
    }

    /// An array of exactly `count` bytes, recycled when one is pooled (the closest capacity that fits).
    private func take(count: Int) -> [UInt8] {
        var bytes =
            pool.withLock { pool -> [UInt8]? in
                guard !pool.isEmpty else { return nil }
                let fitting = pool.indices.filter { pool[$0].capacity >= count }
                let index = fitting.min { pool[$0].capacity < pool[$1].capacity } ?? pool.indices.last!
                return pool.remove(at: index)
            } ?? []
        if bytes.count > count {
            bytes.removeLast(bytes.count - count)
        } else if bytes.count < count {
            bytes.append(contentsOf: repeatElement(0, count: count - bytes.count))
        }
        return bytes
    }

    private func give(_ bytes: [UInt8]) {
        guard bytes.capacity <= maxBytes else { return }
        pool.withLock { pool in
            if pool.count < maxCount { pool.append(bytes) }
        }
    }

    private static let placeholder = try! PixelBuffer(width: 1, height: 1, format: .gray8)  // constant size: cannot fail
}
