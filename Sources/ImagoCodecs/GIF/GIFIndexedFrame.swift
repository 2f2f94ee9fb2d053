/// One frame as it is written: a rectangle of the canvas as colour-map indices, with its colour map, the index
/// that leaves the canvas as it is, its delay and what happens to its rectangle after it is shown.
struct GIFIndexedFrame {
    /// What the decoder does with the frame's rectangle before drawing the next frame.
    enum Disposal: Int32 {
        /// The pixels stay: the next frame draws over them (giflib's `DISPOSE_DO_NOT`).
        case keep = 1
        /// The rectangle is cleared to transparent (`DISPOSE_BACKGROUND`, as browsers show it).
        case clear = 2
    }

    /// Where the frame is drawn.
    var rect: GIFRect
    /// `rect.width × rect.height` indices into ``colors``, rows top to bottom.
    var indices: [UInt8]
    /// The colour map: red, green, blue, three bytes an entry, at most 256 entries (the transparent one
    /// included).
    var colors: [UInt8]
    /// The entry that draws nothing, if the frame has one.
    var transparentIndex: Int?
    /// How long the frame shows, in hundredths of a second.
    var delay = 0
    /// What happens to ``rect`` after the frame shows; decided when the next frame is known.
    var disposal = Disposal.keep

    /// The number of colour-map entries.
    var colorCount: Int { colors.count / 3 }

    /// The frame drawn over `larger` (which holds ``rect``): the new pixels are transparent, so the picture is
    /// the same. Used to widen the rectangle a ``Disposal/clear`` clears. Needs ``transparentIndex``.
    func expanded(to larger: GIFRect) -> GIFIndexedFrame {
        guard larger != rect, let transparentIndex else { return self }
        var grown = [UInt8](repeating: UInt8(transparentIndex), count: larger.width * larger.height)
        let dx = rect.x - larger.x
        for y in 0..<rect.height {
            let from = y * rect.width
            let to = (y + rect.y - larger.y) * larger.width + dx
            grown[to..<(to + rect.width)] = indices[from..<(from + rect.width)]
        }
        var frame = self
        frame.rect = larger
        frame.indices = grown
        return frame
    }
}
