import CWebP
import Foundation
import ImagoCore

/// Encodes still WebP with libwebp: lossy at ``EncodingOptions/quality``, or lossless with
/// ``EncodingOptions/isLossless``.
///
/// - Lossy: quality 0…1 maps to libwebp's 0…100 (default 0.85 → 85), at ``method`` (default 4) and with
///   ``preset``'s tuning (default libwebp's); alpha is kept, compressed losslessly.
/// - Lossless: libwebp's default effort (quality 75) at ``method``, and `exact` set so that even the colour under
///   fully transparent pixels survives: decoding gives back exactly the input bytes.
/// - Colour: ``EncodingOptions/colorProfile`` is written as an `ICCP` chunk, byte-identical.
///   ``EncodingOptions/metadata``: `EXIF` and `XMP ` chunks (IPTC has no place in WebP).
/// - `gray8` input is expanded to opaque RGBA first. WebP images are at most 16383×16383.
/// - Animated containers (``encode(_:options:)-(ImageContainer,_)``) are written with libwebpmux's
///   `WebPAnimEncoder`: every frame, its duration (rounded to milliseconds) and the loop count; see
///   `WebPEncoder+Animation.swift`.
///
/// Thread-safe: the encoder has no state.
///
/// ```swift
/// let data = try WebPEncoder().encode(buffer, options: EncodingOptions(isLossless: true))
/// ```
public struct WebPEncoder: ImageEncoding, YCbCrEncoding {
    /// libwebp's presets for lossy encoding (`WebPConfigPreset`): tunings of its noise shaping and filters for a
    /// kind of picture, imgproxy's `IMGPROXY_WEBP_PRESET`.
    public enum Preset: String, Sendable, Hashable, CaseIterable {
        /// libwebp's defaults.
        case `default`
        /// Digital pictures such as portraits and indoor shots.
        case picture
        /// Outdoor photographs in natural light.
        case photo
        /// Hand or line drawings with high-contrast details.
        case drawing
        /// Small colourful images.
        case icon
        /// Text-like images.
        case text

        var libwebp: WebPPreset {
            switch self {
            case .default: WEBP_PRESET_DEFAULT
            case .picture: WEBP_PRESET_PICTURE
            case .photo: WEBP_PRESET_PHOTO
            case .drawing: WEBP_PRESET_DRAWING
            case .icon: WEBP_PRESET_ICON
            case .text: WEBP_PRESET_TEXT
            }
        }
    }

    /// libwebp's `method`, 0 (fastest) … 6 (smallest files): imgproxy's `IMGPROXY_WEBP_EFFORT`. Default 4
    /// (libwebp's and imgproxy's default).
    public let method: Int
    /// The lossy preset. Default ``Preset/default``.
    public let preset: Preset

    /// A WebP encoder at `method` (clamped to 0…6; default 4) and `preset` (default ``Preset/default``); quality
    /// and losslessness come with each call's ``EncodingOptions``.
    public init(method: Int = 4, preset: Preset = .default) {
        self.method = min(6, max(0, method))
        self.preset = preset
    }

    /// `method=N` when ``method`` is not the default 4 and `preset=NAME` when ``preset`` is not the default,
    /// joined by `;`; `nil` for the defaults (so keys made before these settings existed stay valid).
    public var settingsIdentifier: String? {
        let parts = [method == 4 ? nil : "method=\(method)", preset == .default ? nil : "preset=\(preset.rawValue)"]
        let text = parts.compactMap { $0 }.joined(separator: ";")
        return text.isEmpty ? nil : text
    }

    /// `.webp`.
    public var format: ImageFormat { .webp }

    /// Encodes `image` (straight alpha) as a WebP file.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` with libwebp's reason (e.g. too large).
    public func encode(_ image: PixelBuffer, options: EncodingOptions) throws -> Data {
        try encode(image, options: options, importsRGB24: true)
    }

    /// ``encode(_:options:)``, with `importsRGB24` passed to ``picture(of:isARGB:importsRGB24:)`` (tests compare
    /// the two imports).
    func encode(_ image: PixelBuffer, options: EncodingOptions, importsRGB24: Bool) throws -> Data {
        var config = try configuration(options)
        // Lossy: straight to YUV (libwebp's converter, the one WebPEncode would run on an ARGB picture, so the
        // bytes are the same) without the ARGB copy in between. Lossless encodes ARGB.
        var picture = try picture(of: image, isARGB: options.isLossless, importsRGB24: importsRGB24)
        defer { WebPPictureFree(&picture) }
        return try encoded(&picture, config: &config, options: options)
    }

    /// Encodes `image`'s planes, lossy (``EncodingOptions/isLossless`` is not taken: a lossless file is RGB), with
    /// the settings ``encode(_:options:)`` uses; the colour profile and metadata as there. The planes are mapped
    /// from JPEG's full range to the video range lossy WebP stores (luma 16 + 219/255 y, chroma
    /// 128 + 224/255 (c − 128), rounded: the scale of libwebp's own RGB → YUV conversion) as they are copied
    /// into libwebp's picture.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` with libwebp's reason (e.g. too large), or for
    ///   chroma planes that are not half the luma plane's size.
    package func encode(_ image: YCbCrImage, options: EncodingOptions) throws -> Data {
        var lossy = options
        lossy.isLossless = false
        var config = try configuration(lossy)
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw failure("libwebp version mismatch") }
        picture.use_argb = 0
        picture.colorspace = WEBP_YUV420
        picture.width = Int32(clamping: image.size.width)
        picture.height = Int32(clamping: image.size.height)
        guard WebPPictureAlloc(&picture) != 0 else { throw failure(Self.reason(picture.error_code)) }
        defer { WebPPictureFree(&picture) }
        let destinations = [
            (picture.y, picture.y_stride), (picture.u, picture.uv_stride), (picture.v, picture.uv_stride),
        ]
        try image.checkPlanes(for: .webp)
        for (index, plane) in [image.y, image.cb, image.cr].enumerated() {
            guard let destination = destinations[index].0 else { throw failure("libwebp gave no plane") }
            let stride = Int(destinations[index].1)
            let table = index == 0 ? Self.videoLuma : Self.videoChroma
            plane.withUnsafeBytes { bytes in
                table.withUnsafeBufferPointer { table in
                    for row in 0..<plane.height {
                        let from =
                            bytes.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self)
                            + row * plane.bytesPerRow
                        let to = destination + row * stride
                        for x in 0..<plane.width { to[x] = table[Int(from[x])] }
                    }
                }
            }
        }
        return try encoded(&picture, config: &config, options: lossy)
    }

    /// Full-range luma (0…255) to the video range (16…235).
    private static let videoLuma: [UInt8] = (0..<256).map { UInt8(16 + (Double($0) * 219 / 255).rounded()) }
    /// Full-range chroma (0…255 around 128) to the video range (16…240).
    private static let videoChroma: [UInt8] = (0..<256).map {
        UInt8((128 + (Double($0) - 128) * 224 / 255).rounded())
    }

    /// `picture` encoded with `config`, with `options`' colour profile and metadata embedded.
    private func encoded(
        _ picture: inout WebPPicture, config: inout WebPConfig, options: EncodingOptions
    ) throws
        -> Data
    {
        let writer = UnsafeMutablePointer<WebPMemoryWriter>.allocate(capacity: 1)
        defer { writer.deallocate() }
        WebPMemoryWriterInit(writer)
        defer { WebPMemoryWriterClear(writer) }  // frees the encoded bytes (WebPFree) after we copied them
        picture.writer = WebPMemoryWrite
        picture.custom_ptr = UnsafeMutableRawPointer(writer)
        guard WebPEncode(&config, &picture) != 0 else { throw failure(Self.reason(picture.error_code)) }
        guard let mem = writer.pointee.mem, writer.pointee.size > 0 else { throw failure("no output") }
        let encoded = Data(bytes: mem, count: writer.pointee.size)
        return try Embedding.webp(encoded, profile: options.colorProfile?.data, metadata: options.metadata?.bounded)
    }

    /// libwebp's configuration for `options` (shared by still and animated encoding).
    func configuration(_ options: EncodingOptions) throws -> WebPConfig {
        var config = WebPConfig()
        let quality = Float(min(max(options.quality, 0), 1) * 100)
        guard WebPConfigPreset(&config, options.isLossless ? WEBP_PRESET_DEFAULT : preset.libwebp, quality) != 0
        else { throw failure("libwebp version mismatch") }
        if options.isLossless {
            config.lossless = 1
            config.exact = 1
            config.quality = 75
        }
        config.method = Int32(method)
        guard WebPValidateConfig(&config) != 0 else { throw failure("invalid encoder configuration") }
        return config
    }

    func failure(_ reason: String) -> CodecError { .encodingFailed(format: .webp, reason: reason) }

    static func reason(_ code: WebPEncodingError) -> String {
        switch code {
        case VP8_ENC_ERROR_OUT_OF_MEMORY, VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY: "libwebp ran out of memory"
        case VP8_ENC_ERROR_BAD_DIMENSION: "WebP images are at most 16383x16383 pixels"
        case VP8_ENC_ERROR_FILE_TOO_BIG: "the encoded file would exceed 4 GiB"
        default: "libwebp error \(code.rawValue)"
        }
    }
}

extension WebPEncoder {
    /// A libwebp picture holding `image`, the caller frees it with `WebPPictureFree`: as straight-alpha ARGB when
    /// `isARGB` (default; lossless encoding and `WebPAnimEncoder` need it), else as YUV 4:2:0 (with an alpha plane
    /// when a pixel is not opaque), converted by libwebp's own `ImportYUVAFromRGBA` without dithering: the
    /// conversion `WebPEncode` runs on an ARGB picture for lossy output, so a lossy encode gives the same bytes
    /// either way.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` when libwebp cannot take the pixels.
    ///
    /// With `importsRGB24` (default) an opaque image converted to YUV is handed over as RGB, 3 bytes a pixel: the
    /// one layout libwebp converts with its vector row converters (`WebPConvertRGB24ToY`; an RGBA picture takes
    /// its scalar loop, and a scan of the alpha bytes). The same luma, computed the same way, and the same chroma
    /// loop: the same bytes out, for less CPU.
    func picture(of image: PixelBuffer, isARGB: Bool = true, importsRGB24: Bool = true) throws -> WebPPicture {
        let rgba = image.straightRGBA
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw failure("libwebp version mismatch") }
        picture.use_argb = isARGB ? 1 : 0
        picture.width = Int32(clamping: rgba.width)
        picture.height = Int32(clamping: rgba.height)
        let imported: Int32
        if !isARGB, importsRGB24, !rgba.hasTransparency {
            let rowBytes = rgba.width * 3
            let rgb = [UInt8](unsafeUninitializedCapacity: rowBytes * rgba.height) { buffer, initialized in
                for y in 0..<rgba.height {
                    rgba.copyRow(y, into: buffer.baseAddress.unsafelyUnwrapped + y * rowBytes, dropsAlpha: true)
                }
                initialized = rowBytes * rgba.height
            }
            imported = rgb.withUnsafeBufferPointer {
                WebPPictureImportRGB(&picture, $0.baseAddress, Int32(clamping: rowBytes))
            }
        } else {
            imported = rgba.withUnsafeBytes { bytes in
                WebPPictureImportRGBA(
                    &picture, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(clamping: rgba.bytesPerRow))
            }
        }
        guard imported != 0 else {
            let reason = Self.reason(picture.error_code)
            WebPPictureFree(&picture)
            throw failure(reason)
        }
        return picture
    }
}
