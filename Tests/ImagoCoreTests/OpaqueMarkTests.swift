import Testing

@testable import ImagoCore

/// `isKnownOpaque`: set by `assumingOpaque()`, kept by transforms that leave alpha alone, dropped by any write.
@Suite struct OpaqueMarkTests {
    func opaqueImage() throws -> PixelBuffer {
        try PixelBuffer(width: 4, height: 3, format: .rgba8, bytes: (0..<48).map { $0 % 4 == 3 ? 255 : UInt8($0) })
    }

    @Test func freshBuffersAreNotKnownOpaqueUntilMarked() throws {
        let image = try opaqueImage()
        #expect(!image.isKnownOpaque)
        #expect(!image.hasTransparency)  // scanned
        #expect(image.assumingOpaque().isKnownOpaque)
        #expect(try PixelBuffer(width: 2, height: 2, format: .gray8).isKnownOpaque)  // gray has no alpha
    }

    @Test func writesDropTheMark() throws {
        // Given a marked buffer
        var viaBytes = try opaqueImage().assumingOpaque()
        var viaSubscript = viaBytes
        // When its bytes are written, through the raw pointer or the pixel subscript
        viaBytes.withUnsafeMutableBytes { $0[3] = 0 }
        viaSubscript[pixel: 0, 0] = RGBA(r: 1, g: 2, b: 3, a: 4)
        // Then it is no longer known to be opaque, and the scan finds the transparent pixel
        #expect(!viaBytes.isKnownOpaque && viaBytes.hasTransparency)
        #expect(!viaSubscript.isKnownOpaque && viaSubscript.hasTransparency)
    }

    @Test func alphaPreservingTransformsKeepTheMark() throws {
        let marked = try opaqueImage().assumingOpaque()
        #expect(marked.oriented(.right).isKnownOpaque)
        #expect(marked.cropped(x: 1, y: 1, width: 2, height: 2).isKnownOpaque)
        #expect(try marked.resampled(to: PixelSize(width: 2, height: 2)).isKnownOpaque)
        #expect(try PixelBuffer(width: 2, height: 1, format: .gray8, bytes: [1, 2]).convertedToRGBA().isKnownOpaque)
        // Tint rewrites bytes: conservative, the mark goes
        #expect(
            try !ImageProcessors.Tint(color: RGBA(r: 9, g: 9, b: 9), blend: .multiply).process(marked).isKnownOpaque)
    }

    @Test func theMarkIsNotPartOfEquality() throws {
        let plain = try opaqueImage()
        let marked = plain.assumingOpaque()
        #expect(plain == marked)
        #expect(plain.hashValue == marked.hashValue)
    }
}
