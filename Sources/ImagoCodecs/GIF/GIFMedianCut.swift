/// A colour map for many colours: median cut over a 5-bit-per-channel histogram that splits the box with the most
/// squared error, along its widest channel, where the two halves' error is least (Wu's criterion on the
/// histogram), each entry the mean of its pixels.
///
/// Colours with alpha (palette PNGs) are cut in premultiplied RGBA, as pngquant works, so that colours hardly
/// seen through their alpha take few entries: opaque pixels keep the 5-bit RGB bins, translucent ones (alpha
/// 1…254) have bins of their own, 4 bits of each premultiplied colour channel and 5 of alpha, and boxes of their
/// own from the start, so that the opaque pixels' entries are opaque.
///
/// Why not giflib's `GifQuantizeBuffer` (deprecated in giflib 5.2): it splits the *widest* box whatever it
/// holds, so sparse colours take entries that dense ones need; its maps measured well behind Pillow's median cut
/// and this one (BENCHMARKS.md, "GIF output").
struct GIFMedianCut {
    /// The pixels of one bin: count, channel sums and the sum of squares of all channels (alpha 0 for GIF's
    /// colours, which have none).
    struct Bin {
        var key: Int
        var count = 0
        var red = 0
        var green = 0
        var blue = 0
        var alpha = 0
        var squares = 0

        /// The channel's sum: 0 red, 1 green, 2 blue, 3 alpha.
        func sum(_ channel: Int) -> Int { channel == 0 ? red : channel == 1 ? green : channel == 2 ? blue : alpha }

        /// The channel's mean over the pixels, rounded (0…255); the bin must hold some.
        func mean(_ channel: Int) -> Int { (sum(channel) + count / 2) / count }

        /// The pixels' squared error: the squares less what their mean accounts for.
        var error: Double {
            guard count > 0 else { return 0 }
            let (r, g, b, a) = (Double(red), Double(green), Double(blue), Double(alpha))
            return Double(squares) - (r * r + g * g + b * b + GIFMedianCut.alphaWeight * a * a) / Double(count)
        }

        /// Adds `other`'s pixels (`sign` 1) or takes them away (`sign` -1).
        mutating func add(_ other: Bin, sign: Int = 1) {
            count += sign * other.count
            red += sign * other.red
            green += sign * other.green
            blue += sign * other.blue
            alpha += sign * other.alpha
            squares += sign * other.squares
        }
    }

    /// How much more a difference of alpha counts than one of a colour channel, in squared errors (the cut) and
    /// distances (the mapping): soft edges show alpha errors more than colour ones, as pngquant weighs them.
    /// 4 was measured against 1 and 2 (BENCHMARKS.md, "PNG palette output"). No effect without alpha.
    static let alphaWeight = 4.0

    /// The number of bin keys: opaque colours below `1 << 15`, translucent ones from there.
    static let keyCount = (1 << 15) + (1 << 17)

    /// The bin key of an opaque colour: 5 bits of red, green and blue.
    static func key(_ r: Int, _ g: Int, _ b: Int) -> Int { (r >> 3) << 10 | (g >> 3) << 5 | (b >> 3) }

    /// The bin key of a premultiplied colour: ``key(_:_:_:)`` when opaque, else above it with 4 bits of each
    /// colour channel and 5 of alpha.
    static func key(_ r: Int, _ g: Int, _ b: Int, alpha a: Int) -> Int {
        a == 255 ? key(r, g, b) : (1 << 15) + ((r >> 4) << 13 | (g >> 4) << 9 | (b >> 4) << 5 | (a >> 3))
    }

    /// A bin key's coordinate (0…31) on a channel (0 red, 1 green, 2 blue, 3 alpha).
    private static func coordinate(_ key: Int, _ channel: Int) -> Int {
        if key < 1 << 15 { return channel == 3 ? 31 : (key >> (10 - channel * 5)) & 31 }
        let translucent = key - (1 << 15)
        return channel == 3 ? translucent & 31 : ((translucent >> (13 - channel * 4)) & 15) << 1
    }

    /// A run of ``bins``, its totals and their squared error.
    private struct Box {
        var start: Int
        var end: Int
        var total = Bin(key: -1)
        var error = 0.0
    }

    /// The used bins, reordered as boxes are split (each box is a run of them).
    private(set) var bins: [Bin]

    /// The histogram of `bins`, the used bins of the pixels.
    init(bins: [Bin]) {
        self.bins = bins
    }

    /// The used bins of the pixels of `canvas` (RGBA bytes) at the byte `offsets` given, in key order: their RGB,
    /// or with `withAlpha` their premultiplied RGBA. Each key's bin is found through `scratch`'s slots (left
    /// zeroed again), its sums packed in the order first seen.
    static func histogram(
        _ canvas: UnsafeBufferPointer<UInt8>, offsets: [Int], withAlpha: Bool, scratch: GIFScratch
    ) -> [Bin] {
        let slots = scratch.slots
        // Count, red, green, blue, alpha and squares per used bin, flat; at most one bin a pixel.
        let sums = UnsafeMutablePointer<Int>.allocate(capacity: 6 * min(offsets.count, scratch.slotCount))
        defer { sums.deallocate() }
        var used = 0  // the bins seen so far
        for p in offsets {
            var (r, g, b, a) = (Int(canvas[p]), Int(canvas[p + 1]), Int(canvas[p + 2]), 0)
            let key: Int
            if withAlpha {
                a = Int(canvas[p + 3])
                (r, g, b) = (premultiplied(r, a), premultiplied(g, a), premultiplied(b, a))
                key = Self.key(r, g, b, alpha: a)
            } else {
                key = Self.key(r, g, b)
            }
            var slot = Int(slots[key])
            if slot == 0 {
                used += 1
                slot = used
                slots[key] = Int32(slot)
                (sums + (slot - 1) * 6).initialize(repeating: 0, count: 6)
            }
            let at = (slot - 1) * 6
            sums[at] += 1
            sums[at + 1] += r
            sums[at + 2] += g
            sums[at + 3] += b
            sums[at + 4] += a
            sums[at + 5] += r * r + g * g + b * b + Int(alphaWeight) * a * a
        }
        var bins: [Bin] = []
        bins.reserveCapacity(used)
        // In key order: a scan of the slots (163,840 at most) costs less than sorting a thumbnail's ~8,000 keys.
        for key in 0..<scratch.slotCount where slots[key] != 0 {
            let at = (Int(slots[key]) - 1) * 6
            bins.append(
                Bin(
                    key: key, count: sums[at], red: sums[at + 1], green: sums[at + 2], blue: sums[at + 3],
                    alpha: sums[at + 4], squares: sums[at + 5]))
            slots[key] = 0
        }
        return bins
    }

    /// A channel value times `alpha`, rounded (0…255).
    @inline(__always)
    static func premultiplied<Value: FixedWidthInteger>(_ value: Value, _ alpha: Value) -> Value {
        (value * alpha + 127) / 255
    }

    /// At most `capacity` entries (red, green and blue bytes, then premultiplied alpha with `withAlpha`) and each
    /// bin's entry, by its position in ``bins`` as the cut leaves them.
    mutating func palette(capacity: Int, withAlpha: Bool) -> (colors: [UInt8], entryOfBin: [UInt16]) {
        // With alpha, opaque and translucent pixels start in boxes of their own (the opaque bins come first, in
        // key order), so that opaque pixels have entries that are opaque.
        let firstTranslucent = bins.firstIndex { $0.key >= 1 << 15 } ?? bins.count
        var boxes =
            withAlpha && capacity > 1 && firstTranslucent > 0 && firstTranslucent < bins.count
            ? [Self.box(bins, 0, firstTranslucent), Self.box(bins, firstTranslucent, bins.count)]
            : [Self.box(bins, 0, bins.count)]
        while boxes.count < capacity {
            // The splittable box with the most error.
            var chosen = -1
            var most = 0.0
            for (index, box) in boxes.enumerated() where box.end - box.start > 1 && box.error > most {
                (chosen, most) = (index, box.error)
            }
            guard chosen >= 0, let (low, high) = split(boxes[chosen]) else { break }
            boxes[chosen] = low
            boxes.append(high)
        }
        var colors: [UInt8] = []
        var entryOfBin = [UInt16](repeating: 0, count: bins.count)
        for (entry, box) in boxes.enumerated() {
            for channel in 0..<(withAlpha ? 4 : 3) { colors.append(UInt8(box.total.mean(channel))) }
            for position in box.start..<box.end { entryOfBin[position] = UInt16(entry) }
        }
        return (colors, entryOfBin)
    }

    private static func box(_ bins: [Bin], _ start: Int, _ end: Int) -> Box {
        var box = Box(start: start, end: end)
        for bin in bins[start..<end] { box.total.add(bin) }
        box.error = box.total.error
        return box
    }

    /// `box` cut in two along its channel of widest spread (by bin coordinate), where the halves' summed error is
    /// least; `nil` when it has one bin.
    private mutating func split(_ box: Box) -> (Box, Box)? {
        guard box.end - box.start > 1 else { return nil }
        // The channel whose bin coordinates spread widest, weighted by pixels.
        var spread = [0.0, 0.0, 0.0, 0.0]
        let n = Double(box.total.count)
        for bin in bins[box.start..<box.end] {
            for channel in 0..<4 {
                let mean = Double(bin.sum(channel)) / Double(bin.count) - Double(box.total.sum(channel)) / n
                spread[channel] += Double(bin.count) * mean * mean * (channel == 3 ? Self.alphaWeight : 1)
            }
        }
        // The first of the widest (alpha, 0 without it, only when strictly wider).
        var channel = 0
        for other in 1..<4 where spread[other] > spread[channel] { channel = other }
        // A stable counting sort of the box's bins by their coordinate on that channel (32 values).
        var starts = [Int](repeating: 0, count: 33)
        for bin in bins[box.start..<box.end] { starts[Self.coordinate(bin.key, channel) + 1] += 1 }
        for coordinate in 0..<32 { starts[coordinate + 1] += starts[coordinate] }
        let unsorted = Array(bins[box.start..<box.end])
        for bin in unsorted {
            let coordinate = Self.coordinate(bin.key, channel)
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
