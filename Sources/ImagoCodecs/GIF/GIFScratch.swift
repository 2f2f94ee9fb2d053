import Foundation

/// Tables one GIF encode reuses from frame to frame, so that an animation of small frames does not allocate and
/// fault in 2 MB of fresh memory for each: the histogram's sums (32,768 bins × 6) and the nearest-colour cells
/// (262,144). Each is allocated when first asked for (frames of at most 256 colours need neither), once per
/// encode, and left zeroed / empty between uses. One encode, one thread. (Keeping them across encodes too was
/// measured and gained nothing above the noise.) With alpha (palette PNGs), both have room for the translucent
/// bins and cells too: 163,840 bins and 786,432 cells (9.4 MB).
final class GIFScratch {
    /// The number of entries of ``sums``.
    let sumCount: Int
    /// The number of entries of ``cells``: 6-bit RGB cells, then with alpha 5-bit premultiplied RGB and 4-bit
    /// alpha ones.
    let cellCount: Int
    private var allocatedSums: UnsafeMutablePointer<Int>?
    private var allocatedCells: UnsafeMutablePointer<UInt16>?

    /// Tables for opaque colours, or with `withAlpha` translucent ones too.
    init(withAlpha: Bool = false) {
        sumCount = 6 * (withAlpha ? GIFMedianCut.keyCount : 1 << 15)
        cellCount = withAlpha ? (1 << 18) + (1 << 19) : 1 << 18
    }

    /// Count, red, green, blue, alpha and squares per bin; all 0 between uses. Zeroed by `calloc`, whose large
    /// blocks are fresh pages the kernel zeroes only when touched: a histogram of few colours costs few pages.
    var sums: UnsafeMutablePointer<Int> {
        if let allocatedSums { return allocatedSums }
        guard let raw = calloc(sumCount, MemoryLayout<Int>.stride) else {
            fatalError("GIFScratch: cannot allocate \(sumCount * MemoryLayout<Int>.stride) bytes")
        }
        let sums = raw.bindMemory(to: Int.self, capacity: sumCount)
        allocatedSums = sums
        return sums
    }

    /// Per cell, the nearest entry found; refilled with `.max` by each `NearestColor` that uses it.
    var cells: UnsafeMutablePointer<UInt16> {
        if let allocatedCells { return allocatedCells }
        let cells = UnsafeMutablePointer<UInt16>.allocate(capacity: cellCount)
        cells.initialize(repeating: .max, count: cellCount)
        allocatedCells = cells
        return cells
    }

    deinit {
        free(allocatedSums)
        allocatedCells?.deallocate()
    }
}
