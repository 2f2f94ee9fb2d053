import CJPEGTurbo
import Foundation
import ImagoCore

/// Encodes JPEG with libjpeg-turbo (TurboJPEG API): baseline (or progressive, ``isProgressive``), 4:2:0 chroma
/// subsampling for colour, a single grayscale component for `gray8` input.
///
/// - Quality: ``EncodingOptions/quality`` (0 … 1, default 0.85) maps to libjpeg quality 1 … 100.
/// - Alpha: JPEG has none; it is dropped and the stored colour of each pixel is kept (straight alpha).
///   Premultiplied input is unpremultiplied first.
/// - Colour: ``EncodingOptions/colorProfile`` is written as APP2 `ICC_PROFILE` segments, byte-identical.
/// - ``EncodingOptions/metadata``: EXIF and XMP as APP1 segments, IPTC as an APP13 segment.
/// - Limits: JPEG dimensions are at most 65,535 pixels a side.
///
/// Thread-safe: every encode uses its own TurboJPEG handle.
///
/// ```swift
/// let data = try JPEGEncoder().encode(image, options: EncodingOptions(quality: 0.9))
/// ```
public struct JPEGEncoder: ImageEncoding, YCbCrEncoding {
    /// Whether files are progressive (several scans, each refining the last, with optimised Huffman tables: a
    /// browser shows the whole image early, and the file is usually a little smaller) rather than baseline. The
    /// decoded pixels are the same either way. Default `false`.
    public var isProgressive: Bool

    /// An encoder with the behaviour described on the type, progressive when `isProgressive` (default `false`).
    public init(isProgressive: Bool = false) {
        self.isProgressive = isProgressive
    }

    /// `.jpeg`.
    public var format: ImageFormat { .jpeg }

    /// `"progressive"` for a progressive encoder, `nil` for a baseline one.
    public var settingsIdentifier: String? { isProgressive ? "progressive" : nil }

    /// Encodes `image` as described on the type.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` for an image larger than JPEG allows or a
    ///   libjpeg-turbo failure.
    public func encode(_ image: PixelBuffer, options: EncodingOptions) throws -> Data {
        let image = image.alphaMode == .premultiplied ? image.unpremultiplied() : image
        let (pixelFormat, subsampling) =
            image.format == .gray8 ? (TJPF_GRAY, TJSAMP_GRAY) : (TJPF_RGBA, TJSAMP_420)
        return try compressed(width: image.width, height: image.height, options: options) {
            handle, output, outputSize, quality, flags in
            image.withUnsafeBytes { pixels -> Int32 in
                guard let source = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return -1 }
                return tjCompress2(
                    handle, source, Int32(image.width), Int32(image.bytesPerRow), Int32(image.height),
                    pixelFormat.rawValue, &output, &outputSize, Int32(subsampling.rawValue), quality, flags)
            }
        }
    }

    /// Encodes `image`'s planes as they are (4:2:0, full range, as a JPEG stores them: no colour conversion and no
    /// chroma downsampling), at the quality, profile and metadata ``encode(_:options:)`` takes.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` for an image larger than JPEG allows, chroma
    ///   planes that are not half the luma plane's size, or a libjpeg-turbo failure.
    package func encode(_ image: YCbCrImage, options: EncodingOptions) throws -> Data {
        try compressed(width: image.size.width, height: image.size.height, options: options) {
            handle, output, outputSize, quality, flags in
            try image.checkPlanes(for: .jpeg)
            // TurboJPEG reads the luma plane padded to whole chroma samples: an odd side one more row or column,
            // here the last one repeated.
            let luma = try Self.padded(image.y, to: YCbCrImage.chromaSize(of: image.size))
            var strides = [luma.bytesPerRow, image.cb.bytesPerRow, image.cr.bytesPerRow].map { Int32($0) }
            return luma.withUnsafeBytes { y in
                image.cb.withUnsafeBytes { cb in
                    image.cr.withUnsafeBytes { cr in
                        var sources = [y, cb, cr].map { $0.baseAddress?.assumingMemoryBound(to: UInt8.self) }
                        return tjCompressFromYUVPlanes(
                            handle, &sources, Int32(image.size.width), &strides, Int32(image.size.height),
                            Int32(TJSAMP_420.rawValue), &output, &outputSize, quality, flags)
                    }
                }
            }
        }
    }

    /// What both encodes share: JPEG's side limit, libjpeg's quality from `options`, a TurboJPEG compressor and the
    /// buffer it allocates, its error, and `options`' profile and metadata embedded. `compress` makes TurboJPEG's
    /// call with the compressor, the output buffer and its size, the quality and the flags.
    private func compressed(
        width: Int, height: Int, options: EncodingOptions,
        _ compress: (tjhandle, inout UnsafeMutablePointer<UInt8>?, inout UInt, Int32, Int32) throws -> Int32
    ) throws -> Data {
        guard width <= 65_535, height <= 65_535 else {
            throw CodecError.encodingFailed(
                format: .jpeg, reason: "\(width)x\(height) exceeds JPEG's 65535-pixel side limit")
        }
        let quality = options.quality.isFinite ? options.quality : EncodingOptions().quality
        let libjpegQuality = Int32(max(1, min(100, (quality * 100).rounded())))
        guard let handle = tjInitCompress() else {
            throw CodecError.encodingFailed(format: .jpeg, reason: "TurboJPEG could not create a compressor")
        }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>? = nil
        var outputSize: UInt = 0
        defer { if let output { tjFree(output) } }
        let status = try compress(handle, &output, &outputSize, libjpegQuality, isProgressive ? TJFLAG_PROGRESSIVE : 0)
        guard status == 0, let output else {
            throw CodecError.encodingFailed(format: .jpeg, reason: JPEGDecoder.message(handle))
        }
        let encoded = Data(bytes: output, count: Int(outputSize))
        return try Embedding.jpeg(encoded, profile: options.colorProfile?.data, metadata: options.metadata?.bounded)
    }

    /// `plane` (`gray8`) grown to twice `chroma`, its last row and column repeated; itself when it is that size.
    private static func padded(_ plane: PixelBuffer, to chroma: PixelSize) throws -> PixelBuffer {
        let size = PixelSize(width: chroma.width * 2, height: chroma.height * 2)
        guard size != plane.size else { return plane }
        return try plane.withUnsafeBytes { bytes in
            try PixelBuffer(width: size.width, height: size.height, format: .gray8) { out in
                let from = bytes.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self)
                let to = out.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self)
                for row in 0..<size.height {
                    let source = from + min(row, plane.height - 1) * plane.bytesPerRow
                    let destination = to + row * size.width
                    destination.update(from: source, count: plane.width)
                    for x in plane.width..<size.width { destination[x] = source[plane.width - 1] }
                }
            }
        }
    }
}

extension JPEGEncoder {
    /// `data` rewritten as a progressive JPEG without re-encoding (TurboJPEG's lossless transform with
    /// `TJXOPT_PROGRESSIVE`): the same coefficients, quantisation and sampling in a multi-scan file. For tests and
    /// benchmarks of the progressive paths.
    ///
    /// - Throws: ``CodecError/corrupt(format:reason:)`` with TurboJPEG's message when `data` cannot be transformed.
    package static func losslesslyProgressive(_ data: Data) throws -> Data {
        guard let handle = tjInitTransform() else {
            throw CodecError.corrupt(format: .jpeg, reason: "TurboJPEG could not create a transformer")
        }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        defer { if let output { tjFree(output) } }
        var transform = tjtransform()
        transform.op = Int32(TJXOP_NONE.rawValue)
        transform.options = TJXOPT_PROGRESSIVE
        let status = data.withUnsafeBytes { bytes in
            tjTransform(
                handle, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt(bytes.count), 1, &output, &size,
                &transform, 0)
        }
        guard status == 0, let output else {
            throw CodecError.corrupt(format: .jpeg, reason: JPEGDecoder.message(handle))
        }
        return Data(bytes: output, count: Int(size))
    }
}
