import Foundation
import Testing

@testable import ImagoCore

@Suite struct ExifReaderTests {
    /// A TIFF block whose IFD0 has `entries` (tag, type, count, value bytes), in the chosen byte order.
    func tiff(bigEndian: Bool, ifdOffset: UInt32 = 8, entries: [(UInt16, UInt16, UInt32, UInt16)]) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] {
            bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)]
        }
        func u32(_ v: UInt32) -> [UInt8] {
            let be = [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
            return bigEndian ? be : be.reversed()
        }
        var b: [UInt8] = (bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + u16(42) + u32(ifdOffset)
        b += u16(UInt16(entries.count))
        for (tag, type, count, value) in entries { b += u16(tag) + u16(type) + u32(count) + u16(value) + [0, 0] }
        return b + u32(0)
    }

    @Test(arguments: [true, false])
    func readsOrientationInEitherByteOrder(bigEndian: Bool) {
        // Given IFD0 with two other tags before the orientation (8 = rotate counter-clockwise)
        let block = tiff(
            bigEndian: bigEndian,
            entries: [(0x010F, 2, 4, 0x4142), (0x011A, 5, 1, 0), (0x0112, 3, 1, 8)])
        // Then the orientation is found, with or without the JPEG "Exif\0\0" prefix
        #expect(ExifReader.orientation(in: block) == .left)
        #expect(ExifReader.orientation(in: Array("Exif".utf8) + [0, 0] + block) == .left)
        #expect(ExifReader.orientation(in: Data(block)) == .left)
    }

    @Test func missingOrOutOfRangeOrientationIsNil() {
        #expect(ExifReader.orientation(in: tiff(bigEndian: true, entries: [(0x010F, 2, 4, 0x4142)])) == nil)
        #expect(ExifReader.orientation(in: tiff(bigEndian: true, entries: [])) == nil)
        #expect(ExifReader.orientation(in: tiff(bigEndian: true, entries: [(0x0112, 3, 1, 0)])) == nil)
        #expect(ExifReader.orientation(in: tiff(bigEndian: true, entries: [(0x0112, 3, 1, 9)])) == nil)
        // a wrong type (ASCII) is not trusted
        #expect(ExifReader.orientation(in: tiff(bigEndian: true, entries: [(0x0112, 2, 1, 6)])) == nil)
    }

    @Test func malformedBlocksAreNilNotACrash() {
        let good = tiff(bigEndian: false, entries: [(0x0112, 3, 1, 6)])
        #expect(ExifReader.orientation(in: good) == .right)
        // IFD offset beyond the data, inside the header, or at the very end
        #expect(
            ExifReader.orientation(in: tiff(bigEndian: false, ifdOffset: 5000, entries: [(0x0112, 3, 1, 6)])) == nil)
        #expect(ExifReader.orientation(in: tiff(bigEndian: false, ifdOffset: 2, entries: [(0x0112, 3, 1, 6)])) == nil)
        #expect(
            ExifReader.orientation(in: tiff(bigEndian: false, ifdOffset: UInt32(good.count - 1), entries: [])) == nil)
        #expect(ExifReader.orientation(in: tiff(bigEndian: false, ifdOffset: UInt32.max, entries: [])) == nil)
        // an entry count far larger than the data: only the entries present are read
        var lying = good
        lying[8] = 0xFF
        lying[9] = 0xFF
        #expect(ExifReader.orientation(in: lying) == .right)
        // every truncation of a valid block, a wrong magic number, a wrong byte-order mark, nothing at all
        for n in 0..<good.count { _ = ExifReader.orientation(in: Array(good.prefix(n))) }
        #expect(ExifReader.orientation(in: Array(good.prefix(good.count - 8))) == nil)
        var badMagic = good
        badMagic[2] = 43
        #expect(ExifReader.orientation(in: badMagic) == nil)
        #expect(ExifReader.orientation(in: [0x4D, 0x49] + good.dropFirst(2)) == nil)
        #expect(ExifReader.orientation(in: [UInt8]()) == nil)
        #expect(ExifReader.orientation(in: Array("Exif".utf8) + [0, 0]) == nil)
    }

    @Test func randomBytesNeverCrash() {
        // Given a deterministic generator, 5,000 random blocks with a valid header and garbage after it
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt8 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        for i in 0..<5_000 {
            let header: [UInt8] = i % 2 == 0 ? [0x4D, 0x4D, 0, 42, 0, 0, 0, 8] : [0x49, 0x49, 42, 0, 8, 0, 0, 0]
            let block = header + (0..<(i % 64)).map { _ in next() }
            // Then no read goes out of bounds (the test process would trap), whatever the answer
            _ = ExifReader.orientation(in: block)
        }
    }
}
