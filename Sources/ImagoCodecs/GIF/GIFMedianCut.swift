/// A colour map for many colours: median cut over a 5-bit-per-channel histogram that splits the box with the most
/// squared error, along its widest channel, where the two halves' error is least (Wu's criterion on the
/// histogram), each entry the mean of its pixels.
///
/// Why not giflib's `GifQuantizeBuffer` (deprecated in giflib 5.2): it splits the *widest* box whatever it
/// holds, so sparse colours take entries that dense ones need; its maps measured well behind Pillow's median cut
/// and this one (BENCHMARKS.md, "GIF output").
struct GIFMedianCut {
    /// The pixels of one 5-bit bin: count, colour sums and the sum of squares of all three channels.
    struct Bin {
        var key: Int
        var count = 0
        var red = 0
        var green = 0
        var blue = 0
        var squares = 0

        /// The channel's sum: 0 red, 1 green, 2 blue.
        func sum(_ channel: Int) -> Int { channel == 0 ? red : channel == 1 ? green : blue }

        /// The pixels' squared error: the squares less what their mean accounts for.
        var error: Double {
            guard count > 0 else { return 0 }
            let (r, g, b) = (Double(red), Double(green), Double(blue))
            return Double(squares) - (r * r + g * g + b * b) / Double(count)
        }

        /// Adds `other`'s pixels (`sign` 1) or takes them away (`sign` -1).
        mutating func add(_ other: Bin, sign: Int = 1) {
            count += sign * other.count
            red += sign * other.red
            green += sign * other.green
            blue += sign * other.blue
            squares += sign * other.squares
        }
    }

    /// The bin key of a colour: 5 bits of red, green and blue.
    static func key(_ r: Int, _ g: Int, _ b: Int) -> Int { (r >> 3) << 10 | (g >> 3) << 5 | (b >> 3) }

    /// A run of ``bins`` and its totals.
    private struct Box {
        var start: Int
        var end: Int
        var total = Bin(key: -1)
    }

    /// The used bins, reordered as boxes are split (each box is a run of them).
    private(set) var bins: [Bin]

    /// The histogram of `bins`, the used bins of the pixels.
    init(bins: [Bin]) {
        self.bins = bins
    }

    /// The used bins of the pixels of `canvas` (RGBA bytes) at the byte `offsets` given, in key order, summed in
    /// `scratch` (left zeroed again).
    static func histogram(_ canvas: UnsafeBufferPointer<UInt8>, offsets: [Int], scratch: GIFScratch) -> [Bin] {
        let sums = scratch.sums  // count, red, green, blue and squares per bin, flat
        for p in offsets {
            let (r, g, b) = (Int(canvas[p]), Int(canvas[p + 1]), Int(canvas[p + 2]))
            let at = key(r, g, b) * 5
            sums[at] += 1
            sums[at + 1] += r
            sums[at + 2] += g
            sums[at + 3] += b
            sums[at + 4] += r * r + g * g + b * b
        }
        var bins: [Bin] = []
        for key in 0..<(1 << 15) where sums[key * 5] > 0 {
            let at = key * 5
            bins.append(
                Bin(
                    key: key, count: sums[at], red: sums[at + 1], green: sums[at + 2], blue: sums[at + 3],
                    squares: sums[at + 4]))
            (sums + at).update(repeating: 0, count: 5)
        }
        return bins
    }

    /// At most `capacity` entries (red, green, blue bytes) and, for every bin key with pixels, its entry.
    mutating func palette(capacity: Int) -> (colors: [UInt8], entryOfBin: [UInt16]) {
        var boxes = [Self.box(bins, 0, bins.count)]
        while boxes.count < capacity {
            // The splittable box with the most error.
            var chosen = -1
            var most = 0.0
            for (index, box) in boxes.enumerated() where box.end - box.start > 1 && box.total.error > most {
                (chosen, most) = (index, box.total.error)
            }
            guard chosen >= 0, let (low, high) = split(boxes[chosen]) else { break }
            boxes[chosen] = low
            boxes.append(high)
        }
        var colors: [UInt8] = []
        var entryOfBin = [UInt16](repeating: .max, count: 1 << 15)
        for (entry, box) in boxes.enumerated() {
            let n = box.total.count
            for channel in 0..<3 { colors.append(UInt8((box.total.sum(channel) + n / 2) / n)) }
            for bin in bins[box.start..<box.end] { entryOfBin[bin.key] = UInt16(entry) }
        }
        return (colors, entryOfBin)
    }

    private static func box(_ bins: [Bin], _ start: Int, _ end: Int) -> Box {
        var box = Box(start: start, end: end)
        for bin in bins[start..<end] { box.total.add(bin) }
        return box
    }

    /// `box` cut in two along its channel of widest spread (by bin coordinate), where the halves' summed error is
    /// least; `nil` when it has one bin.
    private mutating func split(_ box: Box) -> (Box, Box)? {
        guard box.end - box.start > 1 else { return nil }
        // The channel whose bin coordinates spread widest, weighted by pixels.
        var spread = [0.0, 0.0, 0.0]
        let n = Double(box.total.count)
        for bin in bins[box.start..<box.end] {
            for channel in 0..<3 {
                let mean = Double(bin.sum(channel)) / Double(bin.count) - Double(box.total.sum(channel)) / n
                spread[channel] += Double(bin.count) * mean * mean
            }
        }
        let channel = spread[0] >= spread[1] && spread[0] >= spread[2] ? 0 : spread[1] >= spread[2] ? 1 : 2
        // A stable counting sort of the box's bins by their coordinate on that channel (32 values).
        let shift = 10 - channel * 5
        var starts = [Int](repeating: 0, count: 33)
        for bin in bins[box.start..<box.end] { starts[(bin.key >> shift) & 31 + 1] += 1 }
        for coordinate in 0..<32 { starts[coordinate + 1] += starts[coordinate] }
        let unsorted = Array(bins[box.start..<box.end])
        for bin in unsorted {
            let coordinate = (bin.key >> shift) & 31
            bins[box.start + starts[coordinate]] = bin
            starts[coordinate] += 1
        }
        // The cut between bins that leaves the least error, over the prefix totals.
        var prefix = Bin(key: -1)
        var best = box.start + 1
        var bestError = Double.infinity
        for cut in (box.start + 1)..<box.end {
            prefix.add(bins[cut - 1])
            var rest = box.total
            rest.add(prefix, sign: -1)
            let error = prefix.error + rest.error
            if error < bestError { (best, bestError) = (cut, error) }
        }
        return (Self.box(bins, box.start, best), Self.box(bins, best, box.end))
    }
}
