import Foundation
import ImagoCore
import ImagoZlib

/// What PNGDecoder needs beyond libpng's simplified API: the `eXIf` orientation and whether the data is complete.
///
/// Walks the chunk headers (8 bytes each, jumping over the data by the declared length) up to `IEND`. Never trusts
/// a length: every read is bounds-checked.
struct PNGChunks {
    /// The orientation from an `eXIf` chunk before the first `IDAT`, `.up` when absent or unreadable.
    var orientation: ExifOrientation = .up
    /// Whether the data ends before the `IEND` chunk (a chunk runs past the end, or `IEND` never comes).
    var isTruncated = false
    /// The byte ranges of `gAMA` chunks (header to CRC), which PNGDecoder removes so that libpng does not
    /// gamma-convert the samples (see PNGDecoder's documentation).
    var gammaChunks: [Range<Int>] = []
    /// Whether IHDR declares 16-bit samples with Adam7 interlacing: libpng 1.6.39 as patched by Debian decodes
    /// those wrongly when asked for 8-bit output (pnggroup/libpng#853), so PNGDecoder reads them as 16-bit.
    var isInterlaced16Bit = false
    /// Bits per channel as IHDR declares them (1, 2, 4, 8 or 16); 8 for a palette image, whose palette entries are
    /// 8-bit whatever the index width. `nil` when IHDR is not where the PNG signature puts it.
    var bitDepth: Int?
    /// The colour chunks before the first `IDAT`: `iCCP`'s data (name, method, zlib stream), whether `sRGB` is
    /// present, `gAMA`'s value and `cHRM`'s eight values (each ÷ 100,000). The first of each counts.
    var iccChunk: Range<Int>?
    var hasSRGBChunk = false
    var gamma: UInt32?
    var chromaticities: [UInt32]?
    /// The first `eXIf` chunk's data, and the first `iTXt` chunk whose keyword is `XML:com.adobe.xmp` (XMP).
    var exifChunk: Range<Int>?
    var xmpChunk: Range<Int>?

    private static let exif: UInt32 = 0x6558_4966  // "eXIf"
    private static let ihdr: UInt32 = 0x4948_4452  // "IHDR"
    private static let gama: UInt32 = 0x6741_4D41  // "gAMA"
    private static let idat: UInt32 = 0x4944_4154  // "IDAT"
    private static let iend: UInt32 = 0x4945_4E44  // "IEND"
    private static let iccp: UInt32 = 0x6943_4350  // "iCCP"
    private static let srgb: UInt32 = 0x7352_4742  // "sRGB"
    private static let chrm: UInt32 = 0x6348_524D  // "cHRM"
    private static let itxt: UInt32 = 0x6954_5874  // "iTXt"
    private static let xmpKeyword = Array("XML:com.adobe.xmp".utf8) + [0]

    init(scanning bytes: UnsafeRawBufferPointer) {
        // IHDR comes first: bit depth at byte 24, interlace method at byte 28.
        if bytes.count >= 29 && BigEndian.u32(bytes, at: 12) == Self.ihdr {
            isInterlaced16Bit = bytes[24] == 16 && bytes[28] == 1
            bitDepth = bytes[25] == 3 ? 8 : Int(bytes[24])
        }
        var offset = 8  // after the signature
        var sawImageData = false
        while true {
            guard offset <= bytes.count - 8 else {
                isTruncated = true
                return
            }
            let length = Int(BigEndian.u32(bytes, at: offset))
            let type = BigEndian.u32(bytes, at: offset + 4)
            // The PNG limit for a chunk length is 2^31 − 1; anything beyond is corrupt, not truncated.
            guard length <= Int(Int32.max) else { return }
            let dataStart = offset + 8
            let (end, overflow) = dataStart.addingReportingOverflow(length + 4)
            guard !overflow, end <= bytes.count else {
                isTruncated = true
                return
            }
            switch type {
            case Self.iend: return
            case Self.idat: sawImageData = true
            case Self.gama:
                gammaChunks.append(offset..<end)
                if !sawImageData, gamma == nil, length == 4 { gamma = BigEndian.u32(bytes, at: dataStart) }
            case Self.iccp where !sawImageData && iccChunk == nil: iccChunk = dataStart..<dataStart + length
            case Self.srgb where !sawImageData: hasSRGBChunk = true
            case Self.chrm where !sawImageData && chromaticities == nil && length == 32:
                chromaticities = (0..<8).map { BigEndian.u32(bytes, at: dataStart + 4 * $0) }
            case Self.exif where !sawImageData:
                let payload = UnsafeRawBufferPointer(rebasing: bytes[dataStart..<dataStart + length])
                orientation = ExifReader.orientation(inRawBytes: payload) ?? .up
                if exifChunk == nil { exifChunk = dataStart..<dataStart + length }
            case Self.itxt where xmpChunk == nil && length > Self.xmpKeyword.count:
                if Self.xmpKeyword.indices.allSatisfy({ bytes[dataStart + $0] == Self.xmpKeyword[$0] }) {
                    xmpChunk = dataStart..<dataStart + length
                }
            default: break
            }
            offset = end
        }
    }

    /// The `eXIf` and XMP blocks found (``ImageMetadata/bounded``); `nil` when there are none. An XMP `iTXt` whose
    /// text is compressed is inflated up to ``ImageMetadata/maximumBlockLength``.
    func metadata(in bytes: UnsafeRawBufferPointer) -> ImageMetadata? {
        let exif = exifChunk.map { Data(UnsafeRawBufferPointer(rebasing: bytes[$0])) }
        var xmp: Data?
        if let chunk = xmpChunk {
            // keyword\0, compression flag, method, language tag\0, translated keyword\0, text
            var index = chunk.lowerBound + Self.xmpKeyword.count
            let isCompressed = index < chunk.upperBound && bytes[index] == 1
            index += 2
            for _ in 0..<2 {
                while index < chunk.upperBound && bytes[index] != 0 { index += 1 }
                index += 1
            }
            if index <= chunk.upperBound {
                let text = UnsafeRawBufferPointer(rebasing: bytes[index..<chunk.upperBound])
                xmp = isCompressed ? Zlib.inflate(text, limit: ImageMetadata.maximumBlockLength) : Data(text)
            }
        }
        return ImageMetadata(exif: exif, xmp: xmp).bounded
    }

    /// Appends the chunk `type` (four ASCII letters) holding `payload` to `output`: its length, type, payload and
    /// the CRC-32 of type and payload. The payload is under 2 GiB (the PNG limit).
    static func append<Output: RangeReplaceableCollection<UInt8>>(
        _ type: StaticString, _ payload: UnsafeRawBufferPointer, to output: inout Output
    ) {
        precondition(type.utf8CodeUnitCount == 4, "a PNG chunk type is four letters")
        let typeBytes = UnsafeRawBufferPointer(start: type.utf8Start, count: 4)
        output.append(contentsOf: BigEndian.bytes(UInt32(payload.count)))
        output.append(contentsOf: typeBytes)
        output.append(contentsOf: payload)
        output.append(contentsOf: BigEndian.bytes(Zlib.crc32(payload, continuing: Zlib.crc32(typeBytes))))
    }
}
