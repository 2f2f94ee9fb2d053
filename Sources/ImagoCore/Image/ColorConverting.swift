/// Converts sRGB colours into a colour profile's space: what a processor that paints (a background, a canvas, an
/// overlay) needs when the image it paints on keeps its profile (``ColorPolicy/keep``), so that the colours it was
/// given show as asked.
///
/// ImagoCore has no colour engine. The decoders of `ImagoCodecs` attach theirs (lcms2) to every ``ColorProfile``
/// they keep (``ColorProfile/converter``); processors reach it through ``ColorProfile/fromSRGB(_:)-(PixelBuffer)``.
///
/// ```swift
/// // In a processor that paints, given the profile the pipeline passes:
/// let fill = profile?.fromSRGB(RGBA(r: 255, g: 0, b: 0)) ?? RGBA(r: 255, g: 0, b: 0)
/// ```
public protocol ColorConverting: Sendable {
    /// `image` (sRGB, straight alpha) with its colours converted into `profile`'s space, alpha kept; `image` as it
    /// is when the profile cannot be used.
    func convertFromSRGB(_ image: PixelBuffer, into profile: ColorProfile) -> PixelBuffer
}
