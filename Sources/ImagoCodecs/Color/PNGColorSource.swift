import CZlib
import Foundation
import ImagoCore

extension PNGChunks {
    /// The colour space the chunks declare, by the PNG specification's precedence: `iCCP` (inflated, at most
    /// ``ColorManagement/maximumProfileSize`` bytes), then `sRGB`, then `gAMA` with `cHRM` (without `cHRM`, sRGB's
    /// primaries and D65). `nil` when none is present or `iCCP` cannot be inflated (with a warning).
    ///
    /// A `gAMA` of 1/2.2 (45455 ± 50) with no `cHRM` or sRGB's is taken as sRGB, as libpng and browsers do: it is
    /// what most tools write for sRGB content, and converting it through a pure 2.2 power curve would only move
    /// the darkest levels.
    func colorSource(in bytes: UnsafeRawBufferPointer) -> ColorSource? {
        if let iccChunk {
            let payload = UnsafeRawBufferPointer(rebasing: bytes[iccChunk])
            // Profile name (1 to 79 bytes), NUL, compression method 0, then the zlib stream.
            guard let nul = payload.prefix(80).firstIndex(of: 0), nul + 2 <= payload.count, payload[nul + 1] == 0,
                let profile = Self.inflate(UnsafeRawBufferPointer(rebasing: payload[(nul + 2)...]))
            else {
                ColorManagement.warn("the PNG's iCCP chunk cannot be inflated (corrupt or over the size limit)")
                return nil
            }
            return .icc(profile)
        }
        if hasSRGBChunk { return .sRGB }
        guard let gamma, gamma > 0 else { return nil }
        let c = chromaticities.map { v in
            let d = v.map { Double($0) / 100_000 }
            return ColorSource.Chromaticities(
                white: (d[0], d[1]), red: (d[2], d[3]), green: (d[4], d[5]), blue: (d[6], d[7]))
        }
        if abs(Int(gamma) - 45455) <= 50, c == nil || c?.isClose(to: .sRGB, tolerance: 0.001) == true {
            return .sRGB
        }
        return .gamma(Double(gamma) / 100_000, chromaticities: c)
    }

    /// The zlib stream `compressed` inflated, or `nil` when it is corrupt, incomplete or would exceed `limit`
    /// bytes (default ``ColorManagement/maximumProfileSize``).
    static func inflate(
        _ compressed: UnsafeRawBufferPointer, limit: Int = ColorManagement.maximumProfileSize
    ) -> Data? {
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

    /// `data` as a zlib stream (default compression), for writing `iCCP`.
    static func deflate(_ data: Data) -> Data? {
        var stream = z_stream()
        guard cimago_deflate_init(&stream, Z_DEFAULT_COMPRESSION) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(data.count)))
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

    /// The CRC-32 of `bytes` (PNG chunk CRCs cover the type and the data).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { UInt32(CZlib.crc32(0, $0.baseAddress, uInt($0.count))) }
    }
}
