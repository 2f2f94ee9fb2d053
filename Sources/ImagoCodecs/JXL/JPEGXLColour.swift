import CJXL
import Foundation

/// What libjxl says about the colour of the pixels it handed back (its `JXL_COLOR_PROFILE_TARGET_DATA`): the hook
/// for colour management. The decoder asks libjxl to render XYB (lossy) images as sRGB, so only files stored in
/// another space (an ICC profile kept with `uses_original_profile`, e.g. ProPhoto, linear grey) need converting.
///
/// Internal: ``JPEGXLDecoder/decodeWithColour(_:options:)`` returns it beside the container, so a colour stage can
/// convert the frames to sRGB through ``iccProfile`` (lcms2) and skip files for which ``isSRGB`` is `true`.
struct JPEGXLColour: Sendable, Hashable {
    /// The ICC profile describing the decoded samples (libjxl synthesises one for an enum-described space);
    /// `nil` when libjxl gave none.
    var iccProfile: Data?
    /// `true` when the decoded samples are sRGB (or sRGB-transfer grey, D65) as described by the codestream's
    /// colour enum, so no conversion is needed; `false` when only the ICC profile says what they are.
    var isSRGB: Bool

    /// The largest ICC profile kept (a profile is a few KB; a LUT profile a few hundred).
    static let iccByteLimit = 16 << 20

    /// Reads the data colour profile from `decoder`, which just reported `JXL_DEC_COLOR_ENCODING`.
    static func read(from decoder: OpaquePointer) -> JPEGXLColour {
        var encoding = JxlColorEncoding()
        let hasEncoding =
            JxlDecoderGetColorAsEncodedProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &encoding)
            == JXL_DEC_SUCCESS
        let isSRGB =
            hasEncoding && encoding.transfer_function == JXL_TRANSFER_FUNCTION_SRGB
            && encoding.white_point == JXL_WHITE_POINT_D65
            && (encoding.color_space == JXL_COLOR_SPACE_GRAY
                || (encoding.color_space == JXL_COLOR_SPACE_RGB && encoding.primaries == JXL_PRIMARIES_SRGB))
        var size = 0
        guard JxlDecoderGetICCProfileSize(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS,
            size > 0, size <= iccByteLimit
        else { return JPEGXLColour(iccProfile: nil, isSRGB: isSRGB) }
        var profile = Data(count: size)
        let status = profile.withUnsafeMutableBytes { bytes in
            JxlDecoderGetColorAsICCProfile(
                decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                size)
        }
        return JPEGXLColour(iccProfile: status == JXL_DEC_SUCCESS ? profile : nil, isSRGB: isSRGB)
    }
}
