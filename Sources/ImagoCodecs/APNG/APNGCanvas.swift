import ImagoCore

/// The canvas APNG frames are drawn on, with the state `dispose_op` needs between frames.
struct APNGCanvas {
    private(set) var pixels: PixelBuffer
    /// The region before the current frame was drawn, kept only when that frame disposes to previous.
    private var saved: PixelBuffer?

    /// A fully transparent black canvas, as the APNG specification starts it.
    init(size: PixelSize) throws {
        pixels = try PixelBuffer(width: size.width, height: size.height, format: .rgba8)
    }

    /// Draws `frame` (RGBA8 rows of the control's width, at least the control's height) at the control's region
    /// with its blend op, keeping the canvas first when the frame disposes to previous.
    mutating func draw(_ frame: [UInt8], control: APNGFrameControl) {
        saved = control.dispose == .previous ? pixels : nil
        let canvasRow = pixels.bytesPerRow
        let frameRow = control.width * 4
        frame.withUnsafeBytes { source in
            pixels.withUnsafeMutableBytes { canvas in
                guard let src = source.baseAddress, let dst = canvas.baseAddress else { return }
                for row in 0..<control.height {
                    let s = src + row * frameRow
                    let d = dst + (control.y + row) * canvasRow + control.x * 4
                    if control.blend == .source {
                        d.copyMemory(from: s, byteCount: frameRow)
                    } else {
                        Self.blendOver(
                            s.assumingMemoryBound(to: UInt8.self), d.assumingMemoryBound(to: UInt8.self),
                            count: control.width)
                    }
                }
            }
        }
    }

    /// Applies the frame's `dispose_op` once it has been shown.
    mutating func dispose(_ control: APNGFrameControl) {
        switch control.dispose {
        case .none: break
        case .previous where saved != nil:
            if let saved { pixels = saved }
        case .background, .previous:  // previous without a saved canvas: the first frame
            let canvasRow = pixels.bytesPerRow
            pixels.withUnsafeMutableBytes { canvas in
                guard let dst = canvas.baseAddress else { return }
                for row in 0..<control.height {
                    (dst + (control.y + row) * canvasRow + control.x * 4).initializeMemory(
                        as: UInt8.self, repeating: 0, count: control.width * 4)
                }
            }
        }
        saved = nil
    }

    /// Straight-alpha "over" in integers, as APNG Disassembler (the references' arithmetic) does it: an opaque
    /// source replaces, a transparent one leaves the canvas, over a transparent canvas the source is copied, and
    /// otherwise colour is the alpha-weighted mean and alpha `sa + (1 − sa) da`.
    @inline(__always)
    private static func blendOver(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, count: Int) {
        for i in 0..<count {
            let p = i * 4
            let sa = UInt32(s[p + 3])
            if sa == 255 || (sa != 0 && d[p + 3] == 0) {
                d[p] = s[p]
                d[p + 1] = s[p + 1]
                d[p + 2] = s[p + 2]
                d[p + 3] = s[p + 3]
            } else if sa != 0 {
                let u = sa * 255
                let v = (255 - sa) * UInt32(d[p + 3])
                let total = u + v
                d[p] = UInt8((UInt32(s[p]) * u + UInt32(d[p]) * v) / total)
                d[p + 1] = UInt8((UInt32(s[p + 1]) * u + UInt32(d[p + 1]) * v) / total)
                d[p + 2] = UInt8((UInt32(s[p + 2]) * u + UInt32(d[p + 2]) * v) / total)
                d[p + 3] = UInt8(total / 255)
            }
        }
    }
}
