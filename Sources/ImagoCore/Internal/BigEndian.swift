/// Big-endian unsigned integers in bytes: the byte order of PNG chunks, ISOBMFF boxes, the offset in front of an
/// `Exif` box and Photoshop's resource blocks. One reader and one writer for every parser and writer of those (the
/// counterpart of ``LittleEndianReader`` and ``LittleEndianWriter``, which bounds-check each read: these leave
/// that to the caller, whose format tells it how far it may read).
package enum BigEndian {
    /// The unsigned integer of `size` bytes (default: `T`'s width) at `offset` of `bytes`, most significant first.
    /// The caller has checked that `offset ..< offset + size` is inside `bytes` and that `T` holds `size` bytes.
    @inlinable
    package static func read<Bytes: RandomAccessCollection<UInt8>, T: FixedWidthInteger & UnsignedInteger>(
        _ bytes: Bytes, at offset: Int, size: Int = MemoryLayout<T>.size, as _: T.Type = T.self
    ) -> T where Bytes.Index == Int {
        var value: T = 0
        for index in offset..<(offset + size) { value = value << 8 | T(bytes[index]) }
        return value
    }

    /// The 4 bytes at `offset` of `bytes` as a `UInt32`, most significant first (PNG's chunk lengths and types,
    /// an ISOBMFF box's size). The caller has checked that they are inside `bytes`.
    @inlinable
    package static func u32<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at offset: Int) -> UInt32
    where Bytes.Index == Int {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    /// The last `size` bytes (default: `T`'s width) of `value`, most significant first; a size over the width
    /// extends the value (with zeros for an unsigned one).
    @inlinable
    package static func bytes<T: FixedWidthInteger>(_ value: T, size: Int = MemoryLayout<T>.size) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: value >> ((size - 1 - $0) * 8)) }
    }
}
