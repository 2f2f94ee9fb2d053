/// Protocol Buffers' wire format, written by hand for the few messages Imago sends (OTLP's traces,
/// ``OTLPTraceExporter``): no generated code, no library. Fields are written in the order they are given, each
/// whatever its value: leaving out a proto3 default is the caller's choice.
package struct ProtobufWriter {
    /// The encoded message so far.
    package private(set) var bytes: [UInt8] = []

    /// An empty message.
    package init() {}

    private enum WireType: UInt8 {
        case varint = 0, fixed64 = 1, lengthDelimited = 2, fixed32 = 5
    }

    private mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private mutating func key(_ field: Int, _ type: WireType) {
        varint(UInt64(field) << 3 | UInt64(type.rawValue))
    }

    /// A `uint32`, `uint64`, `bool` or enum field (a varint).
    package mutating func unsigned(_ field: Int, _ value: UInt64) {
        key(field, .varint)
        varint(value)
    }

    /// An `int64` field (a varint of its two's complement: ten bytes when negative).
    mutating func signed(_ field: Int, _ value: Int64) {
        unsigned(field, UInt64(bitPattern: value))
    }

    /// A `fixed64` field, little-endian.
    mutating func fixed64(_ field: Int, _ value: UInt64) {
        key(field, .fixed64)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A `fixed32` field, little-endian.
    mutating func fixed32(_ field: Int, _ value: UInt32) {
        key(field, .fixed32)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A `double` field (its IEEE 754 bits as a `fixed64`).
    mutating func double(_ field: Int, _ value: Double) {
        fixed64(field, value.bitPattern)
    }

    /// A packed `repeated fixed64` field (proto3's encoding of one: a length, then the values little-endian).
    mutating func packedFixed64(_ field: Int, _ values: [UInt64]) {
        key(field, .lengthDelimited)
        varint(UInt64(values.count * 8))
        for value in values { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    }

    /// A packed `repeated double` field.
    mutating func packedDouble(_ field: Int, _ values: [Double]) {
        packedFixed64(field, values.map(\.bitPattern))
    }

    /// A `bytes` field.
    package mutating func data(_ field: Int, _ value: some Collection<UInt8>) {
        key(field, .lengthDelimited)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// A `string` field, UTF-8.
    mutating func string(_ field: Int, _ value: String) {
        data(field, value.utf8)
    }

    /// An embedded message field, written by `body`: in place, its length put in front of it afterwards (a move of
    /// its bytes, not a buffer of its own per message).
    mutating func message(_ field: Int, _ body: (inout ProtobufWriter) -> Void) {
        key(field, .lengthDelimited)
        let start = bytes.count
        body(&self)
        var length = UInt64(bytes.count - start)
        var size = 1
        while length >> (7 * size) != 0 { size += 1 }
        bytes.insert(contentsOf: repeatElement(0, count: size), at: start)
        for i in start..<(start + size) {
            bytes[i] = UInt8(truncatingIfNeeded: length) | (i < start + size - 1 ? 0x80 : 0)
            length >>= 7
        }
    }
}
