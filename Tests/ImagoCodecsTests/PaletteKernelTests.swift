import CPaletteKernel
import Testing

/// `cimago_palette_nearest` (the widest kernel this CPU runs: AVX2 or SSE2 on x86-64), its SSE2 kernel and its
/// plain C loop against a Swift reference, over random colour maps of every size the quantizer makes and random
/// colours.
struct PaletteKernelTests {
    /// A colour map of `count` random entries packed as the kernel takes it (red/green and blue/scaled-alpha
    /// pairs, padded with far entries to a multiple of 16), from a fixed seed.
    static func entries(_ count: Int, seed: UInt64) -> (rg: [Int16], bw: [Int16], padded: Int) {
        var state = seed
        func next() -> Int16 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int16((state >> 33) % 256)
        }
        let padded = (count + 15) / 16 * 16
        var rg = [Int16](repeating: 16_383, count: 2 * padded)
        var bw = rg
        for i in 0..<count {
            (rg[2 * i], rg[2 * i + 1], bw[2 * i], bw[2 * i + 1]) = (next(), next(), next(), next() * 2)
        }
        // Some duplicates, so that ties between equally near entries are exercised.
        if count > 4 {
            rg[2 * (count - 1)] = rg[0]
            rg[2 * (count - 1) + 1] = rg[1]
            bw[2 * (count - 1)] = bw[0]
            bw[2 * (count - 1) + 1] = bw[1]
        }
        return (rg, bw, padded)
    }

    @Test(arguments: [1, 2, 7, 16, 17, 64, 100, 255, 256])
    func theKernelFindsTheFirstNearestEntryAsTheScalarLoopDoes(count: Int) {
        let (rg, bw, padded) = Self.entries(count, seed: UInt64(count))
        var state: UInt64 = 99
        for _ in 0..<4_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let (r, g, b) = (Int32(state >> 56), Int32((state >> 48) & 255), Int32((state >> 40) & 255))
            let w = Int32((state >> 32) & 255) * 2
            var distances: [Int32] = [-1, -1, -1]
            let found = [
                cimago_palette_nearest(rg, bw, padded, r, g, b, w, &distances[0]),
                cimago_palette_nearest_sse2(rg, bw, padded, r, g, b, w, &distances[1]),
                cimago_palette_nearest_scalar(rg, bw, padded, r, g, b, w, &distances[2]),
            ]
            // The Swift reference: the first entry of the least distance, never a padding entry.
            var best = 0
            var least = Int32.max
            for i in 0..<count {
                let (dr, dg) = (Int32(rg[2 * i]) - r, Int32(rg[2 * i + 1]) - g)
                let (db, dw) = (Int32(bw[2 * i]) - b, Int32(bw[2 * i + 1]) - w)
                let distance = dr * dr + dg * dg + db * db + dw * dw
                if distance < least { (best, least) = (i, distance) }
            }
            #expect(found == [best, best, best], "colour \(r),\(g),\(b),\(w)")
            #expect(distances == [least, least, least])
        }
    }
}
