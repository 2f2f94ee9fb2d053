import CHEIF
import CHEIFPlugin
import Foundation
import ImagoCore

/// Decodes HEIC/HEIF (HEVC through FFmpeg's libavcodec) with libheif 1.15: the primary image. AV1-coded items (AVIF) are
/// refused with ``CodecError/corrupt(format:reason:)``; ``AVIFDecoder`` decodes those.
///
/// - The primary image, tiled grids included, with alpha from its auxiliary alpha image (straight; a
///   premultiplied file is unpremultiplied); 8/10/12-bit samples delivered as 8-bit RGBA, with
///   ``ImageContainer/bitDepth`` saying what the file held.
/// - The file's transforms (`clap`, `irot`, `imir`) are applied exactly once, by libheif, whatever
///   ``DecodingOptions/appliesOrientation`` says: they are part of the image's geometry, and libheif 1.15 cannot
///   report the rotation without also dropping the crop. The EXIF orientation is never applied on top
///   (HEIF requires writers to reset it), so ``ImageContainer/orientation`` is always `.up`.
/// - Depth images and other top-level images are ignored. An image sequence (`.heics`) gives its primary image
///   when it has one (libheif 1.15 does not read the sequence track).
/// - Embedded thumbnails (``DecodingOptions/embeddedThumbnails``): by default, with a
///   ``DecodingOptions/targetSize`` the image is downsampled to, the smallest thumbnail of the primary image that is
///   at least that size, has its aspect ratio (within a pixel) and has alpha when it does is decoded instead, with
///   the primary image's colour when it declares none of its own; with `.always`, the largest such thumbnail.
///   ``ImageContainer/originalSize`` stays the primary image's.
/// - Limits before decoding: every item's `ispe` (the auxiliary alpha image's too: libheif would allocate it at
///   its declared size unchecked) and every grid's and overlay's canvas as their own bytes declare it (libheif
///   allocates them at that size, whatever their `ispe` says), then the displayed and coded sizes from the image
///   handle, against ``DecodingOptions/pixelLimit``; libheif's own maximum image size is set to the same bound.
///   The limit is never above 268,435,455 pixels (2³¹ bytes at 8 bytes a pixel), past which libheif 1.15's plane
///   sizes overflow.
/// - ``DecodingOptions/targetSize``: libheif decodes full size, then the image is downsampled to fit (for an
///   8-bit file without alpha and a target at least 4× smaller, first averaged in whole blocks straight from
///   libheif's planes, so no full-size RGBA copy is made).
/// - Speed: HEVC is decoded on the calling thread by Imago's libheif plugin over libavcodec (`CHEIFPlugin`,
///   single-threaded; ~30 % less CPU than libde265 1.0.11), which converts 8-bit YCbCr to RGB itself; alpha and
///   deeper files take libheif's own conversion. libheif's own libde265 plugin stays as its fallback.
/// - A truncated file throws ``CodecError/truncated(format:)`` (HEVC has no partial decode here;
///   ``DecodingOptions/allowsPartialData`` changes nothing); ``DecodingOptions/decodesFirstFrameOnly`` has
///   nothing to do (one image).
///
/// The colour information (`colr`: ICC profile or nclx) is not applied; the internal `decodeWithColour` returns
/// it beside the pixels for a colour-management stage.
///
/// Thread-safe: the decoder has no state; each call uses its own libheif context.
///
/// ```swift
/// let container = try HEIFDecoder().decode(data, options: DecodingOptions(targetSize: PixelSize(width: 256, height: 256)))
/// ```
public struct HEIFDecoder: ImageDecoding {
    /// Threads libheif may use to decode the tiles of a grid. Default 1: every tile is decoded on the calling
    /// thread, by Imago's plugin with its own YCbCr → RGB conversion. More threads decode tiles concurrently
    /// through libheif's `std::async`; those tiles take libheif's slower conversion (same pixels, more CPU).
    public var maxThreads: Int

    /// A HEIF decoder using up to `maxThreads` threads per decode (default 1).
    public init(maxThreads: Int = 1) {
        self.maxThreads = max(1, maxThreads)
    }

    /// `[.heic, .heif]`.
    public var formats: Set<ImageFormat> { [.heic, .heif] }

    /// Decodes the primary image of `data`.
    ///
    /// - Throws: ``CodecError``: `.empty`, `.corrupt`, `.truncated`, `.tooManyPixels`.
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        try ColorManagement.applying(decodeWithColour(data, options: options), options: options)
    }

    /// The most pixels an image may have here, whatever ``DecodingOptions/pixelLimit`` allows: libheif 1.15 sizes
    /// a plane's memory as rows × stride in a 32-bit `int`, so a plane of 2³¹ bytes or more would overflow into a
    /// small allocation that libheif then writes past. Images of up to 8 bytes a pixel (16-bit RGBA) stay below.
    public static let libheifPixelCeiling = Int(Int32.max) / 8

    /// Decodes `data` and returns the primary image's colour description beside the pixels (not converted).
    func decodeWithColour(_ data: Data, options: DecodingOptions) throws -> DecodedWithColour {
        guard !data.isEmpty else { throw CodecError.empty }
        var options = options
        options.pixelLimit = min(options.pixelLimit, Self.libheifPixelCeiling)
        let format = ImageFormat(sniffing: data) == .heif ? ImageFormat.heif : .heic
        return try data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { throw CodecError.empty }
            // Every item's declared size (the alpha image's too, which libheif would allocate unchecked), and every
            // grid's and overlay's canvas, which libheif allocates from their own bytes.
            // It returns every entry of every `iinf`: of an ID typed twice, libheif takes the first, ISOBMFFItems
            // the last.
            let entries = try ISOBMFFItems.checkDeclaredSizes(in: raw, options: options, format: format)
            try Self.refuseAV1Items(entries, format: format)
            let overlays = Set(entries.filter { $0.type == "iovl" }.map(\.id))
            guard let context = heif_context_alloc() else {
                throw CodecError.corrupt(format: format, reason: "libheif could not create a context")
            }
            defer { heif_context_free(context) }
            // libheif checks each dimension against this while parsing; the pixel count is checked below.
            heif_context_set_maximum_image_size_limit(context, Int32(clamping: max(1, options.pixelLimit)))
            // Imago's HEVC plugin (CHEIFPlugin) decodes on this thread and converts to RGB itself; with one
            // thread, libheif decodes a grid's tiles on this thread too (0 = no std::async), so the plugin sees the
            // colour description set for this thread.
            try Self.check(imago_heif_register_plugin(context), format)
            // The plugin refuses an SPS declaring more pixels than this before libavcodec sizes its tables.
            imago_heif_set_pixel_limit(Int64(clamping: options.pixelLimit))
            defer { imago_heif_set_pixel_limit(0) }
            heif_context_set_max_decoding_threads(context, maxThreads <= 1 ? 0 : Int32(clamping: maxThreads))
            try Self.check(heif_context_read_from_memory_without_copy(context, base, raw.count, nil), format)
            var handle: OpaquePointer?
            try Self.check(heif_context_get_primary_image_handle(context, &handle), format)
            guard let handle else { throw CodecError.corrupt(format: format, reason: "no primary image") }
            defer { heif_image_handle_release(handle) }

            let width = Int(heif_image_handle_get_width(handle))
            let height = Int(heif_image_handle_get_height(handle))
            try options.checkDimensions(width: width, height: height, format: format)
            let codedWidth = Int(heif_image_handle_get_ispe_width(handle))
            let codedHeight = Int(heif_image_handle_get_ispe_height(handle))
            if codedWidth > 0, codedHeight > 0 {
                try options.checkDimensions(width: codedWidth, height: codedHeight, format: format)
            }
            try Self.checkAuxiliaryImages(
                of: handle, overlays: overlays, format: format, options: options)
            let primaryColour = Self.colour(of: handle)
            let primaryHasAlpha = heif_image_handle_has_alpha_channel(handle) != 0
            let primaryBitDepth = Int(heif_image_handle_get_luma_bits_per_pixel(handle))
            // The smallest embedded thumbnail that gives the target size, when one does: decoded instead.
            let thumbnail =
                options.embeddedThumbnails != .never
                ? try Self.thumbnail(
                    of: handle, size: PixelSize(width: width, height: height), hasAlpha: primaryHasAlpha,
                    overlays: overlays, format: format, options: options) : nil
            defer { thumbnail.map(heif_image_handle_release) }
            let source = thumbnail ?? handle
            let hasAlpha = heif_image_handle_has_alpha_channel(source) != 0
            let isPremultiplied = heif_image_handle_is_premultiplied_alpha(source) != 0
            let bitDepth = Int(heif_image_handle_get_luma_bits_per_pixel(source))
            let ownColour = thumbnail == nil ? primaryColour : Self.colour(of: source)
            let colour = ownColour.iccProfile == nil && ownColour.cicp == nil ? primaryColour : ownColour

            let planar =
                hasAlpha || bitDepth != 8 || heif_image_handle_get_chroma_bits_per_pixel(source) != 8
                ? nil
                : try Self.decodePlanarRGB(source, cicp: colour.cicp, format: format, options: options)
            var image: PixelBuffer
            let decodedSize: PixelSize
            if let planar {
                (image, decodedSize) = planar
            } else {
                image = try Self.decodePixels(
                    source, format: format, alphaMode: hasAlpha && isPremultiplied ? .premultiplied : .straight,
                    options: options)
                image = hasAlpha ? image.unpremultiplied() : image.assumingOpaque()
                decodedSize = image.size
            }
            let fitted = TargetFitting.fittedSize(
                of: decodedSize, within: options.targetSize, orientation: .up, mode: options.targetMode)
            image = try image.resampledWithVectorKernel(to: fitted)
            var container = ImageContainer(
                frames: [ImageFrame(buffer: image)], format: format,
                originalSize: PixelSize(width: width, height: height),
                bitDepth: primaryBitDepth > 0 ? primaryBitDepth : nil)
            if options.readsMetadata { container.metadata = Self.metadata(of: handle) }
            return (container, colour)
        }
    }

    /// The primary image's EXIF block (its 4-byte offset to the TIFF header skipped) and XMP packet (a `mime` item
    /// of type `application/rdf+xml`), the first of each within ``ImageMetadata/maximumBlockLength``.
    static func metadata(of handle: OpaquePointer) -> ImageMetadata? {
        let count = Int(heif_image_handle_get_number_of_metadata_blocks(handle, nil))
        guard count > 0, count <= 64 else { return nil }
        var ids = [heif_item_id](repeating: 0, count: count)
        let listed = Int(heif_image_handle_get_list_of_metadata_block_IDs(handle, nil, &ids, Int32(count)))
        var metadata = ImageMetadata()
        for id in ids.prefix(listed) {
            let size = heif_image_handle_get_metadata_size(handle, id)
            guard size > 4, size <= ImageMetadata.maximumBlockLength + 8 else { continue }
            let type = heif_image_handle_get_metadata_type(handle, id).map { String(cString: $0) } ?? ""
            let content = heif_image_handle_get_metadata_content_type(handle, id).map { String(cString: $0) } ?? ""
            let isExif = type == "Exif" && metadata.exif == nil
            let isXMP = type == "mime" && content == "application/rdf+xml" && metadata.xmp == nil
            guard isExif || isXMP else { continue }
            var bytes = Data(count: size)
            let read = bytes.withUnsafeMutableBytes { heif_image_handle_get_metadata(handle, id, $0.baseAddress) }
            guard read.code == heif_error_Ok else { continue }
            if isXMP {
                metadata.xmp = bytes
            } else {
                metadata.exif = ExifBox.block(in: bytes)
            }
        }
        return metadata.bounded
    }

    /// The primary image converted by libheif to interleaved RGBA8 with its transforms applied.
    private static func decodePixels(
        _ handle: OpaquePointer, format: ImageFormat, alphaMode: PixelBuffer.AlphaMode, options: DecodingOptions
    ) throws -> PixelBuffer {
        guard let decoding = heif_decoding_options_alloc() else {
            throw CodecError.corrupt(format: format, reason: "libheif could not allocate decoding options")
        }
        defer { heif_decoding_options_free(decoding) }
        decoding.pointee.ignore_transformations = 0
        decoding.pointee.convert_hdr_to_8bit = 1
        var decoded: OpaquePointer?
        try check(
            heif_decode_image(handle, &decoded, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, decoding), format)
        guard let decoded else { throw CodecError.corrupt(format: format, reason: "no decoded image") }
        defer { heif_image_release(decoded) }
        let width = Int(heif_image_get_width(decoded, heif_channel_interleaved))
        let height = Int(heif_image_get_height(decoded, heif_channel_interleaved))
        try options.checkDimensions(width: width, height: height, format: format)
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride),
            Int(stride) >= width * 4
        else { throw CodecError.corrupt(format: format, reason: "libheif returned no RGBA plane") }
        let rowBytes = width * 4
        return try PixelBuffer(width: width, height: height, format: .rgba8, alphaMode: alphaMode) { output in
            guard let to = output.baseAddress else { return }
            for row in 0..<height {
                (to + row * rowBytes).copyMemory(from: plane + row * Int(stride), byteCount: rowBytes)
            }
        }
    }

    /// The handle of the thumbnail of the primary image `handle` (of displayed `size`) that stands in for it: with
    /// ``DecodingOptions/EmbeddedThumbnails/whenLargeEnough``, the smallest at least the size the image would be
    /// downsampled to for ``DecodingOptions/targetSize`` (none when it asks for no downsampling); with
    /// ``DecodingOptions/EmbeddedThumbnails/always``, the largest. Each has the same aspect ratio within a pixel at
    /// the thumbnail's scale, alpha when `hasAlpha`, and its auxiliary images checked as the primary's. `nil`
    /// when none qualifies.
    private static func thumbnail(
        of handle: OpaquePointer, size: PixelSize, hasAlpha: Bool, overlays: Set<UInt32>,
        format: ImageFormat, options: DecodingOptions
    ) throws -> OpaquePointer? {
        let always = options.embeddedThumbnails == .always
        let wanted =
            always
            ? PixelSize(width: 1, height: 1)
            : TargetFitting.fittedSize(
                of: size, within: options.targetSize, orientation: .up, mode: options.targetMode)
        guard wanted.width < size.width || wanted.height < size.height else { return nil }
        let count = Int(heif_image_handle_get_number_of_thumbnails(handle))
        guard count > 0, count <= 64 else { return nil }
        var ids = [heif_item_id](repeating: 0, count: count)
        let listed = Int(heif_image_handle_get_list_of_thumbnail_IDs(handle, &ids, Int32(count)))
        var best: (handle: OpaquePointer, pixels: Int)?
        for id in ids.prefix(listed) {
            var candidate: OpaquePointer?
            guard heif_image_handle_get_thumbnail(handle, id, &candidate).code == heif_error_Ok, let candidate else {
                continue
            }
            let width = Int(heif_image_handle_get_width(candidate))
            let height = Int(heif_image_handle_get_height(candidate))
            let codedWidth = Int(heif_image_handle_get_ispe_width(candidate))
            let codedHeight = Int(heif_image_handle_get_ispe_height(candidate))
            let qualifies =
                width >= wanted.width && height >= wanted.height && width < size.width && height <= size.height
                && codedWidth <= size.width * 2 && codedHeight <= size.height * 2
                && abs(width * size.height - height * size.width) <= max(size.width, size.height)
                && (!hasAlpha || heif_image_handle_has_alpha_channel(candidate) != 0)
                && !overlays.contains(id)
                && (try? checkAuxiliaryImages(of: candidate, overlays: overlays, format: format, options: options))
                    != nil
            let better = best.map { always ? width * height > $0.pixels : width * height < $0.pixels } ?? true
            if qualifies, better {
                best.map { heif_image_handle_release($0.handle) }
                best = (candidate, width * height)
            } else {
                heif_image_handle_release(candidate)
            }
        }
        return best?.handle
    }

    /// Checks every auxiliary image of `handle` (alpha, depth): its size against the pixel limit, and that it is
    /// not an overlay (`iovl` in any of its entries, `overlays`). libheif 1.15 decodes the alpha image with the
    /// primary and allocates an overlay's canvas at whatever size its data declares, unchecked: a fuzzed 384×256
    /// file whose alpha item was retyped `iovl` made it allocate 1.2 GB. No encoder writes overlay alpha; such a
    /// file is refused.
    private static func checkAuxiliaryImages(
        of handle: OpaquePointer, overlays: Set<UInt32>, format: ImageFormat, options: DecodingOptions
    ) throws {
        let count = Int(heif_image_handle_get_number_of_auxiliary_images(handle, 0))
        guard count > 0 else { return }
        guard count <= 64 else { throw CodecError.corrupt(format: format, reason: "\(count) auxiliary images") }
        var ids = [heif_item_id](repeating: 0, count: count)
        let listed = Int(heif_image_handle_get_list_of_auxiliary_image_IDs(handle, 0, &ids, Int32(count)))
        for id in ids.prefix(listed) {
            guard !overlays.contains(id) else {
                throw CodecError.corrupt(format: format, reason: "auxiliary image \(id) is an overlay (iovl)")
            }
            var auxiliary: OpaquePointer?
            try check(heif_image_handle_get_auxiliary_image_handle(handle, id, &auxiliary), format)
            guard let auxiliary else { continue }
            defer { heif_image_handle_release(auxiliary) }
            for (width, height) in [
                (heif_image_handle_get_width(auxiliary), heif_image_handle_get_height(auxiliary)),
                (heif_image_handle_get_ispe_width(auxiliary), heif_image_handle_get_ispe_height(auxiliary)),
            ] where width > 0 && height > 0 {
                try options.checkDimensions(width: Int(width), height: Int(height), format: format)
            }
        }
    }

    /// Refuses a file with an AV1-coded item (`av01`): libheif 1.15's dav1d plugin leaked 120 bytes inside
    /// libdav1d per decode of a malformed one (RELIABILITY §16), and AVIF is ``AVIFDecoder``'s (libavif). The
    /// plugin registered with every context (CHEIFPlugin) refuses AV1 as well, for an item this parser misses.
    private static func refuseAV1Items(_ entries: [(id: UInt32, type: String)], format: ImageFormat) throws {
        guard let id = entries.filter({ $0.type == "av01" }).map(\.id).min() else { return }
        throw CodecError.corrupt(
            format: format, reason: "item \(id) is AV1-coded (av01): AVIF is decoded by AVIFDecoder, not HEIFDecoder")
    }

    private static func colour(of handle: OpaquePointer) -> EmbeddedColour {
        var colour = EmbeddedColour.unspecified
        let iccSize = heif_image_handle_get_raw_color_profile_size(handle)
        if iccSize > 0, iccSize < 16 << 20 {
            var bytes = Data(count: iccSize)
            let error = bytes.withUnsafeMutableBytes { heif_image_handle_get_raw_color_profile(handle, $0.baseAddress) }
            if error.code == heif_error_Ok { colour.iccProfile = bytes }
        }
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        let read = heif_image_handle_get_nclx_color_profile(handle, &nclx)
        // libheif 1.15 allocates the profile before it checks the values, and returns the error with the profile
        // still allocated (a code point it does not know, such as reserved primaries): freed either way.
        defer { if let nclx { heif_nclx_color_profile_free(nclx) } }
        if read.code == heif_error_Ok, let nclx {
            colour.cicp = EmbeddedColour.CICP(
                primaries: Int(nclx.pointee.color_primaries.rawValue),
                transfer: Int(nclx.pointee.transfer_characteristics.rawValue),
                matrix: Int(nclx.pointee.matrix_coefficients.rawValue), isFullRange: nclx.pointee.full_range_flag != 0)
        }
        return colour
    }

    /// Turns a libheif error into a ``CodecError`` (nothing for `heif_error_Ok`).
    static func check(_ error: heif_error, _ format: ImageFormat) throws {
        if error.code == heif_error_Ok { return }
        if error.subcode == heif_suberror_End_of_data { throw CodecError.truncated(format: format) }
        let message = error.message.map { String(cString: $0) } ?? "libheif error \(error.code.rawValue)"
        throw CodecError.corrupt(format: format, reason: message)
    }
}
