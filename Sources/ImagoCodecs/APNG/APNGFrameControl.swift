import ImagoCore

/// One `fcTL` chunk: where a frame goes on the canvas, how long it shows and how it is drawn and cleared.
struct APNGFrameControl {
    /// What happens to the frame's region after it has been shown (`dispose_op`).
    enum Dispose: UInt8 {
        /// Left as drawn.
        case none = 0
        /// Cleared to transparent black.
        case background = 1
        /// Restored to what it was before the frame was drawn.
        case previous = 2
    }

    /// How the frame's pixels meet the canvas (`blend_op`).
    enum Blend: UInt8 {
        /// Replace the region, alpha included.
        case source = 0
        /// Composite over the region (straight alpha, the APNG specification's "over").
        case over = 1
    }

    var width: Int
    var height: Int
    var x: Int
    var y: Int
    var delayNumerator: Int
    var delayDenominator: Int
    var dispose: Dispose
    var blend: Blend

    /// How long the frame shows: `delay_num / delay_den` seconds, a zero denominator meaning 1/100 s units; a
    /// zero numerator is a zero duration (players then pick their own minimum, as they do for GIF).
    var duration: Duration {
        let denominator = delayDenominator == 0 ? 100 : delayDenominator
        return .seconds(delayNumerator) / denominator
    }

    /// Reads the 26-byte payload (after the sequence number has been checked by the caller); `nil` when an op is
    /// out of range.
    init?(payload b: UnsafeRawBufferPointer) {
        guard b.count >= 26 else { return nil }
        width = Int(BigEndian.u32(b, at: 4))
        height = Int(BigEndian.u32(b, at: 8))
        x = Int(BigEndian.u32(b, at: 12))
        y = Int(BigEndian.u32(b, at: 16))
        delayNumerator = Int(BigEndian.read(b, at: 20, as: UInt16.self))
        delayDenominator = Int(BigEndian.read(b, at: 22, as: UInt16.self))
        guard let dispose = Dispose(rawValue: b[24]), let blend = Blend(rawValue: b[25]) else { return nil }
        self.dispose = dispose
        self.blend = blend
    }

    /// Whether the region is non-empty and lies inside a `canvas`-sized canvas (the APNG specification requires
    /// both; values are at most 2^32 − 1, so the sums cannot overflow).
    func fits(in canvas: PixelSize) -> Bool {
        width > 0 && height > 0 && x + width <= canvas.width && y + height <= canvas.height
    }
}
