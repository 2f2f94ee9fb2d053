/// A transformation of pixels (resize, crop, blur, …) with a stable identity for cache keys.
///
/// `identifier` must distinguish every parameter that changes the output (two blur radii never share one) and
/// stay the same across processes and versions, because it becomes part of memory- and disk-cache keys.
/// Processors are pure: the same input gives the same output; they are called off the caller's thread, concurrently.
///
/// ```swift
/// let request = ImageRequest(url: url, processors: [.resize(width: 256, height: 256), .circle()])
/// ```
public protocol ImageProcessing: Sendable {
    /// A stable string naming the processor and all its parameters,
    /// e.g. `"imago.resize?w=256&h=256&mode=fit&upscale=0"`.
    var identifier: String { get }

    /// Returns the processed pixels (straight alpha in, straight alpha out).
    ///
    /// - Throws: any error; the pipeline reports it as a processing failure.
    func process(_ image: PixelBuffer) throws -> PixelBuffer

    /// Returns the processed pixels of an image whose pixels are in `profile`'s colour space (decoded under
    /// ``ColorPolicy/keep``), or in sRGB's when `profile` is `nil`: what the pipeline calls. A processor that paints
    /// colours given in sRGB (a background, an overlay) converts them into that space first
    /// (``ColorProfile/fromSRGB(_:)-(RGBA)``). Default: ``process(_:)``, for processors whose work does not depend
    /// on the colour space.
    func process(_ image: PixelBuffer, profile: ColorProfile?) throws -> PixelBuffer

    /// The smallest decoded image this processor needs when it runs first, or `nil` when it needs the full
    /// resolution (a crop of a region given in source pixels, a blur whose radius is in source pixels …).
    /// Default `nil`. A resize that only shrinks returns its size: the pipeline then decodes large images
    /// downsampled (JPEG DCT scaling) instead of decoding them whole and resampling (see ``DecodeTarget``).
    var decodeTarget: DecodeTarget? { get }
}

extension ImageProcessing {
    /// `nil`: the processor needs the full-resolution image.
    public var decodeTarget: DecodeTarget? { nil }

    /// ``process(_:)``: the colour space does not change the work.
    public func process(_ image: PixelBuffer, profile: ColorProfile?) throws -> PixelBuffer { try process(image) }
}

/// The namespace of the built-in processors; use the static-member sugar (`.resize(width:height:)`).
public enum ImageProcessors {}
