import ImagoCore

/// The codecs Imago ships over Debian's C libraries: JPEG (libjpeg-turbo), PNG and APNG (libpng), GIF (giflib),
/// WebP (libwebp), AVIF (libavif), HEIC/HEIF (libheif; written with its x265 encoder), JPEG XL (libjxl), TIFF
/// (libtiff), and BMP and ICO in Swift.
public enum ImagoCodecs {
    /// Every decoder this module provides, in registration order.
    public static var decoders: [any ImageDecoding] {
        [
            JPEGDecoder(),
            PNGDecoder(),
            GIFDecoder(),
            WebPDecoder(),
            APNGDecoder(),
            BMPDecoder(),
            ICODecoder(),
            AVIFDecoder(),
            HEIFDecoder(),
            TIFFDecoder(),
            JPEGXLDecoder(),
            SVGDecoder(),
        ]
    }
    /// Every encoder this module provides, in registration order.
    public static var encoders: [any ImageEncoding] {
        [
            JPEGEncoder(),
            PNGEncoder(),
            GIFEncoder(),  // before WebP: the newest encoder that keeps frames (WebP) stays the default for animations
            WebPEncoder(),
            AVIFEncoder(),
            JPEGXLEncoder(),
            BMPEncoder(),
            ICOEncoder(),
            TIFFEncoder(),
        ] + (hasHEVCEncoder ? [HEICEncoder()] : [])
    }

    /// Whether libheif has an HEVC encoder (Debian's links x265), checked once: HEIC is written only then.
    private static let hasHEVCEncoder = HEICEncoder.isAvailable
}
