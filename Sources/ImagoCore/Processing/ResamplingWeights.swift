/// For each output index along one axis: the first source index, how many source indices contribute, and their
/// weights in fixed point (flattened, starting at `offsets[i]`), which sum to exactly `1 << bits` per output index.
///
/// The weights are those of the area-averaging box filter when shrinking (each source pixel weighs the fraction
/// of the output pixel it covers) and of bilinear interpolation when enlarging or keeping the size. They are
/// quantised by rounding the running sum, so that every output's weights add up to exactly `1 << bits` (a uniform
/// image stays exactly uniform) and no prefix drifts by more than half a unit. The error of a weighted sum is
/// then at most half a unit times the sum of the differences between neighbouring taps' values: with 22 bits
/// under 0.13 for 4,000 taps of 0 and 255 alternating; with 15 bits under 0.25 for 64 such taps.
package struct ResamplingWeights: Sendable {
    /// Fractional bits of a weight.
    let bits: Int
    /// The sum of each output's weights: 1.0 in fixed point.
    var one: UInt32 { 1 << UInt32(bits) }

    private(set) var starts: [Int] = []
    private(set) var counts: [Int] = []
    private(set) var offsets: [Int] = []
    private(set) var weights: [UInt32] = []
    /// The largest count; every count when padded.
    private(set) var taps = 1

    /// The tables for resampling `source` pixels to `destination` along one axis.
    ///
    /// `isPadded`: every output gets the same number of taps (the largest), its span moved left where it would
    /// run past the end and filled out with zero weights, so that the horizontal pass runs a loop of constant
    /// length, unrolled, instead of mispredicting a branch at the end of every output pixel's taps.
    init(source: Int, destination: Int, bits: Int = 22, isPadded: Bool = false) {
        self.init(exactFrom: source, to: destination, bits: bits)
        taps = counts.max() ?? 1
        guard isPadded, counts.contains(where: { $0 != taps }) else { return }
        var padded = [UInt32]()
        padded.reserveCapacity(destination * taps)
        for i in 0..<destination {
            // A count never exceeds `source` (the taps are distinct source indices), so this start is ≥ 0.
            let start = min(starts[i], source - taps)
            let before = starts[i] - start
            padded.append(contentsOf: repeatElement(0, count: before))
            padded.append(contentsOf: weights[offsets[i]..<(offsets[i] + counts[i])])
            padded.append(contentsOf: repeatElement(0, count: taps - before - counts[i]))
            starts[i] = start
            counts[i] = taps
            offsets[i] = i * taps
        }
        weights = padded
    }

    /// ``init(source:destination:bits:isPadded:)`` through a small process-wide table, since the tables depend on
    /// the two lengths only and a gallery or a thumbnail service resamples many images of a few sizes to one
    /// target. At most ``sharedCapacity`` tables are kept (the table is emptied when full), each for a source of
    /// at most ``sharedMaximumSource`` and a destination of at most ``sharedMaximumDestination`` (others are
    /// computed every time); a table holds about 4 bytes per source and 28 per destination pixel, so all of them
    /// about 2 MB at most. Computed outside the lock.
    static func shared(source: Int, destination: Int, bits: Int = 22, isPadded: Bool = false) -> ResamplingWeights {
        guard source <= sharedMaximumSource, destination <= sharedMaximumDestination else {
            return ResamplingWeights(source: source, destination: destination, bits: bits, isPadded: isPadded)
        }
        let key = SharedKey(source: source, destination: destination, bits: bits, isPadded: isPadded)
        if let table = sharedTables.withLock({ $0[key] }) { return table }
        let table = ResamplingWeights(source: source, destination: destination, bits: bits, isPadded: isPadded)
        sharedTables.withLock { tables in
            if tables.count >= sharedCapacity { tables.removeAll(keepingCapacity: true) }
            tables[key] = table
        }
        return table
    }

    /// How many tables ``shared(source:destination:bits:isPadded:)`` keeps: default 32.
    static let sharedCapacity = 32
    /// The longest destination ``shared(source:destination:bits:isPadded:)`` keeps a table for: default 1,024.
    static let sharedMaximumDestination = 1024
    /// The longest source ``shared(source:destination:bits:isPadded:)`` keeps a table for: default 8,192.
    static let sharedMaximumSource = 8192

    private struct SharedKey: Hashable {
        let source: Int
        let destination: Int
        let bits: Int
        let isPadded: Bool
    }

    private static let sharedTables = Locked<[SharedKey: ResamplingWeights]>([:])

    private init(exactFrom source: Int, to destination: Int, bits: Int) {
        self.bits = bits
        starts.reserveCapacity(destination)
        counts.reserveCapacity(destination)
        offsets.reserveCapacity(destination)
        let scale = Double(source) / Double(destination)
        var exact: [Double] = []
        for i in 0..<destination {
            exact.removeAll(keepingCapacity: true)
            if destination < source {
                // Box filter with fractional coverage at both edges.
                let lo = Double(i) * scale
                let hi = Double(i + 1) * scale
                let first = Int(lo.rounded(.down))
                let last = min(source - 1, Int(hi.rounded(.up)) - 1)
                starts.append(first)
                for j in first...max(first, last) {
                    exact.append(max(0, min(hi, Double(j + 1)) - max(lo, Double(j))))
                }
            } else {
                // Bilinear between the two nearest source centres (the same centre when the size is unchanged).
                let centre = (Double(i) + 0.5) * scale - 0.5
                let j0 = Int(centre.rounded(.down))
                let f = centre - Double(j0)
                let a = min(max(j0, 0), source - 1)
                let b = min(max(j0 + 1, 0), source - 1)
                starts.append(a)
                if a == b || f == 0 { exact.append(1) } else { exact.append(contentsOf: [1 - f, f]) }
            }
            offsets.append(weights.count)
            counts.append(exact.count)
            appendQuantised(exact)
        }
    }

    /// Appends `exact` scaled to sum to ``one``, rounding the running sum rather than each weight.
    private mutating func appendQuantised(_ exact: [Double]) {
        let total = exact.reduce(0, +)
        guard total > 0 else {
            weights.append(one)
            weights.append(contentsOf: repeatElement(0, count: exact.count - 1))
            return
        }
        var running = 0.0
        var previous: UInt32 = 0
        for (k, w) in exact.enumerated() {
            running += w
            let cumulative =
                k == exact.count - 1 ? one : min(one, UInt32((running / total * Double(one)).rounded()))
            weights.append(cumulative - min(previous, cumulative))
            previous = max(previous, cumulative)
        }
    }

    /// The tables as unsafe buffers, so that the per-pixel loops read them without bounds checks.
    func withUnsafeTable<R>(_ body: (Table) throws -> R) rethrows -> R {
        try starts.withUnsafeBufferPointer { s in
            try counts.withUnsafeBufferPointer { c in
                try offsets.withUnsafeBufferPointer { o in
                    try weights.withUnsafeBufferPointer { w in
                        try body(Table(starts: s, counts: c, offsets: o, weights: w, taps: taps))
                    }
                }
            }
        }
    }

    /// A borrowed view of the tables, valid inside ``withUnsafeTable(_:)`` only.
    package struct Table {
        /// The first source index of each output index.
        package let starts: UnsafeBufferPointer<Int>
        /// How many source indices each output index averages.
        package let counts: UnsafeBufferPointer<Int>
        /// Where each output index's weights start in `weights`.
        package let offsets: UnsafeBufferPointer<Int>
        /// The weights, in fixed point with the table's `bits` fractional bits.
        package let weights: UnsafeBufferPointer<UInt32>
        /// The largest count (every count for padded tables).
        package let taps: Int
    }
}
