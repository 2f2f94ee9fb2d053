import CGIF
import ImagoCore

/// A frame's rectangle on the logical screen, as the image descriptor states it (may reach outside).
struct GIFRect: Equatable {
    var x: Int
    var y: Int
    var width: Int
    var height: Int

    /// The part inside a `width × height` canvas (possibly empty).
    func clipped(width canvasWidth: Int, height canvasHeight: Int) -> GIFRect {
        let left = max(0, min(x, canvasWidth))
        let top = max(0, min(y, canvasHeight))
        let right = max(left, min(x + width, canvasWidth))
        let bottom = max(top, min(y + height, canvasHeight))
        return GIFRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// The smallest rectangle holding both.
    func union(_ other: GIFRect) -> GIFRect {
        let left = min(x, other.x)
        let top = min(y, other.y)
        let right = max(x + width, other.x + other.width)
        let bottom = max(y + height, other.y + other.height)
        return GIFRect(x: left, y: top, width: right - left, height: bottom - top)
    }
}

/// The logical screen frames are drawn onto, with the disposal state between frames.
struct GIFCanvas {
    private(set) var pixels: PixelBuffer
    /// The previous frame's disposal and clipped rectangle, applied when the next frame begins.
    private var pendingDisposal: (mode: Int, rect: GIFRect)?
    /// The canvas before the previous frame was drawn, kept only when that frame restores to previous.
    private var saved: PixelBuffer?

    /// A fully transparent canvas (browsers ignore the background colour).
    init(width: Int, height: Int) throws {
        pixels = try PixelBuffer(width: width, height: height, format: .rgba8)
    }

    /// Applies the previous frame's disposal, then prepares for a frame at `rect` disposed with `disposal`.
    mutating func beginFrame(_ rect: GIFRect, disposal: Int) {
        if let pending = pendingDisposal {
            switch pending.mode {
            case 2: clear(pending.rect)
            case 3: if let saved { pixels = saved }
            default: break
            }
        }
        saved = disposal == 3 ? pixels : nil
        pendingDisposal = (disposal, rect.clipped(width: pixels.width, height: pixels.height))
    }

    private mutating func clear(_ rect: GIFRect) {
        guard rect.width > 0 && rect.height > 0 else { return }
        let bytesPerRow = pixels.bytesPerRow
        pixels.withUnsafeMutableBytes { raw in
            for y in rect.y..<(rect.y + rect.height) {
                let start = y * bytesPerRow + rect.x * 4
                UnsafeMutableRawBufferPointer(rebasing: raw[start..<(start + rect.width * 4)]).initializeMemory(
                    as: UInt8.self, repeating: 0)
            }
        }
    }

    /// Draws one line of palette indices: the frame's row `frameRow`, clipped to the canvas; the transparent
    /// index leaves the canvas as it is.
    mutating func draw(row indices: UnsafeBufferPointer<UInt8>, frameRow: Int, of rect: GIFRect, palette: GIFPalette) {
        let y = rect.y + frameRow
        guard frameRow < rect.height, y >= 0, y < pixels.height else { return }
        let firstX = max(0, -rect.x)
        let lastX = min(rect.width, pixels.width - rect.x)
        guard firstX < lastX else { return }
        let rowStart = y * pixels.bytesPerRow
        palette.colors.withUnsafeBufferPointer { colors in
            pixels.withUnsafeMutableBytes { raw in
                guard let start = raw.baseAddress else { return }
                let base = start + rowStart
                for x in firstX..<lastX {
                    let index = Int(indices[x])
                    if index == palette.transparentIndex { continue }
                    base.storeBytes(of: colors[index], toByteOffset: (rect.x + x) * 4, as: UInt32.self)
                }
            }
        }
    }
}

/// 256 colours as packed RGBA words (bytes R, G, B, A in memory), from a giflib colour map.
struct GIFPalette {
    let colors: [UInt32]
    /// The index that is not drawn, or -1.
    let transparentIndex: Int

    /// Indices past the map's size are opaque black; without any map the palette is a grey ramp.
    init(_ map: UnsafeMutablePointer<ColorMapObject>?, transparentIndex: Int?) {
        var colors = [UInt32](repeating: Self.pack(0, 0, 0), count: 256)
        if let map, let entries = map.pointee.Colors {
            for i in 0..<min(256, max(0, Int(map.pointee.ColorCount))) {
                colors[i] = Self.pack(entries[i].Red, entries[i].Green, entries[i].Blue)
            }
        } else {
            for i in 0..<256 { colors[i] = Self.pack(UInt8(i), UInt8(i), UInt8(i)) }
        }
        self.colors = colors
        self.transparentIndex = transparentIndex ?? -1
    }

    private static func pack(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> UInt32 {
        (UInt32(r) | UInt32(g) << 8 | UInt32(b) << 16 | 0xFF00_0000).littleEndian
    }
}
