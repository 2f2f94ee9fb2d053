import ImagoCore

/// Turns the drawn pixels of a rectangle of an RGBA canvas into at most 256 colours and their indices.
///
/// - Up to 256 distinct colours (255 when a transparent entry is needed) are kept exactly: no colour changes,
///   so a GIF decoded and written again keeps its pixels.
/// - More are reduced to a colour map by ``GIFMedianCut``, and the pixels mapped to their
///   nearest entry with Floyd–Steinberg error diffusion in serpentine order, as libvips and gifsicle dither by
///   default. Error never crosses a pixel that is not drawn.
/// - Pixels that are not drawn get the transparent entry, which is always the last.
///
/// Deterministic: the same pixels give the same bytes. `PNGEncoder` uses it too, for palette PNGs.
enum GIFQuantizer {
    /// The frame for `rect` of `canvas` (RGBA, straight, `canvasWidth` pixels a row) where `drawn` (one byte a
    /// pixel of `rect`, non-zero for drawn) marks the pixels that are drawn, in at most `maximumColors` entries
    /// (2…256). A transparent entry, one of them, is added when some pixel is not drawn or `reservesTransparency`
    /// is set.
    static func frame(
        of canvas: UnsafeBufferPointer<UInt8>, canvasWidth: Int, rect: GIFRect, drawn: [UInt8],
        reservesTransparency: Bool, scratch: GIFScratch, maximumColors: Int = 256
    ) -> GIFIndexedFrame {
        let area = rect.width * rect.height
        let drawnCount = drawn.reduce(0) { $0 + ($1 == 0 ? 0 : 1) }
        let needsTransparency = reservesTransparency || drawnCount < area
        let maximumColors = min(256, max(2, maximumColors))
        let capacity = needsTransparency ? maximumColors - 1 : maximumColors
        let region = Region(canvas: canvas, canvasWidth: canvasWidth, rect: rect, drawn: drawn, scratch: scratch)
        var frame =
            region.exactColors(capacity: capacity) ?? region.dithered(capacity: capacity, drawnCount: drawnCount)
        if needsTransparency {
            let transparent = frame.colorCount
            frame.colors += [0, 0, 0]
            frame.transparentIndex = transparent
            for i in 0..<area where drawn[i] == 0 { frame.indices[i] = UInt8(transparent) }
        }
        return frame
    }

    /// The pixels being indexed.
    private struct Region {
        let canvas: UnsafeBufferPointer<UInt8>
        let canvasWidth: Int
        let rect: GIFRect
        let drawn: [UInt8]
        let scratch: GIFScratch

        /// The byte offset in `canvas` of the pixel at (`x`, `y`) of the rectangle.
        func offset(_ x: Int, _ y: Int) -> Int { ((rect.y + y) * canvasWidth + rect.x + x) * 4 }

        /// The colours as they are, when there are at most `capacity` of them: one pass with an open-addressing
        /// table that stops at the first colour too many.
        func exactColors(capacity: Int) -> GIFIndexedFrame? {
            let slots = 1024  // at most 256 keys: the table stays at most a quarter full
            var keys = [UInt32](repeating: 0, count: slots)
            var entries = [UInt8](repeating: 0, count: slots)
            var colors: [UInt8] = []
            var indices = [UInt8](repeating: 0, count: rect.width * rect.height)
            for y in 0..<rect.height {
                for x in 0..<rect.width where drawn[y * rect.width + x] != 0 {
                    let p = offset(x, y)
                    let rgb = UInt32(canvas[p]) << 16 | UInt32(canvas[p + 1]) << 8 | UInt32(canvas[p + 2])
                    let key = rgb | 0x0100_0000  // 0 marks an empty slot
                    var slot = Int((rgb &* 2_654_435_761) >> 22) & (slots - 1)
                    while keys[slot] != key {
                        if keys[slot] == 0 {
                            guard colors.count / 3 < capacity else { return nil }
                            keys[slot] = key
                            entries[slot] = UInt8(colors.count / 3)
                            colors += [canvas[p], canvas[p + 1], canvas[p + 2]]
                            break
                        }
                        slot = (slot + 1) & (slots - 1)
                    }
                    indices[y * rect.width + x] = entries[slot]
                }
            }
            if colors.isEmpty { colors = [0, 0, 0] }  // a colour map has at least one entry
            return GIFIndexedFrame(rect: rect, indices: indices, colors: colors, transparentIndex: nil)
        }

        /// At most `capacity` colours from the median cut, with the pixels dithered onto them.
        func dithered(capacity: Int, drawnCount: Int) -> GIFIndexedFrame {
            var offsets: [Int] = []
            offsets.reserveCapacity(drawnCount)
            for y in 0..<rect.height {
                for x in 0..<rect.width where drawn[y * rect.width + x] != 0 { offsets.append(offset(x, y)) }
            }
            var cut = GIFMedianCut(bins: GIFMedianCut.histogram(canvas, offsets: offsets, scratch: scratch))
            let (colors, hints) = cut.palette(capacity: capacity)
            let indices = diffuse(onto: NearestColor(colors, hints: hints, cells: scratch.cells))
            return GIFIndexedFrame(rect: rect, indices: indices, colors: colors, transparentIndex: nil)
        }

        /// The index of every drawn pixel after Floyd–Steinberg error diffusion onto `colors`, rows in
        /// serpentine order.
        private func diffuse(onto nearest: NearestColor) -> [UInt8] {
            let colors = nearest.colors
            let width = rect.width
            var indices = [UInt8](repeating: 0, count: width * rect.height)
            // Errors ×16 for the row being mapped and the next, one pixel of margin each side.
            var current = [Int32](repeating: 0, count: (width + 2) * 3)
            var next = current
            for y in 0..<rect.height {
                let step = y & 1 == 0 ? 1 : -1
                var x = step == 1 ? 0 : width - 1
                for _ in 0..<width {
                    defer { x += step }
                    guard drawn[y * width + x] != 0 else { continue }
                    let p = offset(x, y)
                    let e = (x + 1) * 3
                    let ahead = e + step * 3
                    let behind = e - step * 3
                    let r = min(255, max(0, Int32(canvas[p]) + current[e] / 16))
                    let g = min(255, max(0, Int32(canvas[p + 1]) + current[e + 1] / 16))
                    let b = min(255, max(0, Int32(canvas[p + 2]) + current[e + 2] / 16))
                    let index = nearest.index(r, g, b)
                    indices[y * width + x] = UInt8(index)
                    let errors = (
                        r - Int32(colors[index * 3]), g - Int32(colors[index * 3 + 1]),
                        b - Int32(colors[index * 3 + 2])
                    )
                    GIFQuantizer.spread(errors.0, at: e, ahead: ahead, behind: behind, &current, &next)
                    GIFQuantizer.spread(errors.1, at: e + 1, ahead: ahead + 1, behind: behind + 1, &current, &next)
                    GIFQuantizer.spread(errors.2, at: e + 2, ahead: ahead + 2, behind: behind + 2, &current, &next)
                }
                swap(&current, &next)
                for i in next.indices { next[i] = 0 }
            }
            return indices
        }
    }

    /// Floyd–Steinberg's weights (×16): 7 to the next pixel of the row, 3, 5 and 1 below.
    @inline(__always)
    fileprivate static func spread(
        _ error: Int32, at here: Int, ahead: Int, behind: Int, _ current: inout [Int32], _ next: inout [Int32]
    ) {
        current[ahead] += error * 7
        next[behind] += error * 3
        next[here] += error * 5
        next[ahead] += error
    }

    /// The nearest entry of a colour map (squared RGB distance), remembered per cell of 4 × 4 × 4 colours: the
    /// first colour of a cell to ask is searched, and the cell's later colours get its answer (error diffusion
    /// absorbs the difference; a flat area of one colour always gets that colour's own nearest entry).
    ///
    /// The search starts from the entry of the colour's 5-bit bin when one is known (giflib's box for the bin,
    /// usually the nearest or close), then walks the entries in order of green outwards from the colour's green
    /// and stops on each side once the green difference alone is farther than the best entry so far: a few
    /// entries rather than all, and an entry as near as comparing them all would find.
    private struct NearestColor {
        let colors: [UInt8]
        /// The entries as (red, green, blue, entry number), sorted by green.
        private let sorted: [SIMD4<Int32>]
        /// Per 5-bit bin (15 bits), an entry to try first; `.max` when none.
        private let hints: [UInt16]
        /// Per 6-bit cell, the answer given (`.max`: none yet).
        private let cells: UnsafeMutablePointer<UInt16>

        /// A search over `colors`, starting from `hints`, remembering answers in `cells` (``GIFScratch/cells``,
        /// emptied here).
        init(_ colors: [UInt8], hints: [UInt16], cells: UnsafeMutablePointer<UInt16>) {
            self.colors = colors
            self.hints = hints
            self.cells = cells
            cells.update(repeating: .max, count: GIFScratch.cellCount)
            var entries: [SIMD4<Int32>] = []
            for entry in 0..<(colors.count / 3) {
                let red = Int32(colors[entry * 3])
                let green = Int32(colors[entry * 3 + 1])
                let blue = Int32(colors[entry * 3 + 2])
                entries.append(SIMD4(red, green, blue, Int32(entry)))
            }
            sorted = entries.sorted { $0.y != $1.y ? $0.y < $1.y : $0.w < $1.w }
        }

        func index(_ r: Int32, _ g: Int32, _ b: Int32) -> Int {
            let cell = Int(r >> 2) << 12 | Int(g >> 2) << 6 | Int(b >> 2)
            if cells[cell] != .max { return Int(cells[cell]) }
            var best = sorted[0].w
            var bestDistance = Int32.max
            let hint = hints[GIFMedianCut.key(Int(r), Int(g), Int(b))]
            if hint != .max {
                let entry = Int(hint)
                let dr = r - Int32(colors[entry * 3])
                let dg = g - Int32(colors[entry * 3 + 1])
                let db = b - Int32(colors[entry * 3 + 2])
                (best, bestDistance) = (Int32(entry), dr * dr + dg * dg + db * db)
            }
            // Components are 0…255, so no distance overflows: wrapping arithmetic only drops the checks.
            sorted.withUnsafeBufferPointer { entries in
                let count = entries.count
                // The first position whose green is at least `g`, then outwards both ways.
                var above = 0
                var end = count
                while above < end {
                    let middle = (above + end) / 2
                    if entries[middle].y < g { above = middle + 1 } else { end = middle }
                }
                var below = above - 1
                while above < count || below >= 0 {
                    if above < count {
                        let entry = entries[above]
                        let dg = entry.y &- g
                        if dg &* dg >= bestDistance {
                            above = count
                        } else {
                            let dr = entry.x &- r
                            let db = entry.z &- b
                            let distance = dr &* dr &+ dg &* dg &+ db &* db
                            if distance < bestDistance { (best, bestDistance) = (entry.w, distance) }
                            above &+= 1
                        }
                    }
                    if below >= 0 {
                        let entry = entries[below]
                        let dg = g &- entry.y
                        if dg &* dg >= bestDistance {
                            below = -1
                        } else {
                            let dr = entry.x &- r
                            let db = entry.z &- b
                            let distance = dr &* dr &+ dg &* dg &+ db &* db
                            if distance < bestDistance { (best, bestDistance) = (entry.w, distance) }
                            below &-= 1
                        }
                    }
                }
            }
            cells[cell] = UInt16(best)
            return Int(best)
        }
    }
}
