/// Tables one GIF encode reuses from frame to frame, so that an animation of small frames does not allocate and
/// fault in 1.8 MB of fresh memory for each: the histogram's sums (32,768 bins × 5) and the nearest-colour cells
/// (262,144). Allocated once per encode, both left zeroed / empty between uses. One encode, one thread. (Keeping
/// them across encodes too was measured and gained nothing above the noise.)
final class GIFScratch {
    /// Count, red, green, blue and squares per 5-bit bin; all 0 between uses.
    let sums: UnsafeMutablePointer<Int>
    static let sumCount = 5 << 15
    /// Per 6-bit cell, the nearest entry found; refilled with `.max` by each ``NearestColor`` that uses it.
    let cells: UnsafeMutablePointer<UInt16>
    static let cellCount = 1 << 18

    init() {
        sums = .allocate(capacity: Self.sumCount)
        sums.initialize(repeating: 0, count: Self.sumCount)
        cells = .allocate(capacity: Self.cellCount)
        cells.initialize(repeating: .max, count: Self.cellCount)
    }

    deinit {
        sums.deallocate()
        cells.deallocate()
    }
}
