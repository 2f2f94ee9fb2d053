import Foundation
import Testing

@testable import ImagoCore

@Suite("BigEndian: the one reader and writer of big-endian integers")
struct BigEndianTests {
    @Test func readsAtAnOffsetOfEveryKindOfByteCollection() {
        let bytes: [UInt8] = [0xAA, 0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0]
        #expect(BigEndian.u32(bytes, at: 1) == 0x1234_5678)
        #expect(BigEndian.u32(bytes, at: 5) == 0x9ABC_DEF0)
        // Slices keep their parent's indices: the offset is an index, not a distance from the start
        #expect(BigEndian.u32(bytes[3...], at: 3) == 0x5678_9ABC)
        let data = Data(bytes)
        #expect(BigEndian.u32(data.dropFirst(2), at: 2) == 0x3456_789A)
        bytes.withUnsafeBytes { raw in
            #expect(BigEndian.u32(raw, at: 0) == 0xAA12_3456)
            #expect(BigEndian.read(raw, at: 1, as: UInt64.self) == 0x1234_5678_9ABC_DEF0)
            #expect(BigEndian.read(raw, at: 1, size: 3, as: UInt64.self) == 0x12_3456)
            #expect(BigEndian.read(raw, at: 8, as: UInt8.self) == 0xF0)
            #expect(BigEndian.read(raw, at: 2, size: 0, as: UInt32.self) == 0)
        }
    }

    @Test func writesTheLastBytesOfAValueAndExtendsPastItsWidth() {
        #expect(BigEndian.bytes(UInt32(0x1234_5678)) == [0x12, 0x34, 0x56, 0x78])
        #expect(BigEndian.bytes(UInt16(0xBEEF)) == [0xBE, 0xEF])
        #expect(BigEndian.bytes(UInt32(0x1234_5678), size: 2) == [0x56, 0x78])
        #expect(BigEndian.bytes(UInt32(0x1234), size: 6) == [0, 0, 0, 0, 0x12, 0x34])
        #expect(BigEndian.bytes(Int32(-2), size: 8) == [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE])
        #expect(BigEndian.bytes(UInt8(7), size: 0) == [])
    }

    @Test func whatIsWrittenReadsBack() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1000 {
            let value = UInt64.random(in: .min ... .max, using: &generator)
            let size = Int.random(in: 1...8, using: &generator)
            let written = BigEndian.bytes(value, size: size)
            let kept = size == 8 ? value : value & (1 << UInt64(8 * size) - 1)
            #expect(BigEndian.read(written, at: 0, size: size, as: UInt64.self) == kept)
            #expect(
                BigEndian.bytes(UInt32(truncatingIfNeeded: value)).withUnsafeBytes { BigEndian.u32($0, at: 0) }
                    == UInt32(truncatingIfNeeded: value))
        }
    }
}
