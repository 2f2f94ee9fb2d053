import CJXL
import Foundation

extension EmbeddedColour {
    /// The largest ICC profile kept from a JPEG XL file (a profile is a few KB; a LUT profile a few hundred).
    static let jpegXLICCByteLimit = 16 << 20

    /// What libjxl says about the colour of the samples it hands back (`JXL_COLOR_PROFILE_TARGET_DATA`), read
    /// from `decoder` just after it reported `JXL_DEC_COLOR_ENCODING`: the ICC profile (libjxl synthesises one
    /// for an enum-described space) and, when the codestream describes the space by enums with a D65 white, the
    /// matching CICP code points (libjxl's enum values are H.273's). ``JPEGXLDecoder`` asks libjxl to render XYB
    /// (lossy) images as sRGB, so only files stored in another space need converting.
    static func jpegXL(from decoder: OpaquePointer) -> EmbeddedColour {
        var colour = EmbeddedColour.unspecified
        var encoding = JxlColorEncoding()
        if JxlDecoderGetColorAsEncodedProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &encoding)
            == JXL_DEC_SUCCESS, encoding.white_point == JXL_WHITE_POINT_D65,
            encoding.transfer_function != JXL_TRANSFER_FUNCTION_GAMMA,
            encoding.color_space == JXL_COLOR_SPACE_GRAY
                || (encoding.color_space == JXL_COLOR_SPACE_RGB && encoding.primaries != JXL_PRIMARIES_CUSTOM)
        {
            let isGray = encoding.color_space == JXL_COLOR_SPACE_GRAY
            colour.cicp = CICP(
                primaries: isGray ? 1 : Int(encoding.primaries.rawValue),
                transfer: Int(encoding.transfer_function.rawValue), matrix: 0, isFullRange: true)
            // Plain sRGB (every lossy file libjxl renders as sRGB, most lossless ones): the ICC profile libjxl
            // would synthesise says nothing the code points do not, and kept (`.keep`) it would tag an sRGB
            // image with a profile the file never had.
            if colour.cicp?.primaries == 1 && colour.cicp?.transfer == 13 { return colour }
        }
        var size = 0
        guard JxlDecoderGetICCProfileSize(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS,
            size > 0, size <= jpegXLICCByteLimit
        else { return colour }
        var profile = Data(count: size)
        let status = profile.withUnsafeMutableBytes { bytes in
            JxlDecoderGetColorAsICCProfile(
                decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                size)
        }
        if status == JXL_DEC_SUCCESS { colour.iccProfile = profile }
        return colour
    }
}
