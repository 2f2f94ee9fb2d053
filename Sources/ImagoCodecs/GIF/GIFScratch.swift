/// Tables one GIF encode reuses from frame to frame, so that an animation of small frames does not allocate and
/// fault in 1.8 MB of fresh memory for each: the histogram's sums (32,768 bins × 5) and the nearest-colour cells
/// (262,144). Each is allocated when first asked for (frames of at most 256 colours need neither), once per
/// encode, and left zeroed / empty between uses. One encode, one thread. (Keeping them across encodes too was
/// measured and gained nothing above the noise.)
final class GIFScratch {
    static let sumCount = 5 << 15
    static let cellCount = 1 << 18
    private var allocatedSums: UnsafeMutablePointer<Int>?
    private var allocatedCells: UnsafeMutablePointer<UInt16>?

    /// Count, red, green, blue and squares per 5-bit bin; all 0 between uses.
    var sums: UnsafeMutablePointer<Int> {
        if let allocatedSums { return allocatedSums }
        let sums = UnsafeMutablePointer<Int>.allocate(capacity: Self.sumCount)
        sums.initialize(repeating: 0, count: Self.sumCount)
        allocatedSums = sums
        return sums
    }

    /// Per 6-bit cell, the nearest entry found; refilled with `.max` by each `NearestColor` that uses it.
    var cells: UnsafeMutablePointer<UInt16> {
        if let allocatedCells { return allocatedCells }
        let cells = UnsafeMutablePointer<UInt16>.allocate(capacity: Self.cellCount)
        cells.initialize(repeating: .max, count: Self.cellCount)
        allocatedCells = cells
        return cells
    }

    deinit {
        allocatedSums?.deallocate()
        allocatedCells?.deallocate()
    }
}
