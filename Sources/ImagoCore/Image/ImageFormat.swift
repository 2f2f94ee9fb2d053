import Foundation

/// The encoded format of an image, recognised from its first bytes (never from a file name or a MIME type).
///
/// An open set of values, like Nuke's `AssetType`: the built-in formats are static members (`.jpeg`, `.png`, …),
/// and a plug-in adds its own without changing this module; its decoder then teaches the registry to recognise it
/// (see ``ImageDecoding/sniffFormat(in:)``). Two formats are equal when their ``rawValue``s are; a format encodes
/// (`Codable`) as its raw string.
///
/// ```swift
/// let format = ImageFormat(sniffing: data)   // .jpeg, .png, … or .unknown
/// extension ImageFormat { static let qoi = ImageFormat(rawValue: "qoi") }
/// ```
public struct ImageFormat: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The short lowercase name (`"jpeg"`, `"png"`, `"jxl"`, …): the identity of the format.
    public let rawValue: String

    /// The format named `rawValue` (a built-in one when the name is one of theirs, e.g. `"jxl"` is ``jpegXL``).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// JPEG / JFIF / EXIF (`FF D8 FF`).
    public static let jpeg = ImageFormat(rawValue: "jpeg")
    /// PNG without animation.
    public static let png = ImageFormat(rawValue: "png")
    /// Animated PNG (a PNG with an `acTL` chunk before its first `IDAT`).
    public static let apng = ImageFormat(rawValue: "apng")
    /// GIF 87a / 89a.
    public static let gif = ImageFormat(rawValue: "gif")
    /// WebP (lossy, lossless, animated) in a RIFF container.
    public static let webp = ImageFormat(rawValue: "webp")
    /// HEIC (HEVC-coded HEIF).
    public static let heic = ImageFormat(rawValue: "heic")
    /// HEIF with another or an unspecified codec.
    public static let heif = ImageFormat(rawValue: "heif")
    /// AVIF (AV1-coded HEIF).
    public static let avif = ImageFormat(rawValue: "avif")
    /// JPEG XL, bare codestream or ISO BMFF container (raw value `"jxl"`).
    public static let jpegXL = ImageFormat(rawValue: "jxl")
    /// Windows bitmap.
    public static let bmp = ImageFormat(rawValue: "bmp")
    /// Windows icon or cursor (ICO / CUR): a directory of BMP or PNG images.
    public static let ico = ImageFormat(rawValue: "ico")
    /// TIFF, either byte order.
    public static let tiff = ImageFormat(rawValue: "tiff")
    /// SVG (XML text with an `<svg` element near the start).
    public static let svg = ImageFormat(rawValue: "svg")
    /// Not recognised.
    public static let unknown = ImageFormat(rawValue: "unknown")

    /// The formats this module knows by name, in the order the built-in sniffing tries them (not including
    /// ``unknown``). Formats added by plug-ins are not listed.
    public static let builtIn: [ImageFormat] = [
        .jpeg, .png, .apng, .gif, .webp, .jpegXL, .heic, .heif, .avif, .bmp, .ico, .tiff, .svg,
    ]

    /// The short lowercase name (`"jpeg"`, `"png"`, …), as used in JSON output: the ``rawValue``.
    public var description: String { rawValue }

    /// The usual file extension for this format, without the dot (`"jpg"` for JPEG, `"png"` for APNG, `"bin"`
    /// for unknown data; the raw value for every other format, plug-ins' included).
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .apng: "png"
        case .unknown: "bin"
        default: rawValue
        }
    }

    /// The MIME type an HTTP `Accept` header names this format by (`"image/jpeg"`, `"image/svg+xml"`,
    /// `"image/x-icon"`, …; `"image/" + rawValue` for formats this module does not know).
    public var mimeType: String {
        switch self {
        case .svg: "image/svg+xml"
        case .ico: "image/x-icon"
        case .unknown: "application/octet-stream"
        default: "image/" + rawValue
        }
    }

    /// Recognises the format from the first bytes of `data`; `.unknown` when nothing matches.
    ///
    /// Reads at most the first 4 KB (PNG: walks chunk headers up to the first `IDAT` to tell APNG apart).
    public init(sniffing data: Data) {
        self = data.withUnsafeBytes { ImageFormat.sniff(UnsafeRawBufferPointer($0)) }
    }

    /// Recognises the format from raw bytes; see ``init(sniffing:)``.
    public static func sniff(_ bytes: UnsafeRawBufferPointer) -> ImageFormat {
        let b = bytes
        func matches(_ sig: [UInt8], offset: Int = 0) -> Bool {
            guard b.count >= offset + sig.count else { return false }
            for (i, v) in sig.enumerated() where b[offset + i] != v { return false }
            return true
        }
        func ascii(_ s: String, offset: Int = 0) -> Bool { matches(Array(s.utf8), offset: offset) }

        if matches([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return isAnimatedPNG(b) ? .apng : .png }
        if ascii("GIF87a") || ascii("GIF89a") { return .gif }
        if ascii("RIFF") && ascii("WEBP", offset: 8) { return .webp }
        if matches([0xFF, 0x0A]) || matches([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) {
            return .jpegXL
        }
        if ascii("ftyp", offset: 4) { return isoBMFFFormat(b) }
        if ascii("BM") && b.count >= 26 { return .bmp }
        if isIconDirectory(b) { return .ico }
        if matches([0x49, 0x49, 0x2A, 0x00]) || matches([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if looksLikeSVG(b) { return .svg }
        return .unknown
    }

    private static func isAnimatedPNG(_ b: UnsafeRawBufferPointer) -> Bool {
        var offset = 8
        while offset + 8 <= b.count, offset < 4096 {
            let length = Int(BigEndian.u32(b, at: offset))
            let type = BigEndian.u32(b, at: offset + 4)
            if type == 0x6163_544C { return true }  // acTL
            if type == 0x4944_4154 { return false }  // IDAT
            guard length >= 0, length < Int(Int32.max) else { return false }
            offset += 12 + length
        }
        return false
    }

    /// An ICO (type 1) or CUR (type 2) directory: reserved 0, type, then 1…1,024 entries whose first entry has a
    /// zero reserved byte.
    private static func isIconDirectory(_ b: UnsafeRawBufferPointer) -> Bool {
        guard b.count >= 22, b[0] == 0, b[1] == 0, b[2] == 1 || b[2] == 2, b[3] == 0 else { return false }
        let count = Int(b[4]) | Int(b[5]) << 8
        return count >= 1 && count <= 1024 && b[6 + 3] == 0
    }

    private static func isoBMFFFormat(_ b: UnsafeRawBufferPointer) -> ImageFormat {
        guard b.count >= 12 else { return .unknown }
        let boxSize = min(Int(BigEndian.u32(b, at: 0)), b.count, 4096)
        var brands: [String] = []
        var offset = 8
        while offset + 4 <= max(boxSize, 12) && offset + 4 <= b.count {
            if offset != 12 {  // skip minor_version
                brands.append(String(decoding: UnsafeRawBufferPointer(rebasing: b[offset..<offset + 4]), as: UTF8.self))
            }
            offset += 4
        }
        let major = brands.first ?? ""
        if ["avif", "avis"].contains(major) { return .avif }
        if ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs"].contains(major) { return .heic }
        if major == "jxl " { return .jpegXL }
        if ["mif1", "msf1"].contains(major) {
            if brands.contains("avif") || brands.contains("avis") { return .avif }
            if brands.contains(where: { $0.hasPrefix("he") }) { return .heic }
            return .heif
        }
        if brands.contains("avif") { return .avif }
        return .unknown
    }

    private static func looksLikeSVG(_ b: UnsafeRawBufferPointer) -> Bool {
        let head = String(decoding: UnsafeRawBufferPointer(rebasing: b[0..<min(b.count, 1024)]), as: UTF8.self)
        let trimmed = head.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" })
        guard trimmed.hasPrefix("<") else { return false }
        return trimmed.contains("<svg")
    }
}
