import CAVIF
import CHEIF
import ImagoCore

extension HEIFDecoder {
    /// The primary image decoded by libheif in its own YCbCr layout (transforms applied) and converted to RGBA8
    /// by libavif's converter, which uses libyuv: libheif 1.15's own YCbCr → RGBA conversion is scalar and cost
    /// more than the HEVC decode of a 12 MP photo. `nil` when the layout is one this path does not take (RGB,
    /// unusual depths, alpha of another depth); the caller then lets libheif convert.
    ///
    /// The samples are read through libavif views of libheif's planes (no copy); the matrix and range come from
    /// the file's nclx, or libheif's defaults (BT.601, full range) when it has none.
    static func decodePlanar(
        _ handle: OpaquePointer, decoding: UnsafeMutablePointer<heif_decoding_options>, cicp: EmbeddedColour.CICP?,
        format: ImageFormat, alphaMode: PixelBuffer.AlphaMode, options: DecodingOptions
    ) throws -> PixelBuffer? {
        var decoded: OpaquePointer?
        try check(
            heif_decode_image(handle, &decoded, heif_colorspace_undefined, heif_chroma_undefined, decoding), format)
        guard let decoded else { throw CodecError.corrupt(format: format, reason: "no decoded image") }
        defer { heif_image_release(decoded) }
        let yuvFormat: avifPixelFormat
        switch (heif_image_get_colorspace(decoded), heif_image_get_chroma_format(decoded)) {
        case (heif_colorspace_YCbCr, heif_chroma_420): yuvFormat = AVIF_PIXEL_FORMAT_YUV420
        case (heif_colorspace_YCbCr, heif_chroma_422): yuvFormat = AVIF_PIXEL_FORMAT_YUV422
        case (heif_colorspace_YCbCr, heif_chroma_444): yuvFormat = AVIF_PIXEL_FORMAT_YUV444
        case (heif_colorspace_monochrome, heif_chroma_monochrome): yuvFormat = AVIF_PIXEL_FORMAT_YUV400
        default: return nil
        }
        let width = Int(heif_image_get_width(decoded, heif_channel_Y))
        let height = Int(heif_image_get_height(decoded, heif_channel_Y))
        let depth = Int(heif_image_get_bits_per_pixel_range(decoded, heif_channel_Y))
        guard [8, 10, 12].contains(depth) else { return nil }
        try options.checkDimensions(width: width, height: height, format: format)
        let hasAlpha = heif_image_has_channel(decoded, heif_channel_Alpha) != 0
        if hasAlpha, Int(heif_image_get_bits_per_pixel_range(decoded, heif_channel_Alpha)) != depth { return nil }

        guard let view = avifImageCreateEmpty() else { return nil }
        defer { avifImageDestroy(view) }  // owns none of the planes (imageOwns… stay false)
        view.pointee.width = UInt32(width)
        view.pointee.height = UInt32(height)
        view.pointee.depth = UInt32(depth)
        view.pointee.yuvFormat = yuvFormat
        view.pointee.yuvRange = (cicp?.isFullRange ?? true) ? AVIF_RANGE_FULL : AVIF_RANGE_LIMITED
        view.pointee.matrixCoefficients = avifMatrixCoefficients(cicp?.matrix ?? 6)
        view.pointee.colorPrimaries = avifColorPrimaries(cicp?.primaries ?? 1)
        view.pointee.transferCharacteristics = avifTransferCharacteristics(cicp?.transfer ?? 13)
        func plane(_ channel: heif_channel) -> (UnsafeMutablePointer<UInt8>?, UInt32) {
            var stride: Int32 = 0
            let base = heif_image_get_plane_readonly(decoded, channel, &stride)
            return (base.map { UnsafeMutablePointer(mutating: $0) }, UInt32(max(0, stride)))
        }
        let y = plane(heif_channel_Y)
        guard y.0 != nil else { return nil }
        if yuvFormat == AVIF_PIXEL_FORMAT_YUV400 {
            view.pointee.yuvPlanes = (y.0, nil, nil)
            view.pointee.yuvRowBytes = (y.1, 0, 0)
        } else {
            let cb = plane(heif_channel_Cb)
            let cr = plane(heif_channel_Cr)
            guard cb.0 != nil, cr.0 != nil else { return nil }
            view.pointee.yuvPlanes = (y.0, cb.0, cr.0)
            view.pointee.yuvRowBytes = (y.1, cb.1, cr.1)
        }
        if hasAlpha {
            let alpha = plane(heif_channel_Alpha)
            guard alpha.0 != nil else { return nil }
            view.pointee.alphaPlane = alpha.0
            view.pointee.alphaRowBytes = alpha.1
        }
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, view)
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.depth = 8
        // Handed over as stored (premultiplied files stay premultiplied; the caller undoes it).
        view.pointee.alphaPremultiplied = alphaMode == .premultiplied ? AVIF_TRUE : AVIF_FALSE
        rgb.alphaPremultiplied = view.pointee.alphaPremultiplied
        // libavif's libyuv path leaves 8-bit limited-range monochrome unexpanded; its own path is right.
        if yuvFormat == AVIF_PIXEL_FORMAT_YUV400 { rgb.avoidLibYUV = AVIF_TRUE }
        defer {
            // The planes are libheif's: detach them before avifImageDestroy.
            view.pointee.yuvPlanes = (nil, nil, nil)
            view.pointee.alphaPlane = nil
        }
        return try PixelBuffer(width: width, height: height, format: .rgba8, alphaMode: alphaMode) { output in
            rgb.pixels = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
            rgb.rowBytes = UInt32(width * 4)
            let result = avifImageYUVToRGB(view, &rgb)
            guard result == AVIF_RESULT_OK else {
                throw CodecError.corrupt(format: format, reason: String(cString: avifResultToString(result)))
            }
        }
    }
}
