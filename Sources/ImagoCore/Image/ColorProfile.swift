import Foundation

/// An embedded ICC colour profile: the profile's bytes exactly as the file held them, and its description.
///
/// Decoders attach one to ``ImageContainer/colorProfile`` when ``DecodingOptions/colorPolicy`` is
/// ``ColorPolicy/keep`` (the pixels are then still in that profile's colour space); encoders write it back,
/// byte-identical, when it is passed in ``EncodingOptions/colorProfile``.
///
/// ```swift
/// var options = DecodingOptions()
/// options.colorPolicy = .keep
/// let kept = try registry.decode(data, options: options)
/// let jpeg = try JPEGEncoder().encode(kept.image, options: EncodingOptions(colorProfile: kept.colorProfile))
/// ```
public struct ColorProfile: Sendable, Hashable {
    /// The ICC profile, byte for byte (a JPEG's APP2 segments reassembled, a PNG's iCCP inflated).
    public var data: Data
    /// The profile's description tag (`desc`), e.g. `"Display P3"`; `nil` when it has none or it was not read.
    public var description: String?
    /// What converts sRGB colours into this profile's space (``fromSRGB(_:)-(RGBA)``); the decoders of
    /// `ImagoCodecs` attach theirs. Default `nil`: colours are painted as sRGB's numbers. Not part of equality.
    public var converter: (any ColorConverting)?

    /// A profile of `data` with an optional `description` and `converter` (defaults `nil`).
    public init(data: Data, description: String? = nil, converter: (any ColorConverting)? = nil) {
        self.data = data
        self.description = description
        self.converter = converter
    }

    /// Whether the two are the same profile (bytes and description; the converters are not compared).
    public static func == (lhs: ColorProfile, rhs: ColorProfile) -> Bool {
        lhs.data == rhs.data && lhs.description == rhs.description
    }

    /// Hashes the bytes and the description.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(data)
        hasher.combine(description)
    }

    /// `image`, whose colours are sRGB's, converted into this profile's space by ``converter``; `image` as it is
    /// without one.
    public func fromSRGB(_ image: PixelBuffer) -> PixelBuffer {
        converter?.convertFromSRGB(image, into: self) ?? image
    }

    /// `color`, an sRGB colour, converted into this profile's space (alpha kept); `color` as it is without a
    /// ``converter``.
    public func fromSRGB(_ color: RGBA) -> RGBA {
        guard let converter, var pixel = try? PixelBuffer(width: 1, height: 1) else { return color }
        pixel[pixel: 0, 0] = color
        return converter.convertFromSRGB(pixel, into: self)[pixel: 0, 0]
    }
}

/// What a decoder does with an image's colour profile (embedded ICC profile, PNG `sRGB`/`gAMA`/`cHRM`).
public enum ColorPolicy: String, Sendable, Hashable, CaseIterable, Codable {
    /// Convert the pixels to sRGB (the default, as browsers do). Images without a profile, or with an
    /// sRGB-equivalent one, are left as they are at no cost.
    case convertToSRGB = "srgb"
    /// Leave the pixels as stored and keep the ICC profile on ``ImageContainer/colorProfile``, so that an encoder
    /// can write it back. (CMYK JPEGs cannot stay CMYK in an RGBA buffer: they are converted to sRGB.)
    case keep
    /// Take every image as sRGB: the pixels as stored, no profile kept (Imago's behaviour before colour
    /// management).
    case ignore
}

/// The ICC rendering intent of a colour conversion.
public enum RenderingIntent: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Perceptual: the whole gamut is compressed to fit (the default of ``DecodingOptions``).
    case perceptual = 0
    /// Relative colorimetric: in-gamut colours exact relative to the white point, out-of-gamut ones clipped.
    case relativeColorimetric = 1
    /// Saturation: vivid colours kept vivid.
    case saturation = 2
    /// Absolute colorimetric: the media white is not adapted.
    case absoluteColorimetric = 3
}
