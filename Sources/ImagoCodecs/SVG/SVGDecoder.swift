import CSVGPlugin
import Foundation
import ImagoCore

/// Rasterises SVG documents with librsvg (loaded on first use, see `CSVGPlugin`), straight at the size asked for:
/// a vector has no pixels to downsample, so ``DecodingOptions/targetSize`` is where it is drawn, and a drawing
/// that declares 100,000 × 100,000 pixels costs what its 256-pixel rendering costs.
///
/// - Size: the document's `width` and `height` at 96 dpi, else its `viewBox`'s; a document with neither fails with
///   ``CodecError/corrupt(format:reason:)``. Fitted to ``DecodingOptions/targetSize`` (enlarged only with
///   ``DecodingOptions/enlargesVectors``) and checked against ``DecodingOptions/pixelLimit`` before the canvas is
///   allocated.
/// - External resources: nothing outside the document is read (librsvg loads files and URLs only relative to a
///   base file, and a document from memory has none). Images embedded as `data:` URLs, which librsvg hands to
///   gdk-pixbuf, are first decoded by Imago's own bounded decoders within the same limits; a document with one
///   they cannot decode within them, or whose `href` hides a URL behind an entity Imago does not expand, fails
///   with ``CodecError/corrupt(format:reason:)`` before librsvg sees it (``SVGReferences``).
/// - Without librsvg 2.52+ (Debian's `librsvg2-2`), decoding fails with ``CodecError/unsupportedFormat(_:)``.
///
/// Thread-safe: the decoder has no state; each call parses its own librsvg handle.
///
/// ```swift
/// var options = DecodingOptions()
/// options.targetSize = PixelSize(width: 256, height: 256)
/// let container = try SVGDecoder().decode(logo, options: options)  // drawn at 256 px on its long side
/// ```
public struct SVGDecoder: ImageDecoding {
    /// Where librsvg runs. Default ``SVGRendering/inProcess``.
    public var rendering: SVGRendering

    /// An SVG decoder rendering as `rendering` says (default ``SVGRendering/inProcess``).
    public init(rendering: SVGRendering = .inProcess) {
        self.rendering = rendering
    }

    /// `[.svg]`.
    public var formats: Set<ImageFormat> { [.svg] }

    /// Whether librsvg could be loaded on this machine.
    public static var isAvailable: Bool { cimago_svg_available() == 1 }

    /// Draws `data` at its intrinsic size fitted to ``DecodingOptions/targetSize``.
    ///
    /// - Throws: ``CodecError``: `.empty`, `.corrupt`, `.tooManyPixels`, `.unsupportedFormat` (no librsvg).
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        guard !data.isEmpty else { throw CodecError.empty }
        if case .childProcess(let executable, let arguments, let timeout) = rendering {
            return try ChildProcessDecoder(
                formats: formats, executable: executable, arguments: arguments, timeout: timeout
            ).decode(data, options: options)
        }
        guard Self.isAvailable else { throw CodecError.unsupportedFormat(.svg) }
        try SVGReferences.checkEmbeddedImages(in: data, options: options)
        var message = [CChar](repeating: 0, count: 512)
        var width = 0.0
        var height = 0.0
        let handle = data.withUnsafeBytes { bytes in
            cimago_svg_open(
                bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &width, &height, &message,
                message.count)
        }
        guard let handle else { throw corrupt(message) }
        defer { cimago_svg_close(handle) }
        guard width.isFinite, height.isFinite, width > 0, height > 0, width < 1e9, height < 1e9 else {
            throw CodecError.corrupt(format: .svg, reason: "the document has no width, height or viewBox")
        }
        let intrinsic = PixelSize(width: max(1, Int(width.rounded(.up))), height: max(1, Int(height.rounded(.up))))
        let size =
            Self.enlargedSize(of: (width, height), options: options)
            ?? TargetFitting.fittedSize(
                of: intrinsic, within: options.targetSize, orientation: .up, mode: options.targetMode)
        try options.checkDimensions(width: size.width, height: size.height, format: .svg)
        let image = try PixelBuffer(width: size.width, height: size.height, format: .rgba8, alphaMode: .premultiplied) {
            pixels in
            guard
                cimago_svg_render(
                    handle, Int32(size.width), Int32(size.height),
                    pixels.baseAddress?.assumingMemoryBound(to: UInt8.self), &message, message.count) == 1
            else { throw corrupt(message) }
        }
        return ImageContainer(
            frames: [ImageFrame(buffer: image.unpremultiplied())], format: .svg, orientation: .up,
            originalSize: intrinsic, bitDepth: 8)
    }

    /// With ``DecodingOptions/enlargesVectors``, the size a drawing of `intrinsic` size is drawn at when the
    /// target is larger than it: scaled to fit (or cover) the target, then back within the pixel limit and
    /// cairo's 32,767 pixels a side; `nil` when nothing is enlarged.
    static func enlargedSize(of intrinsic: (Double, Double), options: DecodingOptions) -> PixelSize? {
        guard options.enlargesVectors, let target = options.targetSize, target.width > 0, target.height > 0 else {
            return nil
        }
        let (sx, sy) = (Double(target.width) / intrinsic.0, Double(target.height) / intrinsic.1)
        var scale = options.targetMode == .cover ? max(sx, sy) : min(sx, sy)
        guard scale > 1 else { return nil }
        let pixels = intrinsic.0 * intrinsic.1 * scale * scale
        if pixels > Double(options.pixelLimit) { scale *= (Double(options.pixelLimit) / pixels).squareRoot() }
        scale = min(scale, 32_767 / max(intrinsic.0, intrinsic.1))
        guard scale > 1 else { return nil }
        return PixelSize(
            width: max(1, min(32_767, Int((intrinsic.0 * scale).rounded()))),
            height: max(1, min(32_767, Int((intrinsic.1 * scale).rounded()))))
    }

    private func corrupt(_ message: [CChar]) -> CodecError {
        .corrupt(
            format: .svg,
            reason: String(nulTerminated: message))
    }
}

extension SVGDecoder {
    /// The child's side of ``SVGRendering/childProcess(executable:arguments:timeout:)``: decodes the request on
    /// standard input in this process (``ChildProcessDecoder/runChild(decoding:)`` with an in-process decoder).
    /// Returns the exit status.
    public static func runChild() -> Int32 {
        ChildProcessDecoder.runChild(decoding: SVGDecoder())
    }
}
