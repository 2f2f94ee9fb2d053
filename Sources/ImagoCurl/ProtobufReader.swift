/// Protocol Buffers' wire format, read by hand for the one answer Imago reads (OTLP's `Export…ServiceResponse` and
/// its partial success): a message's fields in order, each a varint or a length-delimited run of bytes (fixed
/// fields are stepped over). The counterpart of ``ProtobufWriter``.
package struct ProtobufReader {
    /// One field's value.
    package enum Value: Equatable {
        /// A varint (`int64`, `uint64`, `bool`, an enum).
        case varint(UInt64)
        /// A length-delimited run: a string, bytes, or an embedded message.
        case bytes(ArraySlice<UInt8>)
        /// A fixed 32- or 64-bit value, not decoded.
        case fixed
    }

    /// The fields of the message `bytes`, by number, in order; `nil` when it is not well formed (a field running
    /// past the end, a varint over ten bytes, a group or an unknown wire type).
    package static func fields(_ bytes: ArraySlice<UInt8>) -> [(number: Int, value: Value)]? {
        var fields: [(number: Int, value: Value)] = []
        var index = bytes.startIndex
        func varint() -> UInt64? {
            var value: UInt64 = 0
            for shift in stride(from: 0, to: 70, by: 7) {
                guard index < bytes.endIndex else { return nil }
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << UInt64(shift)
                if byte < 0x80 { return value }
            }
            return nil
        }
        while index < bytes.endIndex {
            guard let key = varint(), key >> 3 > 0, key >> 3 <= UInt64(Int32.max) else { return nil }
            let number = Int(key >> 3)
            switch key & 7 {
            case 0:
                guard let value = varint() else { return nil }
                fields.append((number, .varint(value)))
            case 1, 5:
                let width = key & 7 == 1 ? 8 : 4
                guard bytes.endIndex - index >= width else { return nil }
                index += width
                fields.append((number, .fixed))
            case 2:
                guard let length = varint(), length <= UInt64(bytes.endIndex - index) else { return nil }
                let end = index + Int(length)
                fields.append((number, .bytes(bytes[index..<end])))
                index = end
            default: return nil
            }
        }
        return fields
    }
}
