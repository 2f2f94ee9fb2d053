import CHEIF
import CHEIFPlugin
import ImagoCore

extension HEIFDecoder {
    /// The primary image of an 8-bit file without alpha, decoded to libheif's planar RGB 4:4:4 and made RGBA8
    /// in one pass (or, for a `targetSize` at least 4× smaller, averaged in k×k blocks straight from the planes,
    /// so no full-size RGBA image exists); `nil` when libheif cannot give that layout (then the caller asks for
    /// interleaved RGBA as before).
    ///
    /// libheif 1.15 converts every decoded HEVC image to planar RGB 4:4:4 inside its decode, whatever output is
    /// asked for: asking for that layout skips its second, interleaving conversion (and asking for YCbCr would
    /// convert back). With Imago's plugin (CHEIF/shim.h) registered, the first conversion is the plugin's own
    /// integer one from libavcodec's planes, with the matrix and range of the file's nclx (set here for the calling
    /// thread) or else of the bitstream, as libheif would choose them.
    ///
    /// Returns the buffer (fully opaque, marked so) and the decoded image's full size, which the target is
    /// fitted to.
    static func decodePlanarRGB(
        _ handle: OpaquePointer, cicp: EmbeddedColour.CICP?, format: ImageFormat, options: DecodingOptions
    ) throws -> (buffer: PixelBuffer, fullSize: PixelSize)? {
        guard let decoding = heif_decoding_options_alloc() else {
            throw CodecError.corrupt(format: format, reason: "libheif could not allocate decoding options")
        }
        defer { heif_decoding_options_free(decoding) }
        decoding.pointee.ignore_transformations = 0
        imago_heif_job_begin(cicp == nil ? 0 : 1, Int32(cicp?.matrix ?? 0), cicp?.isFullRange == true ? 1 : 0)
        defer { imago_heif_job_end() }
        var decoded: OpaquePointer?
        let error = heif_decode_image(handle, &decoded, heif_colorspace_RGB, heif_chroma_444, decoding)
        // A layout libheif cannot turn into planar RGB (monochrome): the caller's RGBA path converts it.
        if error.code == heif_error_Unsupported_feature { return nil }
        try check(error, format)
        guard let decoded else { throw CodecError.corrupt(format: format, reason: "no decoded image") }
        defer { heif_image_release(decoded) }
        guard heif_image_get_colorspace(decoded) == heif_colorspace_RGB,
            heif_image_get_chroma_format(decoded) == heif_chroma_444,
            [heif_channel_R, heif_channel_G, heif_channel_B].allSatisfy({
                heif_image_get_bits_per_pixel_range(decoded, $0) == 8
            })
        else { return nil }
        let width = Int(heif_image_get_width(decoded, heif_channel_R))
        let height = Int(heif_image_get_height(decoded, heif_channel_R))
        try options.checkDimensions(width: width, height: height, format: format)
        var strides: [Int32] = [0, 0, 0]
        var planes: [UnsafePointer<UInt8>] = []
        for (index, channel) in [heif_channel_R, heif_channel_G, heif_channel_B].enumerated() {
            guard heif_image_get_width(decoded, channel) == width, heif_image_get_height(decoded, channel) == height,
                let plane = heif_image_get_plane_readonly(decoded, channel, &strides[index]),
                Int(strides[index]) >= width
            else { throw CodecError.corrupt(format: format, reason: "libheif returned no RGB planes") }
            planes.append(plane)
        }
        let size = PixelSize(width: width, height: height)
        let fitted = TargetFitting.fittedSize(
            of: size, within: options.targetSize, orientation: .up, mode: options.targetMode)
        // Pillow's reducing gap: average whole blocks down to at least twice the target, then resample.
        let factor = min(1024, min(width / max(1, fitted.width), height / max(1, fitted.height)) / 2)
        if factor >= 2 {
            let reduced = PixelSize(width: (width + factor - 1) / factor, height: (height + factor - 1) / factor)
            let buffer = try PixelBuffer(width: reduced.width, height: reduced.height, format: .rgba8) { output in
                guard let to = output.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    imago_heif_box_reduce(
                        planes[0], strides[0], planes[1], strides[1], planes[2], strides[2], Int32(width),
                        Int32(height), Int32(factor), to) != 0
                else { throw CodecError.corrupt(format: format, reason: "out of memory reducing the image") }
            }
            return (buffer.assumingOpaque(), size)
        }
        let rowBytes = width * 4
        let buffer = try PixelBuffer(width: width, height: height, format: .rgba8) { output in
            guard let to = output.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            for row in 0..<height {
                imago_heif_interleave_row(
                    planes[0] + row * Int(strides[0]), planes[1] + row * Int(strides[1]),
                    planes[2] + row * Int(strides[2]), nil, to + row * rowBytes, Int32(width))
            }
        }
        return (buffer.assumingOpaque(), size)
    }
}
