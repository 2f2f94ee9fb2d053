import CZlib
import Foundation

/// zlib, wrapped once: inflating and deflating whole buffers, and CRC-32. PNG's chunks (`iCCP`, `zTXt`/`iTXt`,
/// chunk CRCs) and OTLP's gzip-compressed exports use it.
package enum Zlib {
    /// The container a deflated stream is written in.
    package enum Format: Sendable {
        /// zlib's two-byte header and Adler-32 trailer (PNG's chunks).
        case zlib
        /// gzip's header and CRC-32 trailer (`Content-Encoding: gzip`, gRPC's `gzip` encoding).
        case gzip
    }

    /// The zlib stream `compressed` inflated, or `nil` when it is corrupt, incomplete or would exceed `limit` bytes.
    package static func inflate(_ compressed: UnsafeRawBufferPointer, limit: Int) -> Data? {
        guard let input = compressed.baseAddress, !compressed.isEmpty, compressed.count <= Int(UInt32.max) else {
            return nil
        }
        var stream = z_stream()
        guard cimago_inflate_init(&stream) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        stream.next_in = UnsafeMutablePointer(mutating: input.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(compressed.count)
        var output = Data()
        let chunk = 64 << 10
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let (status, produced) = buffer.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(chunk)
                let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                return (status, chunk - Int(stream.avail_out))
            }
            guard status == Z_OK || status == Z_STREAM_END else { return nil }
            guard output.count + produced <= limit else { return nil }
            output.append(contentsOf: buffer[0..<produced])
            if status == Z_STREAM_END { return output }
            if produced == 0 && stream.avail_in == 0 { return nil }  // the stream ended early
        }
    }

    /// `data` deflated at zlib's default level into `format`; `nil` if zlib fails (it does not for memory it has).
    package static func deflate(_ data: Data, format: Format = .zlib) -> Data? {
        guard data.count <= Int(UInt32.max) else { return nil }
        var stream = z_stream()
        let started =
            switch format {
            case .zlib: cimago_deflate_init(&stream, Z_DEFAULT_COMPRESSION)
            case .gzip: cimago_deflate_init_gzip(&stream, Z_DEFAULT_COMPRESSION)
            }
        guard started == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        // deflateBound does not count gzip's 18 bytes of header and trailer beyond zlib's 6.
        let bound = Int(deflateBound(&stream, uLong(data.count))) + 18
        var output = [UInt8](repeating: 0, count: bound)
        let status = data.withUnsafeBytes { input in
            output.withUnsafeMutableBufferPointer { out -> Int32 in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(bound)
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        return Data(output[0..<Int(stream.total_out)])
    }

    /// The CRC-32 of `bytes` (PNG's chunk CRCs cover the type and the data).
    package static func crc32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { crc32($0) }
    }

    /// The CRC-32 of `bytes`, continuing `crc` (default 0: a new one), so that a CRC over several buffers is
    /// `crc32(second, continuing: crc32(first))`.
    package static func crc32(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress else { return crc }
        return UInt32(CZlib.crc32_z(uLong(crc), base.assumingMemoryBound(to: Bytef.self), bytes.count))
    }
}
