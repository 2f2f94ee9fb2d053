import CAVIF
import ImagoCore

/// One AVIF decode after `avifDecoderParse`: the limits checked from the container's header, then each frame
/// converted to RGBA8, cropped, fitted to the target and turned.
///
/// Lives for one call to ``AVIFDecoder/decode(_:options:)``, on that call's thread.
struct AVIFSession {
    let decoder: UnsafeMutablePointer<avifDecoder>
    let options: DecodingOptions
    /// The coded size from the header (`ispe`).
    let size: PixelSize
    /// `clap`, `irot` and `imir` of the file.
    let transform: ItemTransform
    /// Bits per sample of the file.
    let bitDepth: Int
    /// The size shown after the crop and rotation, before any downsampling.
    let displayedSize: PixelSize
    /// Frames to decode (1 for a still or with `decodesFirstFrameOnly`).
    let frameCount: Int
    /// The conversion to sRGB done while the frames are converted from YUV (a strip of rows at a time, while the
    /// strip is in cache), or `nil` to leave the pixels as stored. Set only when ``isShownAtFullSize``: a frame
    /// that is downsampled is converted after, on fewer pixels.
    var stripColour: LCMSTransform?
    /// The RGBA bytes of a strip of ``stripColour``'s conversion (``AVIFDecoder/colourStripBytes``).
    var stripBytes = AVIFDecoder.defaultColourStripBytes
    /// The per-tile alpha of a grid that libavif 0.11 returns opaque, decoded into each image before it is
    /// converted; `nil` for every other file.
    var tileAlpha: AVIFTileAlpha?

    init(decoder: UnsafeMutablePointer<avifDecoder>, options: DecodingOptions, size: PixelSize) {
        self.decoder = decoder
        self.options = options
        self.size = size
        let image = decoder.pointee.image.pointee
        self.bitDepth = Int(image.depth)
        self.transform = Self.transform(of: image, size: size)
        let cropped = transform.crop.map { PixelSize(width: $0.width, height: $0.height) } ?? size
        self.displayedSize =
            transform.orientation.swapsDimensions
            ? PixelSize(width: cropped.height, height: cropped.width) : cropped
        let declared = max(0, Int(decoder.pointee.imageCount))
        self.frameCount = options.decodesFirstFrameOnly ? min(1, declared) : declared
    }

    /// Whether the frames are returned at their decoded size (after the crop), without downsampling.
    var isShownAtFullSize: Bool {
        let cropped = transform.crop.map { PixelSize(width: $0.width, height: $0.height) } ?? size
        return TargetFitting.fittedSize(
            of: cropped, within: options.targetSize, orientation: transform.orientation, mode: options.targetMode)
            == cropped
    }

    /// Throws when the header's size, frame count or the output of all frames exceed the options' limits.
    func checkLimits() throws {
        try options.checkDimensions(width: size.width, height: size.height, format: .avif)
        guard frameCount > 0 else { throw CodecError.corrupt(format: .avif, reason: "the file has no images") }
        guard frameCount <= options.frameLimit else { throw CodecError.tooManyFrames(limit: options.frameLimit) }
        guard frameCount > 1 else { return }
        try options.checkAnimationWork(frames: frameCount, canvas: size)
        guard !isOverBudget else { return }  // decoded on demand: never all held
        guard outputBytes.total <= options.animationByteLimit else {
            throw CodecError.animationTooLarge(limit: options.animationByteLimit)
        }
    }

    /// Whether the frames of a sequence, decoded up front, would exceed ``DecodingOptions/animationMemoryBudget``
    /// (then they are decoded on demand by `AVIFFrameDecoder`).
    var isOverBudget: Bool {
        frameCount > 1 && (outputBytes.overflow || outputBytes.total > options.animationMemoryBudget)
    }

    /// The bytes of every frame's output.
    private var outputBytes: (total: Int, overflow: Bool) {
        let output = TargetFitting.fittedSize(
            of: displayedSize, within: options.targetSize, orientation: .up, mode: options.targetMode)
        let (total, overflow) = frameCount.multipliedReportingOverflow(by: output.pixelCount * 4)
        return (overflow ? Int.max : total, overflow)
    }

    /// Decodes the frames; a sequence that fails after its first frame keeps the frames before the failure.
    func decodeFrames() throws -> [ImageFrame] {
        var frames: [ImageFrame] = []
        frames.reserveCapacity(frameCount)
        for _ in 0..<frameCount {
            let result = avifDecoderNextImage(decoder)
            guard result == AVIF_RESULT_OK else {
                if frames.isEmpty { throw AVIFDecoder.error(result, decoder) }
                break
            }
            if let tileAlpha, let image = decoder.pointee.image { try tileAlpha.apply(to: image, options: options) }
            let buffer = try frame()
            frames.append(ImageFrame(buffer: buffer, duration: duration(decoder.pointee.imageTiming)))
        }
        return frames
    }

    /// The current image of the decoder, as it should be shown.
    func frame() throws -> PixelBuffer {
        let image = decoder.pointee.image.pointee
        let width = Int(image.width)
        let height = Int(image.height)
        // The AV1 payload may disagree with the container; dav1d was bounded by imageSizeLimit, check again.
        try options.checkDimensions(width: width, height: height, format: .avif)
        guard width == size.width, height == size.height else {
            throw CodecError.corrupt(
                format: .avif, reason: "frame of \(width)x\(height) in an image declared \(size.width)x\(size.height)")
        }
        var buffer = try PixelBuffer(width: width, height: height, format: .rgba8) { output in
            // A 12 MP frame otherwise takes ~12,000 page faults while libyuv writes it (~13 ms of CPU).
            adviseHugePages(output)
            try convertToRGB(image, into: output, colour: isShownAtFullSize ? stripColour : nil)
        }
        if image.alphaPlane == nil { buffer = buffer.assumingOpaque() }
        if let crop = transform.crop { buffer = try buffer.croppedRows(to: crop) }
        let fitted = TargetFitting.fittedSize(
            of: buffer.size, within: options.targetSize, orientation: transform.orientation, mode: options.targetMode)
        buffer = try buffer.resampledWithVectorKernel(to: fitted)
        return options.appliesOrientation ? buffer.oriented(transform.orientation) : buffer
    }

    /// Rows per strip of the colour conversion: about `stripBytes` of RGBA, so that a strip is still in the cache
    /// when the colour kernel reads it; even (a 4:2:0 view must start on a chroma row), at least 2.
    static func stripRows(rowBytes: Int, stripBytes: Int) -> Int {
        max(2, stripBytes / max(1, rowBytes)) & ~1
    }

    /// `image` (the decoder's current image) converted from YUV to RGBA8 into `output`, and then to sRGB by
    /// `colour` when given: strip by strip, each converted by libavif through a view of its rows.
    ///
    /// libavif's bilinear chroma upsampling (libyuv's, and its own) takes the chroma rows above and below each
    /// row, clamped at the edges of what it is given. A strip's view therefore reaches `margin` rows beyond the
    /// strip on each side, so that every row of the strip comes out as from the whole image (the tests compare
    /// the bytes); the rows a view writes above its strip, already final, are saved before and put back after.
    private func convertToRGB(
        _ image: avifImage, into output: UnsafeMutableRawBufferPointer, colour: LCMSTransform?
    ) throws {
        let height = Int(image.height)
        let rowBytes = Int(image.width) * 4
        let rows = Self.stripRows(rowBytes: rowBytes, stripBytes: stripBytes)
        guard let colour, height > 2 * rows else {
            try Self.convertRows(image, 0..<height, into: output, rowBytes: rowBytes)
            colour?.convert(output)
            return
        }
        let margin = 2
        let saved = UnsafeMutableRawBufferPointer.allocate(byteCount: margin * rowBytes, alignment: 64)
        defer { saved.deallocate() }
        var top = 0
        while top < height {
            let bottom = min(height, top + rows)
            let view = max(0, top - margin)..<min(height, bottom + margin)
            let above = view.lowerBound * rowBytes..<top * rowBytes
            if !above.isEmpty { saved.copyMemory(from: UnsafeRawBufferPointer(rebasing: output[above])) }
            try Self.convertRows(image, view, into: output, rowBytes: rowBytes)
            if !above.isEmpty {
                UnsafeMutableRawBufferPointer(rebasing: output[above]).copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: saved[0..<above.count]))
            }
            colour.convert(UnsafeMutableRawBufferPointer(rebasing: output[top * rowBytes..<bottom * rowBytes]))
            top = bottom
        }
    }

    /// Rows `rows` of `image` converted from YUV to RGBA8 into the same rows of `output`, through a view of
    /// `image` that starts at `rows.lowerBound` (which must be even when the chroma is subsampled vertically).
    private static func convertRows(
        _ image: avifImage, _ rows: Range<Int>, into output: UnsafeMutableRawBufferPointer, rowBytes: Int
    ) throws {
        var view = image
        if rows.lowerBound > 0 {
            var info = avifPixelFormatInfo()
            avifGetPixelFormatInfo(image.yuvFormat, &info)
            let first = rows.lowerBound
            let chroma = first >> Int(info.chromaShiftY)
            view.yuvPlanes.0 = image.yuvPlanes.0.map { $0 + first * Int(image.yuvRowBytes.0) }
            view.yuvPlanes.1 = image.yuvPlanes.1.map { $0 + chroma * Int(image.yuvRowBytes.1) }
            view.yuvPlanes.2 = image.yuvPlanes.2.map { $0 + chroma * Int(image.yuvRowBytes.2) }
            view.alphaPlane = image.alphaPlane.map { $0 + first * Int(image.alphaRowBytes) }
        }
        view.height = UInt32(rows.count)
        // The view borrows the planes: nothing frees it (libavif only reads it here).
        view.imageOwnsYUVPlanes = AVIF_FALSE
        view.imageOwnsAlphaPlane = AVIF_FALSE
        try withUnsafeMutablePointer(to: &view) { view in
            var rgb = avifRGBImage()
            avifRGBImageSetDefaults(&rgb, view)
            rgb.format = AVIF_RGB_FORMAT_RGBA
            rgb.depth = 8
            rgb.alphaPremultiplied = AVIF_FALSE
            // libavif 0.11's libyuv path leaves 8-bit limited-range monochrome unexpanded; its own path is right.
            if image.yuvFormat == AVIF_PIXEL_FORMAT_YUV400 { rgb.avoidLibYUV = AVIF_TRUE }
            rgb.pixels = (output.baseAddress.map { $0 + rows.lowerBound * rowBytes })?
                .assumingMemoryBound(to: UInt8.self)
            rgb.rowBytes = UInt32(rowBytes)
            let result = avifImageYUVToRGB(view, &rgb)
            guard result == AVIF_RESULT_OK else { throw AVIFDecoder.error(result, nil) }
        }
    }

    func duration(_ timing: avifImageTiming) -> Duration {
        guard timing.timescale > 0 else { return .zero }
        let (micro, overflow) = timing.durationInTimescales.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return .seconds(Int64(clamping: timing.durationInTimescales / timing.timescale)) }
        return .microseconds(Int64(clamping: micro / timing.timescale))
    }

    /// The file's transforms; a `clap` that does not describe a rectangle inside the image is ignored.
    private static func transform(of image: avifImage, size: PixelSize) -> ItemTransform {
        let flags = image.transformFlags
        var crop: ItemTransform.CropRect?
        if flags & avifTransformFlags(AVIF_TRANSFORM_CLAP.rawValue) != 0 {
            var rect = avifCropRect()
            var clap = image.clap
            var diag = avifDiagnostics()
            // Converted as 4:4:4 so an odd offset over subsampled chroma is accepted: the crop is done in RGB.
            if avifCropRectConvertCleanApertureBox(
                &rect, &clap, UInt32(size.width), UInt32(size.height), AVIF_PIXEL_FORMAT_YUV444, &diag) != 0,
                rect.width > 0, rect.height > 0,
                Int(rect.x) + Int(rect.width) <= size.width, Int(rect.y) + Int(rect.height) <= size.height
            {
                crop = ItemTransform.CropRect(
                    x: Int(rect.x), y: Int(rect.y), width: Int(rect.width), height: Int(rect.height))
            }
        }
        let rotation = flags & avifTransformFlags(AVIF_TRANSFORM_IROT.rawValue) != 0 ? Int(image.irot.angle) : 0
        let mirror = flags & avifTransformFlags(AVIF_TRANSFORM_IMIR.rawValue) != 0 ? Int(image.imir.mode) : nil
        return ItemTransform(crop: crop, orientation: ItemTransform.orientation(rotation: rotation, mirror: mirror))
    }
}
