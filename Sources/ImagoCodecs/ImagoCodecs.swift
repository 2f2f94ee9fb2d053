import ImagoCore

/// The codecs Imago ships over Debian's C libraries: JPEG (libjpeg-turbo), PNG (libpng), GIF (giflib), WebP (libwebp).
public enum ImagoCodecs {
    /// Every decoder this module provides, in registration order.
    public static var decoders: [any ImageDecoding] {
        [
            JPEGDecoder(),
            PNGDecoder(),
            GIFDecoder(),
            WebPDecoder(),
            AVIFDecoder(),
            HEIFDecoder(),
            TIFFDecoder(),
        ]
    }
    /// Every encoder this module provides, in registration order.
    public static var encoders: [any ImageEncoding] {
        [
            JPEGEncoder(),
            PNGEncoder(),
            WebPEncoder(),
            AVIFEncoder(),
        ]
    }
}
