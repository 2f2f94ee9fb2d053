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
/// Deterministic: the same pixels give the same bytes. `PNGEncoder` uses it too, for palette PNGs, where
/// ``translucent(_:width:height:maximumColors:)`` also quantizes partial alpha.
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
        let region = Region(
            canvas: canvas, canvasWidth: canvasWidth, rect: rect, drawn: drawn, scratch: scratch, withAlpha: false)
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

    /// `pixels` (straight RGBA, `width × height`) as one index a pixel into at most `maximumColors` (2…256)
    /// colours `0xRRGGBBAA` (straight): a median cut of the premultiplied colours (``GIFMedianCut``), partial
    /// alpha included, the pixels dithered onto it in all four channels; fully transparent pixels share one entry,
    /// the last. Opaque pixels get opaque entries, so they stay opaque; `nil` when that cannot be (one entry for
    /// both opaque and translucent pixels). For palette PNGs of images whose soft edges have more colours than the
    /// palette holds (pngquant's and imgproxy's case).
    static func translucent(
        _ pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int, maximumColors: Int
    ) -> (indices: [UInt8], colours: [UInt32])? {
        let area = width * height
        var drawn = [UInt8](repeating: 1, count: area)
        var drawnCount = area
        var opaque = false
        for i in 0..<area {
            let alpha = pixels[i * 4 + 3]
            if alpha == 0 {
                drawn[i] = 0
                drawnCount -= 1
            } else if alpha == 255 {
                opaque = true
            }
        }
        let maximumColors = min(256, max(2, maximumColors))
        let capacity = drawnCount < area ? maximumColors - 1 : maximumColors
        // Opaque pixels keep opaque entries of their own: with one entry for both kinds, no palette can.
        if capacity < 2, opaque { return nil }
        let rect = GIFRect(x: 0, y: 0, width: width, height: height)
        let region = Region(
            canvas: pixels, canvasWidth: width, rect: rect, drawn: drawn, scratch: GIFScratch(withAlpha: true),
            withAlpha: true)
        var frame = region.dithered(capacity: capacity, drawnCount: drawnCount)
        var colours = (0..<(frame.colors.count / 4)).map { entry -> UInt32 in
            let c = frame.colors[(entry * 4)..<(entry * 4 + 4)].map { UInt32($0) }
            let a = c[3]
            func straight(_ value: UInt32) -> UInt32 { min(255, (value * 255 + a / 2) / a) }
            return straight(c[0]) << 24 | straight(c[1]) << 16 | straight(c[2]) << 8 | a
        }
        if drawnCount < area {
            for i in 0..<area where drawn[i] == 0 { frame.indices[i] = UInt8(colours.count) }
            colours.append(0)
        }
        return (frame.indices, colours)
    }

    /// The pixels being indexed.
    private struct Region {
        let canvas: UnsafeBufferPointer<UInt8>
        let canvasWidth: Int
        let rect: GIFRect
        let drawn: [UInt8]
        let scratch: GIFScratch
        /// Whether colours are premultiplied RGBA (four bytes an entry) rather than RGB.
        let withAlpha: Bool

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
            var cut = GIFMedianCut(
                bins: GIFMedianCut.histogram(canvas, offsets: offsets, withAlpha: withAlpha, scratch: scratch))
            var (colors, entryOfBin) = cut.palette(capacity: capacity, withAlpha: withAlpha)
            if withAlpha { colors = refined(colors, entryOfBin: entryOfBin, bins: cut.bins, passes: 2) }
            let indices = diffuse(onto: GIFNearestColor(colors, withAlpha: withAlpha))
            return GIFIndexedFrame(rect: rect, indices: indices, colors: colors, transparentIndex: nil)
        }

        /// `colors` (premultiplied RGBA) moved by k-means passes over the histogram, as pngquant refines its
        /// median cut: each bin goes to its nearest entry of its own kind (opaque or translucent), and each entry
        /// becomes the mean of its bins' pixels. `entryOfBin` is each bin's entry in `colors`, by position in `bins`.
        private func refined(
            _ colors: [UInt8], entryOfBin: [UInt16], bins: [GIFMedianCut.Bin], passes: Int
        ) -> [UInt8] {
            var (colors, hints) = (colors, entryOfBin)
            for _ in 0..<passes {
                let nearest = GIFNearestColor(colors, withAlpha: true)
                var totals = [GIFMedianCut.Bin](repeating: GIFMedianCut.Bin(key: -1), count: colors.count / 4)
                for (position, bin) in bins.enumerated() {
                    var entry = nearest.index(
                        Int32(bin.mean(0)), Int32(bin.mean(1)), Int32(bin.mean(2)), Int32(bin.mean(3)))
                    // A translucent bin stays with its entry rather than make an opaque one translucent.
                    if bin.key >= 1 << 15, colors[entry * 4 + 3] == 255 { entry = Int(hints[position]) }
                    hints[position] = UInt16(entry)
                    totals[entry].add(bin)
                }
                for (entry, total) in totals.enumerated() where total.count > 0 {
                    for channel in 0..<4 { colors[entry * 4 + channel] = UInt8(total.mean(channel)) }
                }
            }
            return colors
        }

        /// The index of every drawn pixel after Floyd–Steinberg error diffusion onto `colors` (in premultiplied
        /// RGBA with ``withAlpha``), rows in serpentine order.
        private func diffuse(onto nearest: GIFNearestColor) -> [UInt8] {
            let colors = nearest.colors
            let stride = withAlpha ? 4 : 3
            let width = rect.width
            var indices = [UInt8](repeating: 0, count: width * rect.height)
            // Errors ×16 for the row being mapped and the next, one pixel of margin each side.
            var current = [Int32](repeating: 0, count: (width + 2) * 4)
            var next = current
            for y in 0..<rect.height {
                let step = y & 1 == 0 ? 1 : -1
                var x = step == 1 ? 0 : width - 1
                for _ in 0..<width {
                    defer { x += step }
                    guard drawn[y * width + x] != 0 else { continue }
                    let p = offset(x, y)
                    let e = (x + 1) * 4
                    let ahead = e + step * 4
                    let behind = e - step * 4
                    var (r, g, b) = (Int32(canvas[p]), Int32(canvas[p + 1]), Int32(canvas[p + 2]))
                    var a: Int32 = 0
                    if withAlpha {
                        // Opaque pixels stay opaque: their alpha takes no error (and, matched to an opaque
                        // entry, gives none).
                        a = Int32(canvas[p + 3])
                        if a < 255 {
                            (r, g, b) = (
                                GIFMedianCut.premultiplied(r, a), GIFMedianCut.premultiplied(g, a),
                                GIFMedianCut.premultiplied(b, a)
                            )
                            a = min(254, max(1, a + current[e + 3] / 16))
                        }
                    }
                    r = min(255, max(0, r + current[e] / 16))
                    g = min(255, max(0, g + current[e + 1] / 16))
                    b = min(255, max(0, b + current[e + 2] / 16))
                    let index = nearest.index(r, g, b, a)
                    indices[y * width + x] = UInt8(index)
                    let c = index * stride
                    GIFQuantizer.spread(r - Int32(colors[c]), at: e, ahead: ahead, behind: behind, &current, &next)
                    GIFQuantizer.spread(
                        g - Int32(colors[c + 1]), at: e + 1, ahead: ahead + 1, behind: behind + 1, &current, &next)
                    GIFQuantizer.spread(
                        b - Int32(colors[c + 2]), at: e + 2, ahead: ahead + 2, behind: behind + 2, &current, &next)
                    if withAlpha {
                        GIFQuantizer.spread(
                            a - Int32(colors[c + 3]), at: e + 3, ahead: ahead + 3, behind: behind + 3, &current,
                            &next)
                    }
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
}
