import CHEIF
import Foundation
import ImagoCore

/// Encodes still HEIC (HEVC in HEIF) with libheif and its x265 encoder, as imgproxy's `heifsave` does for `heic`
/// outputs: lossy 8-bit 4:2:0 at ``EncodingOptions/quality`` (libheif's 0…100 scale), alpha as an auxiliary
/// image when the image has any transparency.
///
/// - ``preset`` is x265's speed preset; default `medium` (libheif's own default, `slow`, takes about twice the
///   time for a few per cent smaller files).
/// - ``EncodingOptions/colorProfile`` is written as the image's ICC profile (`prof`); otherwise none is (sRGB).
///   `gray8` input is expanded to RGB.
/// - Limits: x265's and libheif's; HEIF's sizes are 32-bit.
///
/// Thread-safe: the encoder holds only its settings; each call creates its own libheif context and encoder.
///
/// ```swift
/// let heic = try HEICEncoder().encode(image, options: EncodingOptions(quality: 0.8))
/// ```
public struct HEICEncoder: ImageEncoding {
    /// x265's preset, `ultrafast` … `placebo`. Default `medium`.
    public var preset: String

    /// An encoder with x265's `preset` (default `medium`).
    public init(preset: String = "medium") {
        self.preset = preset
    }

    /// `.heic`.
    public var format: ImageFormat { .heic }

    /// `"preset=NAME"`: the preset changes the bytes written.
    public var settingsIdentifier: String? { "preset=\(preset)" }

    /// Whether libheif here has an HEVC encoder (Debian's links x265).
    public static var isAvailable: Bool {
        guard let context = heif_context_alloc() else { return false }
        defer { heif_context_free(context) }
        var encoder: OpaquePointer?
        let error = heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder)
        if let encoder { heif_encoder_release(encoder) }
        return error.code == heif_error_Ok && encoder != nil
    }

    /// Encodes `image` (straight or premultiplied alpha) as a HEIC file.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` with libheif's message (no HEVC encoder, an image
    ///   x265 refuses, a preset it does not know).
    public func encode(_ image: PixelBuffer, options: EncodingOptions) throws -> Data {
        let rgba = image.straightRGBA
        let hasAlpha = rgba.hasTransparency
        guard let context = heif_context_alloc() else { throw failure("libheif could not create a context") }
        defer { heif_context_free(context) }
        var encoderPointer: OpaquePointer?
        try check(heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoderPointer))
        guard let encoder = encoderPointer else { throw failure("libheif has no HEVC encoder") }
        defer { heif_encoder_release(encoder) }
        try check(heif_encoder_set_lossy_quality(encoder, Int32((min(max(options.quality, 0), 1) * 100).rounded())))
        try check(heif_encoder_set_parameter_string(encoder, "preset", preset))

        var imagePointer: OpaquePointer?
        try check(
            heif_image_create(
                Int32(rgba.width), Int32(rgba.height), heif_colorspace_RGB,
                hasAlpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, &imagePointer))
        guard let heifImage = imagePointer else { throw failure("libheif could not create an image") }
        defer { heif_image_release(heifImage) }
        try check(heif_image_add_plane(heifImage, heif_channel_interleaved, Int32(rgba.width), Int32(rgba.height), 8))
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane(heifImage, heif_channel_interleaved, &stride) else {
            throw failure("libheif gave no plane")
        }
        for y in 0..<rgba.height { rgba.copyRow(y, into: plane + y * Int(stride), dropsAlpha: !hasAlpha) }
        if let profile = options.colorProfile?.data, !profile.isEmpty {
            try profile.withUnsafeBytes {
                try check(heif_image_set_raw_color_profile(heifImage, "prof", $0.baseAddress, $0.count))
            }
        }
        var handle: OpaquePointer?
        try check(heif_context_encode_image(context, heifImage, encoder, nil, &handle))
        if let handle {
            defer { heif_image_handle_release(handle) }
            // EXIF (libheif adds the offset to the TIFF header) and XMP as metadata items of the image.
            if let metadata = options.metadata?.bounded {
                if let exif = metadata.exif, ExifEditing.hasTIFFHeader(exif) {
                    try exif.withUnsafeBytes {
                        try check(heif_context_add_exif_metadata(context, handle, $0.baseAddress, Int32($0.count)))
                    }
                }
                if let xmp = metadata.xmp {
                    try xmp.withUnsafeBytes {
                        try check(heif_context_add_XMP_metadata(context, handle, $0.baseAddress, Int32($0.count)))
                    }
                }
            }
        }

        let output = HEICOutput()
        var writer = heif_writer(writer_api_version: 1) { _, data, size, userdata in
            if let userdata, let data {
                Unmanaged<HEICOutput>.fromOpaque(userdata).takeUnretainedValue().data.append(
                    data.assumingMemoryBound(to: UInt8.self), count: size)
            }
            return heif_error(code: heif_error_Ok, subcode: heif_suberror_Unspecified, message: nil)
        }
        try withExtendedLifetime(output) {
            try check(heif_context_write(context, &writer, Unmanaged.passUnretained(output).toOpaque()))
        }
        return output.data
    }

    private func check(_ error: heif_error) throws {
        guard error.code != heif_error_Ok else { return }
        throw failure(error.message.map { String(cString: $0) } ?? "libheif error \(error.code.rawValue)")
    }

    private func failure(_ reason: String) -> CodecError { .encodingFailed(format: .heic, reason: reason) }
}

/// The bytes libheif's writer hands over, for one encode on its thread.
final class HEICOutput {
    var data = Data()
}
