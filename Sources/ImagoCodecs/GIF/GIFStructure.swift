/// A cheap walk over a GIF's block structure (no LZW decoding) so that the frame budget can be checked before any
/// pixel is allocated: a tiny file declaring a large screen and many frames is rejected up front instead of after
/// the animation byte budget has been spent.
enum GIFStructure {
    /// The number of image descriptors in `bytes`, counting at most `limit + 1` (stops at the trailer, at damaged
    /// structure, or at the end of the data).
    static func frameCount(in bytes: UnsafeRawBufferPointer, limit: Int) -> Int {
        frameDelays(in: bytes, limit: min(limit, Int.max - 1) + 1).count
    }

    /// Each image's delay in 1/100 s, from the graphics control extension before it (0 without one), for at most
    /// `limit` images: what an on-demand decoder reports as durations without decoding.
    static func frameDelays(in bytes: UnsafeRawBufferPointer, limit: Int) -> [Int] {
        let n = bytes.count
        guard n >= 13 else { return [] }
        var i = 13
        let flags = bytes[10]
        if flags & 0x80 != 0 { i += 3 * (2 << Int(flags & 7)) }
        var delays: [Int] = []
        var pending = 0
        func skipSubBlocks(_ i: inout Int) {
            while i < n, bytes[i] != 0 { i += Int(bytes[i]) + 1 }
            i += 1
        }
        while i < n, delays.count < limit {
            switch bytes[i] {
            case 0x21:
                // A graphics control extension: 21 F9 04 packed delay-lo delay-hi transparent 00.
                if i + 6 < n, bytes[i + 1] == 0xF9, bytes[i + 2] >= 4 {
                    pending = Int(bytes[i + 4]) | Int(bytes[i + 5]) << 8
                }
                i += 2
                skipSubBlocks(&i)
            case 0x2C:
                guard i + 10 <= n else { return delays }
                let local = bytes[i + 9]
                i += 10
                if local & 0x80 != 0 { i += 3 * (2 << Int(local & 7)) }
                i += 1
                guard i <= n else { return delays }
                skipSubBlocks(&i)
                delays.append(pending)
                pending = 0
            default:
                return delays
            }
        }
        return delays
    }
}
