import CJXL
import Foundation
import ImagoCore

/// Encodes still JPEG XL with libjxl: lossless with ``EncodingOptions/isLossless``, otherwise lossy (VarDCT) at a
/// Butteraugli distance.
///
/// - Lossy: the distance is ``distance`` when set, else ``distance(forQuality:)`` of
///   ``EncodingOptions/quality`` (cjxl's mapping: quality 0.85 → distance 1.45, 0.90 → 1.0, 1.0 → 0.1).
/// - Lossless: modular mode, distance 0; decoding gives back exactly the input bytes (colour under transparent
///   pixels included).
/// - Alpha is kept (8-bit, straight: a premultiplied buffer is un-premultiplied first, because libjxl 0.7 ignores
///   `alpha_premultiplied` in the basic info and aborts on a premultiplied alpha channel description). Opaque RGBA
///   is stored without an alpha channel; `gray8` is stored as grey.
/// - ``effort`` trades time for size: 1 (fastest) … 9; libjxl's default is 7.
/// - ``EncodingOptions/colorProfile`` (a profile kept by a decode with ``ColorPolicy/keep``) is written into the
///   codestream byte for byte (`JxlEncoderSetICCProfile`), and the pixels are taken to be in its space. libjxl
///   keeps an ICC profile verbatim only when the samples are stored in the original colour space, so with a
///   profile a lossy file is encoded without XYB (VarDCT in the profile's space, larger than XYB at the same
///   distance); decoding gives the samples in that space with that profile, like the JPEG, PNG, WebP and AVIF
///   encoders' files. A profile libjxl refuses (wrong colour space for the pixels, unparsable) is dropped and
///   the file is tagged sRGB. Without a profile the file is tagged sRGB.
/// - ``EncodingOptions/metadata``: EXIF and XMP as `Exif` and `xml ` boxes (the file is then a container; JPEG XL
///   has no place for IPTC).
///
/// Thread-safe: the encoder has no state; each call uses its own libjxl encoder and thread pool.
///
/// ```swift
/// let data = try JPEGXLEncoder(effort: 5).encode(buffer, options: EncodingOptions(isLossless: true))
/// ```
public struct JPEGXLEncoder: ImageEncoding {
    /// libjxl's effort, 1 (fastest) … 9 (smallest). Default 7 (libjxl's default).
    public var effort: Int
    /// The Butteraugli distance for lossy encoding (0.1 … 25; 1.0 is visually lossless). Default `nil`: derived
    /// from ``EncodingOptions/quality`` with ``distance(forQuality:)``.
    public var distance: Double?
    /// The most worker threads one encode uses. Default: one per CPU core (at most 8).
    public var maximumThreads: Int

    /// An encoder at `effort` (default 7), with a fixed `distance` (default `nil`: from the quality).
    public init(
        effort: Int = 7, distance: Double? = nil,
        maximumThreads: Int = min(8, ProcessorQuota.cores)
    ) {
        self.effort = effort
        self.distance = distance
        self.maximumThreads = maximumThreads
    }

    /// `.jpegXL`.
    public var format: ImageFormat { .jpegXL }

    /// `"effort=N"`, and `"distance=D"` when fixed: both change the bytes written (threads do not).
    public var settingsIdentifier: String? {
        "effort=\(effort)" + (distance.map { ";distance=\($0)" } ?? "")
    }

    /// cjxl's mapping from a 0…100 quality to a distance, with `quality` 0…1: 0.1 + (100 − q) × 0.09 from q = 30
    /// up, steeper below.
    public static func distance(forQuality quality: Double) -> Double {
        let q = min(max(quality, 0), 1) * 100
        return q >= 30 ? 0.1 + (100 - q) * 0.09 : 6.4 + pow(2.5, (30 - q) / 5) / 6.25
    }

    /// Encodes `image` as a JPEG XL codestream.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` with libjxl's reason.
    public func encode(_ image: PixelBuffer, options: EncodingOptions) throws -> Data {
        let input = try Self.prepared(image)
        guard let encoder = JxlEncoderCreate(nil) else { throw failure("libjxl could not create an encoder") }
        defer { JxlEncoderDestroy(encoder) }
        let runner = maximumThreads > 1 ? JxlResizableParallelRunnerCreate(nil) : nil
        defer { if let runner { JxlResizableParallelRunnerDestroy(runner) } }
        if let runner {
            let suggested = JxlResizableParallelRunnerSuggestThreads(UInt64(image.width), UInt64(image.height))
            JxlResizableParallelRunnerSetThreads(runner, min(Int(suggested), maximumThreads))
            try check(JxlEncoderSetParallelRunner(encoder, JxlResizableParallelRunner, runner), encoder)
        }

        var info = JxlBasicInfo()
        JxlEncoderInitBasicInfo(&info)
        info.xsize = UInt32(clamping: image.width)
        info.ysize = UInt32(clamping: image.height)
        info.bits_per_sample = 8
        info.num_color_channels = input.channels >= 3 ? 3 : 1
        let hasAlpha = input.channels == 4 || input.channels == 2
        info.alpha_bits = hasAlpha ? 8 : 0
        info.num_extra_channels = hasAlpha ? 1 : 0
        // A kept colour profile is stored byte for byte, which libjxl does only outside XYB: with one, lossy
        // files are encoded in the profile's own space too (VarDCT without XYB, somewhat larger).
        let profile = options.colorProfile.flatMap { $0.data.isEmpty ? nil : $0.data }
        info.uses_original_profile = options.isLossless || profile != nil ? 1 : 0
        // (libjxl 0.7 writes the boxes after the codestream box, which the format allows.)
        try JPEGXLMetadata.add(options.metadata?.bounded, to: encoder)
        try check(JxlEncoderSetBasicInfo(encoder, &info), encoder)
        let keptProfile =
            profile.map { data in
                data.withUnsafeBytes { bytes in
                    JxlEncoderSetICCProfile(
                        encoder, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
                } == JXL_ENC_SUCCESS
            } ?? false
        if !keptProfile {  // none, or one libjxl refuses (e.g. a CMYK or RGB profile on grey): tagged sRGB
            var colour = JxlColorEncoding()
            JxlColorEncodingSetToSRGB(&colour, info.num_color_channels == 1 ? 1 : 0)
            try check(JxlEncoderSetColorEncoding(encoder, &colour), encoder)
        }

        guard let settings = JxlEncoderFrameSettingsCreate(encoder, nil) else {
            throw failure("libjxl could not create frame settings")
        }
        try check(
            JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, Int64(min(max(effort, 1), 9))),
            encoder)
        if options.isLossless {
            try check(JxlEncoderSetFrameDistance(settings, 0), encoder)
            try check(JxlEncoderSetFrameLossless(settings, 1), encoder)
        } else {
            let distance = min(max(distance ?? Self.distance(forQuality: options.quality), 0.1), 25)
            try check(JxlEncoderSetFrameDistance(settings, Float(distance)), encoder)
        }
        var format = JxlPixelFormat(
            num_channels: UInt32(input.channels), data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
        try input.bytes.withUnsafeBytes { bytes in
            try check(JxlEncoderAddImageFrame(settings, &format, bytes.baseAddress, bytes.count), encoder)
        }
        JxlEncoderCloseInput(encoder)
        return try drain(encoder)
    }

    /// Collects the codestream, growing the output buffer as libjxl asks.
    func drain(_ encoder: OpaquePointer) throws -> Data {
        var output = [UInt8](repeating: 0, count: 64 << 10)
        var written = 0
        while true {
            let (status, used) = output.withUnsafeMutableBufferPointer { buffer in
                var next = buffer.baseAddress.map { $0 + written }
                var available = buffer.count - written
                let status = JxlEncoderProcessOutput(encoder, &next, &available)
                return (status, buffer.count - written - available)
            }
            written += used
            switch status {
            case JXL_ENC_SUCCESS: return Data(output[..<written])
            case JXL_ENC_NEED_MORE_OUTPUT: output.append(contentsOf: repeatElement(0, count: output.count))
            default: try check(status, encoder)
            }
        }
    }

    /// The samples libjxl is given: RGBA (straight alpha), RGB (opaque) or grey.
    private static func prepared(_ image: PixelBuffer) throws -> (bytes: [UInt8], channels: Int) {
        let image = image.alphaMode == .premultiplied ? image.unpremultiplied() : image
        switch image.format {
        case .gray8: return (image.bytes, 1)
        case .rgba8:
            guard !image.hasTransparency else { return (image.bytes, 4) }
            var rgb = [UInt8](repeating: 0, count: image.width * image.height * 3)
            image.withUnsafeBytes { rgba in
                rgb.withUnsafeMutableBufferPointer { out in
                    for pixel in 0..<(image.width * image.height) {
                        out[pixel * 3] = rgba[pixel * 4]
                        out[pixel * 3 + 1] = rgba[pixel * 4 + 1]
                        out[pixel * 3 + 2] = rgba[pixel * 4 + 2]
                    }
                }
            }
            return (rgb, 3)
        }
    }

    private func check(_ status: JxlEncoderStatus, _ encoder: OpaquePointer) throws {
        guard status == JXL_ENC_SUCCESS else {
            let error = JxlEncoderGetError(encoder)
            let reason =
                switch error {
                case JXL_ENC_ERR_OOM: "libjxl ran out of memory"
                case JXL_ENC_ERR_BAD_INPUT: "libjxl rejected the input"
                case JXL_ENC_ERR_NOT_SUPPORTED: "libjxl does not support these settings"
                case JXL_ENC_ERR_API_USAGE: "libjxl API misuse (status \(status.rawValue))"
                default: "libjxl error \(error.rawValue)"
                }
            throw failure(reason)
        }
    }

    private func failure(_ reason: String) -> CodecError { .encodingFailed(format: .jpegXL, reason: reason) }
}
