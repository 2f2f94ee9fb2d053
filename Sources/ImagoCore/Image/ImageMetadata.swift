import Foundation

/// The metadata an image file carries beside its pixels, as the file stores it: EXIF (camera, date, orientation,
/// GPS, copyright), XMP (an RDF/XML packet: rights, creator, keywords…) and IPTC-IIM (a Photoshop image resource
/// block). Read by decoders when ``DecodingOptions/readsMetadata`` is set (JPEG, PNG, WebP, AVIF, HEIC, JPEG XL and
/// TIFF, whose EXIF is its first directory's text tags), and written back by encoders given it in
/// ``EncodingOptions/metadata`` (the same seven; IPTC in JPEG and TIFF only), as imgproxy's
/// `strip_metadata:0` and `keep_copyright` need.
public struct ImageMetadata: Sendable, Hashable, Codable {
    /// The EXIF data: a TIFF structure (`II*\0` or `MM\0*` and IFDs), without JPEG's `Exif\0\0` header. Default `nil`.
    public var exif: Data?
    /// The XMP packet (UTF-8 XML). Default `nil`.
    public var xmp: Data?
    /// The Photoshop image resource block of JPEG's APP13 (`8BIM` resources, IPTC-IIM in resource 0x0404), without
    /// the `Photoshop 3.0\0` header. Default `nil`.
    public var iptc: Data?

    /// The largest EXIF, XMP or IPTC block read or written: 64 KiB less JPEG's segment headers (JPEG holds each in one
    /// segment; larger blocks, such as extended XMP, are left out).
    public static let maximumBlockLength = 65_000

    /// Metadata of the blocks given (each `nil` by default).
    public init(exif: Data? = nil, xmp: Data? = nil, iptc: Data? = nil) {
        self.exif = exif
        self.xmp = xmp
        self.iptc = iptc
    }

    /// Whether no block is present.
    public var isEmpty: Bool { exif == nil && xmp == nil && iptc == nil }

    /// These blocks without any over ``maximumBlockLength`` or empty, and the EXIF block without a JPEG
    /// `Exif\0\0` header some PNG and WebP writers leave in; `nil` when none is left.
    public var bounded: ImageMetadata? {
        func kept(_ block: Data?) -> Data? {
            guard let block, !block.isEmpty, block.count <= Self.maximumBlockLength else { return nil }
            return block
        }
        let header = Data("Exif".utf8) + Data([0, 0])
        let tiff = exif.map { $0.starts(with: header) ? Data($0.dropFirst(6)) : $0 }
        let result = ImageMetadata(exif: kept(tiff), xmp: kept(xmp), iptc: kept(iptc))
        return result.isEmpty ? nil : result
    }
}
