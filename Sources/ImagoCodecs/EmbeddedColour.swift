import Foundation
import ImagoCore

/// A decoded image and the colour description its file carried (see ``EmbeddedColour``).
typealias DecodedWithColour = (container: ImageContainer, colour: EmbeddedColour)

/// What an AVIF or HEIF file's `colr` box says about its colour space, kept beside the decoded pixels so a colour
/// stage (ICC conversion to sRGB) can hook in without parsing the file again.
///
/// Decoders hand the pixels over unconverted (the values as stored, taken as sRGB); ``AVIFDecoder`` and
/// ``HEIFDecoder`` return this from their internal `decodeWithColour(_:options:)`.
struct EmbeddedColour: Sendable, Hashable {
    /// The ICC profile (`colr` type `prof`/`rICC`), if the file has one.
    var iccProfile: Data?
    /// The CICP code points (`colr` type `nclx`, or the AV1 sequence header), if known.
    var cicp: CICP?

    /// Coding-independent code points (ITU-T H.273).
    struct CICP: Sendable, Hashable {
        /// Colour primaries (1 = BT.709/sRGB, 12 = Display P3, 9 = BT.2020).
        var primaries: Int
        /// Transfer characteristics (13 = sRGB, 16 = PQ, 18 = HLG).
        var transfer: Int
        /// Matrix coefficients (0 = identity, 1 = BT.709, 6 = BT.601).
        var matrix: Int
        /// Whether the samples use the full range (else limited/video range).
        var isFullRange: Bool
    }

    /// Nothing known: take the pixels as sRGB.
    static let unspecified = EmbeddedColour(iccProfile: nil, cicp: nil)
}

extension EmbeddedColour {
    /// What the colour stage converts from: the ICC profile when the file has one, else the CICP primaries and
    /// transfer, else `nil` (the samples are taken as sRGB).
    ///
    /// CICP that names sRGB's primaries (1, BT.709, or 2, unspecified) with a transfer that encoders write for
    /// sRGB content (1 BT.709, 2 unspecified, 6 BT.601, 13 sRGB, 14/15 BT.2020 10/12-bit) is taken as sRGB, as
    /// browsers and the corpus's reference decoders do: converting BT.709's camera curve would shift every such
    /// AVIF (most of them) by several levels.
    var colorSource: ColorSource? {
        if let iccProfile { return .icc(iccProfile) }
        guard let cicp else { return nil }
        if [1, 2].contains(cicp.primaries) && [1, 2, 6, 13, 14, 15].contains(cicp.transfer) { return nil }
        return .cicp(primaries: cicp.primaries, transfer: cicp.transfer)
    }
}

extension ColorManagement {
    /// The container of `decoded` after the colour stage: its file's colour description (ICC, or CICP code points)
    /// converted to sRGB, kept on the container, or ignored, as `options.colorPolicy` says.
    ///
    /// `decoded` is consumed and converted where it is, so that its frames are uniquely referenced and converted in
    /// place: a copy of a borrowed value kept them shared with the caller's, and the conversion copied every frame (at 12 MP a
    /// 48 MB copy and 12,000 page faults, ~20 ms, measured with `perf` on AVIF).
    static func applying(_ decoded: consuming DecodedWithColour, options: DecodingOptions) -> ImageContainer {
        apply(decoded.colour.colorSource, to: &decoded.container, options: options)
        return decoded.container
    }
}
