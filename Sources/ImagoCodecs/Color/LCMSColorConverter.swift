import ImagoCore

/// ``ColorConverting`` through lcms2: sRGB to the profile's space, relative colorimetric without black point
/// compensation (the transform is prepared once a profile and kept, as every transform here). The decoders attach
/// one to every ``ColorProfile`` they keep (``ColorPolicy/keep``).
public struct LCMSColorConverter: ColorConverting {
    /// A converter; it holds no state of its own.
    public init() {}

    /// `image` converted from sRGB into `profile`'s space; as it is when lcms2 cannot use the profile.
    public func convertFromSRGB(_ image: PixelBuffer, into profile: ColorProfile) -> PixelBuffer {
        ColorManagement.convertFromSRGB(image, to: profile.data)
    }
}
