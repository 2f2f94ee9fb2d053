import CPaletteKernel

/// The nearest entry of a colour map to a colour: squared distance in RGB, or in premultiplied RGBA with alpha
/// weighed ``GIFMedianCut/alphaWeight`` times. Opaque colours are matched to opaque entries only (all of them when
/// none is opaque), so that they stay opaque; translucent ones to any entry.
///
/// Every entry is compared, 8 at a time (`cimago_palette_nearest`: AVX2's 16-bit multiply-add, SSE2's 4 at a time
/// without it), for every colour asked: at 256 entries that measured faster than walking the entries sorted by one
/// channel and stopping early, and exact answers beat remembering one answer per cell of colours, which cost
/// palette PNGs a fifth more alpha error (BENCHMARKS.md, "The quantizer's nearest-colour search").
struct GIFNearestColor {
    /// The entries: red, green and blue bytes, then premultiplied alpha with ``withAlpha``.
    let colors: [UInt8]
    /// Whether entries and colours have alpha (four bytes an entry in ``colors``).
    let withAlpha: Bool
    /// The entries opaque colours are matched to, and those translucent colours are.
    private let opaqueEntries: Entries
    private let allEntries: Entries

    /// What alpha is multiplied by for the kernel, which weighs every component alike: the square root of
    /// ``GIFMedianCut/alphaWeight`` (2), for entries and colours both.
    private static let alphaScale = Int32(GIFMedianCut.alphaWeight.squareRoot())

    /// Entries packed for `cimago_palette_nearest`: red and green, blue and alpha × ``alphaScale`` interleaved,
    /// padded to a multiple of 16 with entries no colour is near, and each one's number.
    private final class Entries {
        let count: Int
        let rg: UnsafeMutablePointer<Int16>
        let bw: UnsafeMutablePointer<Int16>
        let numbers: UnsafeMutablePointer<Int32>

        init(_ colors: [UInt8], stride: Int, where included: (Int) -> Bool) {
            let entries = (0..<(colors.count / stride)).filter(included)
            count = max(16, (entries.count + 15) / 16 * 16)  // never empty: a search always has an answer
            rg = .allocate(capacity: 2 * count)
            bw = .allocate(capacity: 2 * count)
            numbers = .allocate(capacity: count)
            let far: Int16 = 16_383  // the kernel's largest component: no distance overflows
            rg.initialize(repeating: far, count: 2 * count)
            bw.initialize(repeating: far, count: 2 * count)
            numbers.initialize(repeating: Int32(entries.first ?? 0), count: count)
            for (position, entry) in entries.enumerated() {
                let c = entry * stride
                rg[2 * position] = Int16(colors[c])
                rg[2 * position + 1] = Int16(colors[c + 1])
                bw[2 * position] = Int16(colors[c + 2])
                bw[2 * position + 1] = stride == 4 ? Int16(Int32(colors[c + 3]) * GIFNearestColor.alphaScale) : 0
                numbers[position] = Int32(entry)
            }
        }

        deinit {
            rg.deallocate()
            bw.deallocate()
            numbers.deallocate()
        }

        /// The number of the entry nearest to (`r`, `g`, `b`, `w`), `w` the scaled alpha.
        @inline(__always)
        func nearest(_ r: Int32, _ g: Int32, _ b: Int32, _ w: Int32) -> Int {
            var distance: Int32 = 0
            return Int(numbers[cimago_palette_nearest(rg, bw, count, r, g, b, w, &distance)])
        }
    }

    /// A search over `colors` (with `withAlpha`, premultiplied RGBA).
    init(_ colors: [UInt8], withAlpha: Bool) {
        self.colors = colors
        self.withAlpha = withAlpha
        let stride = withAlpha ? 4 : 3
        allEntries = Entries(colors, stride: stride) { _ in true }
        let hasOpaque = withAlpha && (0..<(colors.count / 4)).contains { colors[$0 * 4 + 3] == 255 }
        opaqueEntries = hasOpaque ? Entries(colors, stride: stride) { colors[$0 * 4 + 3] == 255 } : allEntries
    }

    /// The entry nearest to (`r`, `g`, `b`, `a`), each 0…255 (`a` 0 without alpha).
    func index(_ r: Int32, _ g: Int32, _ b: Int32, _ a: Int32) -> Int {
        if !withAlpha { return allEntries.nearest(r, g, b, 0) }
        if a == 255 { return opaqueEntries.nearest(r, g, b, a * Self.alphaScale) }
        return allEntries.nearest(r, g, b, a * Self.alphaScale)
    }
}
