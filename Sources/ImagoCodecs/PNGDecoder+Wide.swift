import CImagoShims
import CPNG
import ImagoCore

extension PNGDecoder {
    /// Finishes reading `image` (after `png_image_begin_read_*`) into a new buffer of `pixelFormat`.
    ///
    /// The usual path asks libpng for 8-bit output directly. Adam7-interlaced 16-bit files take the wide path:
    /// libpng's 8-bit reduction of those is broken in the Debian build (pnggroup/libpng#853, about half the
    /// channels wrong), so they are read as 16-bit "linear" samples (unchanged, since gAMA is removed and 16-bit
    /// data is then assumed linear) and reduced here. That output has colour premultiplied by alpha, so colour
    /// under fully transparent pixels is lost (transparent black) on that path only.
    static func finishRead(
        _ image: inout png_image, pixelFormat: PixelBuffer.PixelFormat, isInterlaced16Bit: Bool, format: ImageFormat,
        chunks: PNGChunks
    ) throws -> PixelBuffer {
        let width = Int(image.width)
        let height = Int(image.height)
        if !isInterlaced16Bit {
            image.format = pixelFormat == .gray8 ? cimago_png_format_gray : cimago_png_format_rgba
            // Set after begin_read (which initialises `flags`): 16-bit data without gAMA is sRGB, not linear.
            image.flags |= cimago_png_image_flag_16bit_srgb
            return try PixelBuffer(width: width, height: height, format: pixelFormat) { out in
                guard let destination = out.baseAddress else {
                    throw CodecError.corrupt(format: format, reason: "empty output buffer")
                }
                adviseHugePages(out)
                let stride = Int32(width * pixelFormat.bytesPerPixel)
                guard png_image_finish_read(&image, nil, destination, stride, nil) != 0 else {
                    throw failure(&image, chunks: chunks, format: format)
                }
            }
        }

        let channels = pixelFormat.bytesPerPixel
        image.format = pixelFormat == .gray8 ? cimago_png_format_linear_y : cimago_png_format_linear_rgb_alpha
        let count = try PixelBuffer.checkedByteCount(width: width, height: height, format: pixelFormat)
        var wide = [UInt16](repeating: 0, count: count)
        let ok = wide.withUnsafeMutableBytes { raw in
            png_image_finish_read(&image, nil, raw.baseAddress, Int32(width * channels), nil)  // stride in samples
        }
        guard ok != 0 else { throw failure(&image, chunks: chunks, format: format) }
        return try PixelBuffer(width: width, height: height, format: pixelFormat) { out in
            wide.withUnsafeBufferPointer { src in
                @inline(__always) func to8(_ v: UInt32) -> UInt8 { UInt8((v * 255 + 32767) / 65535) }
                if channels == 1 {
                    for i in 0..<count { out[i] = to8(UInt32(src[i])) }
                    return
                }
                var i = 0
                while i < count {
                    let a = UInt32(src[i + 3])
                    if a == 0 {
                        out[i] = 0
                        out[i + 1] = 0
                        out[i + 2] = 0
                        out[i + 3] = 0
                    } else {
                        for c in 0..<3 {
                            let straight = min(65535, (UInt32(src[i + c]) * 65535 + a / 2) / a)
                            out[i + c] = to8(straight)
                        }
                        out[i + 3] = to8(a)
                    }
                    i += 4
                }
            }
        }
    }
}
