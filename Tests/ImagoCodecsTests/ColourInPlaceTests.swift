import Foundation
import ImagoCore
import Testing

@testable import ImagoCodecs

/// The colour stage of the AVIF, HEIF and JPEG XL decoders converts the decoded frames in place: it must not
/// copy a frame first (at 12 MP a copy is 48 MB and ~20 ms).
@Suite struct ColourInPlaceTests {
    /// A 64×64 frame tagged Display P3; `address` is set to the address of its pixels.
    private static func displayP3Frame(address: inout Int) throws -> DecodedWithColour {
        let icc = try #require(ColorManagement.iccProfile(cicpPrimaries: 12, transfer: 13))
        let buffer = try PixelBuffer(width: 64, height: 64, format: .rgba8) { bytes in
            for i in 0..<bytes.count { bytes[i] = i % 4 == 3 ? 255 : UInt8(truncatingIfNeeded: i * 7) }
        }
        address = buffer.withUnsafeBytes { Int(bitPattern: $0.baseAddress) }
        return (ImageContainer(image: buffer, format: .avif), EmbeddedColour(iccProfile: icc, cicp: nil))
    }

    @Test func convertingToSRGBReusesTheDecodedPixels() throws {
        // Given a decoded Display P3 frame, the same pixels as stored
        var address = 0
        var unused = 0
        let before = try Self.displayP3Frame(address: &unused).container.image.withUnsafeBytes { Array($0) }

        // When the colour stage converts it to sRGB, as the decoders call it
        let converted = try ColorManagement.applying(Self.displayP3Frame(address: &address), options: DecodingOptions())

        // Then the pixels changed, in the same memory
        let isChanged = converted.image.withUnsafeBytes { Array($0) } != before
        #expect(isChanged)
        #expect(converted.image.withUnsafeBytes { Int(bitPattern: $0.baseAddress) } == address)
    }
}
