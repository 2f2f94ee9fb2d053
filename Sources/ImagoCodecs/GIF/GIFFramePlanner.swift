import ImagoCore

/// Decides how each canvas of an animation is written so that the frames, drawn in turn as browsers draw them,
/// show those canvases, and each frame holds only what changed.
///
/// - A canvas is *opaque* where its alpha is at least 128 and *transparent* elsewhere (GIF has no partial
///   alpha); opaque pixels keep their colour, alpha dropped.
/// - The first frame, and a frame after one that is cleared, draws the bounding box of its opaque pixels.
/// - Otherwise the frame before stays (disposal *keep*) and the frame draws the bounding box of the pixels
///   that changed, unchanged pixels inside it transparent (which also compresses better).
/// - When a pixel opaque in one canvas is transparent in the next, keeping cannot show that: the frame before
///   is then cleared (disposal *clear*), its rectangle first widened (with transparent pixels) to every opaque
///   pixel on screen, since only its own rectangle is cleared.
///
/// So a frame's disposal is known only once the next canvas is, and the planner holds one frame back.
struct GIFFramePlanner {
    /// The canvas size.
    let width: Int
    let height: Int
    /// Whether every frame gets a transparent entry (animations: any frame may need to draw nothing somewhere).
    let reservesTransparency: Bool
    private var previous: PixelBuffer?
    private var previousOpaqueBounds: GIFRect?
    private var pending: GIFIndexedFrame?
    /// The quantizer's tables, reused frame to frame.
    private let scratch: GIFScratch

    init(size: PixelSize, reservesTransparency: Bool, scratch: GIFScratch) {
        self.scratch = scratch
        (width, height) = (size.width, size.height)
        self.reservesTransparency = reservesTransparency
    }

    /// Adds the next canvas (RGBA, straight, the canvas size), shown for `delay` hundredths of a second.
    /// Returns the frame before it, now complete, if there is one.
    mutating func add(_ canvas: PixelBuffer, delay: Int) -> GIFIndexedFrame? {
        // Per pixel: bit 0, opaque now; bit 1, differs from the canvas before.
        var marks = [UInt8](repeating: 0, count: width * height)
        var opaque = BoundingBox()
        var changed = BoundingBox()
        var clears = false
        canvas.withUnsafeBytes { now in
            func scan(_ before: UnsafeRawBufferPointer?) {
                for y in 0..<height {
                    for x in 0..<width {
                        let i = y * width + x
                        let p = i * 4
                        let isOpaque = now[p + 3] >= 128
                        var mark: UInt8 = isOpaque ? 1 : 0
                        if isOpaque { opaque.add(x, y) }
                        if let before {
                            let wasOpaque = before[p + 3] >= 128
                            if wasOpaque && !isOpaque { clears = true }
                            if isOpaque
                                && (!wasOpaque || now[p] != before[p] || now[p + 1] != before[p + 1]
                                    || now[p + 2] != before[p + 2])
                            {
                                mark |= 2
                                changed.add(x, y)
                            }
                        }
                        marks[i] = mark
                    }
                }
            }
            if let previous { previous.withUnsafeBytes { scan($0) } } else { scan(nil) }
        }

        var completed = pending
        let drawnBit: UInt8
        let rect: GIFRect
        if previous == nil || clears {
            drawnBit = 1
            rect = opaque.rect ?? GIFRect(x: 0, y: 0, width: 1, height: 1)
            if clears, var before = completed, let shown = previousOpaqueBounds {
                before.disposal = .clear
                completed = before.expanded(to: before.rect.union(shown))
            }
        } else {
            drawnBit = 2
            rect = changed.rect ?? GIFRect(x: 0, y: 0, width: 1, height: 1)
        }
        var drawn = [UInt8](repeating: 0, count: rect.width * rect.height)
        for y in 0..<rect.height {
            for x in 0..<rect.width where marks[(rect.y + y) * width + rect.x + x] & drawnBit != 0 {
                drawn[y * rect.width + x] = 1
            }
        }
        var frame = canvas.withUnsafeBytes { bytes in
            GIFQuantizer.frame(
                of: bytes.bindMemory(to: UInt8.self), canvasWidth: width, rect: rect, drawn: drawn,
                reservesTransparency: reservesTransparency, scratch: scratch)
        }
        frame.delay = delay
        pending = frame
        previous = canvas
        previousOpaqueBounds = opaque.rect
        return completed
    }

    /// The last frame (disposal *keep*), once every canvas is added.
    mutating func finish() -> GIFIndexedFrame? {
        defer { pending = nil }
        return pending
    }

    /// The smallest rectangle holding the pixels added.
    private struct BoundingBox {
        private var minX = Int.max
        private var minY = Int.max
        private var maxX = -1
        private var maxY = -1

        mutating func add(_ x: Int, _ y: Int) {
            minX = min(minX, x)
            maxX = max(maxX, x)
            minY = min(minY, y)
            maxY = max(maxY, y)
        }

        /// `nil` when no pixel was added.
        var rect: GIFRect? {
            maxX < 0 ? nil : GIFRect(x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1)
        }
    }
}
