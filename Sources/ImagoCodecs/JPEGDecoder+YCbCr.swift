import CJPEGTurbo
import Foundation
import ImagoCore

extension JPEGDecoder {
    /// What ``decodeYCbCr(_:options:)`` gives: the planes, the image's full size and, with
    /// ``DecodingOptions/readsMetadata``, its EXIF, XMP and IPTC blocks.
    package typealias YCbCrDecode = (image: YCbCrImage, originalSize: PixelSize, metadata: ImageMetadata?)

    /// Decodes a colour JPEG to its own Y, Cb and Cr planes, left as YCbCr: at the DCT scale
    /// ``decode(_:options:)`` would use, each plane resampled with the same weights to the delivered size (chroma
    /// to half of it, ``YCbCrImage``). No colour conversion and no chroma upsampling happen, and an encoder that
    /// stores YCbCr 4:2:0 (``YCbCrEncoding``: lossy WebP, JPEG) takes the planes rather than converting RGB back:
    /// 2–4 % less CPU for a thumbnail at the codecs, and no RGBA buffers (BENCHMARKS.md, "JPEG to WebP in
    /// YCbCr"). Its chroma is the JPEG's own, averaged: for WebP, rather than libwebp's gamma-weighted average of
    /// the upsampled RGB (a few levels of chroma apart).
    ///
    /// `nil` when the file is not one this path decodes exactly as ``decode(_:options:)`` would, so the caller
    /// decodes it that way: not YCbCr with 4:4:4, 4:2:2, 4:2:0, 4:4:0 or 4:1:1 sampling (gray, CMYK, RGB), an
    /// ICC profile to keep or to convert from (an sRGB one, which converting leaves as it is, is no obstacle;
    /// ``ColorPolicy/ignore`` ignores any), an EXIF orientation to apply, truncated, over
    /// ``DecodingOptions/pixelLimit``, or progressive at 1/8 scale (the DC reader holds less).
    ///
    /// `accepts` is asked, once the header is read and before anything is decoded, whether the planes are wanted
    /// at the size they will have (the delivered size): a caller that would not use them at that size (a cut that
    /// would split chroma samples) gets `nil` without paying for the decode. Default: any size.
    ///
    /// - Throws: ``CodecError/corrupt(format:reason:)`` with libjpeg's message when the file fails to decode.
    package func decodeYCbCr(
        _ data: Data, options: DecodingOptions, accepts: (PixelSize) -> Bool = { _ in true }
    ) throws -> YCbCrDecode? {
        try data.withUnsafeBytes { bytes in try decodeYCbCr(bytes: bytes, options: options, accepts: accepts) }
    }

    private func decodeYCbCr(
        bytes: UnsafeRawBufferPointer, options: DecodingOptions, accepts: (PixelSize) -> Bool
    ) throws -> YCbCrDecode? {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return nil }
        let markers = JPEGMarkers(scanning: bytes)
        guard !markers.isTruncated, markers.orientation == .up || !options.appliesOrientation else { return nil }
        // A profile that converting to sRGB would leave as it is (an sRGB profile, as cameras and editors embed)
        // changes nothing; any other, or one to keep, is the RGB decode's.
        if options.colorPolicy != .ignore, let source = markers.iccProfile(in: bytes) {
            guard options.colorPolicy == .convertToSRGB,
                case .identity = ColorManagement.prepared(source, layout: .rgba, options: options)
                    .kind
            else { return nil }
        }
        guard let handle = tjInitDecompress() else { return nil }
        defer { tjDestroy(handle) }
        let source = base.assumingMemoryBound(to: UInt8.self)
        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        let samplings = [TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_440, TJSAMP_411].map { Int32($0.rawValue) }
        guard tjDecompressHeader3(handle, source, UInt(bytes.count), &width, &height, &subsampling, &colorspace) == 0,
            colorspace == Int32(TJCS_YCbCr.rawValue), samplings.contains(subsampling), width > 0, height > 0
        else { return nil }
        let full = PixelSize(width: Int(width), height: Int(height))
        guard !options.exceedsPixelLimit(full) else { return nil }
        let delivered = options.deliveredSize(of: full, orientation: .up, bytesPerPixel: 4)
        let scaled = Self.scaledSize(of: full, covering: delivered)
        if markers.isProgressive, Self.decodesAtOneEighth(full, scaled: scaled) { return nil }
        guard accepts(delivered) else { return nil }

        let sizes = (0..<3).map { component in
            PixelSize(
                width: Int(tjPlaneWidth(Int32(component), Int32(scaled.width), subsampling)),
                height: Int(tjPlaneHeight(Int32(component), Int32(scaled.height), subsampling)))
        }
        guard sizes.allSatisfy({ $0.width > 0 && $0.height > 0 }) else { return nil }
        // Straight into three buffers (each of a thumbnail's below glibc's mmap threshold, unlike one block of
        // all three), written whole by TurboJPEG; a failed decode throws them away unread.
        var strides = sizes.map { Int32($0.width) }
        var status: Int32 = 0
        var luma: PixelBuffer?
        var blue: PixelBuffer?
        let red = try PixelBuffer(width: sizes[2].width, height: sizes[2].height, format: .gray8) { cr in
            blue = try PixelBuffer(width: sizes[1].width, height: sizes[1].height, format: .gray8) { cb in
                luma = try PixelBuffer(width: sizes[0].width, height: sizes[0].height, format: .gray8) { y in
                    var pointers = [y, cb, cr].map { $0.baseAddress?.assumingMemoryBound(to: UInt8.self) }
                    // LIMITSCANS, as decode(_:options:): thousands of scans are an attack on decode time.
                    status = tjDecompressToYUVPlanes(
                        handle, source, UInt(bytes.count), &pointers, Int32(scaled.width), &strides,
                        Int32(scaled.height), TJFLAG_LIMITSCANS)
                }
            }
        }
        if status != 0 && !Self.isWarning(handle) {
            throw CodecError.corrupt(format: .jpeg, reason: Self.message(handle))
        }
        guard let luma, let blue else { return nil }
        // TurboJPEG pads the luma plane to whole chroma samples (an odd side gets one more row or column): the image
        // is `scaled`, and each chroma plane covers it, rounded up.
        // The crop and the resamples give their input back when it already has the size asked for.
        let y = try ImageProcessors.Crop(x: 0, y: 0, width: scaled.width, height: scaled.height).process(luma)
        let chroma = YCbCrImage.chromaSize(of: delivered)
        let image = YCbCrImage(
            y: try y.resampledWithVectorKernel(to: delivered), cb: try blue.resampledWithVectorKernel(to: chroma),
            cr: try red.resampledWithVectorKernel(to: chroma))
        return (image, full, options.readsMetadata ? markers.metadata(in: bytes) : nil)
    }
}
