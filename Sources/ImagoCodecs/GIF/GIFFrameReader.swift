import CGIF
import ImagoCore

/// Walks a GIF record by record (image descriptors, extensions, trailer) and composites each frame.
///
/// Record-by-record on purpose: `DGifSlurp` keeps every frame's raster and a `SavedImage` per frame, so a file
/// with 100,000 frames would allocate all of them before we could count; `DGifGetImageHeader` (unlike
/// `DGifGetImageDesc`) does not append to `SavedImages` either, so memory stays bounded by one canvas.
struct GIFFrameReader {
    let gif: UnsafeMutablePointer<GifFileType>
    let options: DecodingOptions

    private var canvas: GIFCanvas?
    private var outputSize = PixelSize(width: 1, height: 1)
    private var frames: [ImageFrame] = []
    /// Plays once unless a NETSCAPE2.0 block says otherwise.
    private var loopCount = 1
    /// The graphics control extension for the next image (it applies to one image only).
    private var control = GIFGraphicsControl()
    /// Whether the canvas holds lines of a frame that broke off (returned only with `allowsPartialData`).
    private var hasPartialFrame = false
    /// The global colour map as a palette, with the transparent index it was built for: most animations
    /// use it for every frame, so it is built once.
    private var globalPalette: (transparentIndex: Int?, palette: GIFPalette)?
    /// One line of palette indices, reused across frames.
    private var line: [GifPixelType] = []

    /// Image descriptors found by ``GIFStructure/frameCount(in:limit:)`` before decoding; `nil` when unknown.
    var declaredFrames: Int?

    init(gif: UnsafeMutablePointer<GifFileType>, options: DecodingOptions) {
        self.gif = gif
        self.options = options
    }

    /// A giflib call failed: the data ended or is corrupt at this point.
    private struct ReadFailure: Error { var error: CodecError }

    mutating func decodeAll() throws -> ImageContainer {
        let screenWidth = Int(gif.pointee.SWidth)
        let screenHeight = Int(gif.pointee.SHeight)
        // Fail fast on a hostile logical screen, before anything is allocated for it.
        if screenWidth > 0 && screenHeight > 0 {
            try options.checkDimensions(width: screenWidth, height: screenHeight, format: .gif)
            // Full-size output: every frame is a screen-sized buffer, so the declared frames bound the bytes.
            if options.targetSize == nil, !options.decodesFirstFrameOnly, let declaredFrames {
                guard declaredFrames <= options.frameLimit else {
                    throw CodecError.tooManyFrames(limit: options.frameLimit)
                }
                let (total, overflow) = declaredFrames.multipliedReportingOverflow(by: screenWidth * screenHeight * 4)
                guard !overflow, total <= options.animationByteLimit else {
                    throw CodecError.animationTooLarge(limit: options.animationByteLimit)
                }
            }
            // Every frame is composited on the full screen, whatever the target size: bound that work up front.
            if !options.decodesFirstFrameOnly, let declaredFrames {
                try options.checkAnimationWork(
                    frames: declaredFrames, canvas: PixelSize(width: screenWidth, height: screenHeight))
            }
        }
        do {
            while true {
                var type = UNDEFINED_RECORD_TYPE
                // Many GIFs in the wild end right after their last frame, without the trailer byte; browsers
                // show them whole, so the data ending exactly there is not a truncation.
                if isAtEndOfData, !frames.isEmpty { return finished() }
                try check(DGifGetRecordType(gif, &type))
                switch type {
                case IMAGE_DESC_RECORD_TYPE:
                    guard frames.count < options.frameLimit else {
                        throw CodecError.tooManyFrames(limit: options.frameLimit)
                    }
                    try check(DGifGetImageHeader(gif))
                    try decodeFrame()
                    if options.decodesFirstFrameOnly { return container() }
                case EXTENSION_RECORD_TYPE:
                    try readExtension()
                case TERMINATE_RECORD_TYPE:
                    guard !frames.isEmpty else {
                        throw CodecError.corrupt(format: .gif, reason: "the file has no image")
                    }
                    return finished()
                default:
                    throw ReadFailure(error: .corrupt(format: .gif, reason: "unknown record type"))
                }
            }
        } catch let failure as ReadFailure {
            return try endEarly(failure.error)
        }
    }

    /// The complete image (at least one frame): a single-frame GIF is a still image, with no duration.
    private mutating func finished() -> ImageContainer {
        if frames.count == 1 { frames[0].duration = .zero }
        return container()
    }

    /// Whether giflib has read every byte of the data.
    private var isAtEndOfData: Bool {
        guard let user = gif.pointee.UserData else { return false }
        let source = Unmanaged<GIFByteSource>.fromOpaque(user).takeUnretainedValue()
        return source.offset >= source.bytes.count
    }

    private func check(_ status: Int32) throws {
        guard status == GIF_OK else { throw ReadFailure(error: GIFDecoder.error(code: gif.pointee.Error)) }
    }

    /// The data broke off: unless partial data is allowed, running out of data fails (a truncated file is never
    /// taken for a whole one); a corrupt record after complete frames keeps them. With partial data allowed,
    /// the complete frames or the partial first one, as a preview.
    private func endEarly(_ error: CodecError) throws -> ImageContainer {
        let ranOut = error == .truncated(format: .gif)
        if ranOut, !options.allowsPartialData { throw error }
        if !frames.isEmpty {
            var result = container()
            result.isPreview = ranOut
            return result
        }
        if options.allowsPartialData, hasPartialFrame, let canvas {
            var preview = container(extra: try output(canvas.pixels, duration: .zero))
            preview.isPreview = true
            return preview
        }
        throw error
    }

    private func container(extra: ImageFrame? = nil) -> ImageContainer {
        ImageContainer(
            frames: extra.map { frames + [$0] } ?? frames, format: .gif, loopCount: loopCount,
            originalSize: canvas?.pixels.size)
    }

    private func output(_ pixels: PixelBuffer, duration: Duration) throws -> ImageFrame {
        ImageFrame(buffer: try pixels.resampledWithVectorKernel(to: outputSize), duration: duration)
    }

    // MARK: Frames

    private mutating func decodeFrame() throws {
        let desc = gif.pointee.Image
        let rect = GIFRect(
            x: Int(desc.Left), y: Int(desc.Top), width: Int(desc.Width), height: Int(desc.Height))
        let frameControl = control
        control = GIFGraphicsControl()

        var canvas = try self.canvas ?? makeCanvas(firstFrame: rect)
        self.canvas = nil  // keep the pixels uniquely referenced while drawing (no copy-on-write copy)
        defer { self.canvas = canvas }

        let (total, overflow) = (frames.count + 1).multipliedReportingOverflow(by: outputSize.pixelCount * 4)
        guard !overflow, total <= options.animationByteLimit else {
            throw CodecError.animationTooLarge(limit: options.animationByteLimit)
        }
        // (when the frames could not be counted up front)
        try options.checkAnimationWork(
            frames: frames.count + 1,
            canvas: PixelSize(width: Int(gif.pointee.SWidth), height: Int(gif.pointee.SHeight)))
        canvas.beginFrame(rect, disposal: frameControl.disposal)

        if rect.width > 0 && rect.height > 0 {
            // giflib decodes the whole frame even where it lies outside the canvas: bound that work too.
            try options.checkDimensions(width: rect.width, height: rect.height, format: .gif)
            let palette = palette(local: desc.ColorMap, transparentIndex: frameControl.transparentIndex)
            var order = GIFRowOrder(height: rect.height, isInterlaced: desc.Interlace)
            if line.count < rect.width { line = [GifPixelType](repeating: 0, count: rect.width) }
            for _ in 0..<rect.height {
                let status = line.withUnsafeMutableBufferPointer {
                    DGifGetLine(gif, $0.baseAddress, Int32(rect.width))
                }
                try check(status)
                hasPartialFrame = true
                let row = order.next()
                line.withUnsafeBufferPointer {
                    canvas.draw(
                        row: UnsafeBufferPointer(rebasing: $0[0..<rect.width]), frameRow: row, of: rect,
                        palette: palette)
                }
            }
        } else {
            try skipImageData()
        }
        hasPartialFrame = false
        frames.append(try output(canvas.pixels, duration: .milliseconds(frameControl.delayCentiseconds * 10)))
    }

    private mutating func palette(
        local: UnsafeMutablePointer<ColorMapObject>?, transparentIndex: Int?
    )
        -> GIFPalette
    {
        if let local { return GIFPalette(local, transparentIndex: transparentIndex) }
        if let cached = globalPalette, cached.transparentIndex == transparentIndex { return cached.palette }
        let palette = GIFPalette(gif.pointee.SColorMap, transparentIndex: transparentIndex)
        globalPalette = (transparentIndex, palette)
        return palette
    }

    private mutating func makeCanvas(firstFrame rect: GIFRect) throws -> GIFCanvas {
        var width = Int(gif.pointee.SWidth)
        var height = Int(gif.pointee.SHeight)
        if width == 0 || height == 0 {  // no logical screen: use the first frame's extent, as browsers do
            width = rect.x + rect.width
            height = rect.y + rect.height
        }
        try options.checkDimensions(width: width, height: height, format: .gif)
        outputSize = TargetFitting.fittedSize(
            of: PixelSize(width: width, height: height), within: options.targetSize, orientation: .up,
            mode: options.targetMode)
        return try GIFCanvas(width: width, height: height)
    }

    /// Consumes an empty frame's LZW data blocks.
    private func skipImageData() throws {
        var codeSize: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        try check(DGifGetCode(gif, &codeSize, &block))
        while block != nil { try check(DGifGetCodeNext(gif, &block)) }
    }

    // MARK: Extensions

    private mutating func readExtension() throws {
        var code: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        try check(DGifGetExtension(gif, &code, &block))
        var index = 0
        var isLoopApplication = false
        while let current = block {
            // giflib hands each sub-block as [length, bytes…].
            let payload = UnsafeBufferPointer(start: current + 1, count: Int(current[0]))
            switch code {
            case GRAPHICS_EXT_FUNC_CODE where index == 0:
                control = GIFGraphicsControl(payload)
            case APPLICATION_EXT_FUNC_CODE where index == 0:
                isLoopApplication =
                    payload.elementsEqual("NETSCAPE2.0".utf8) || payload.elementsEqual("ANIMEXTS1.0".utf8)
            case APPLICATION_EXT_FUNC_CODE where isLoopApplication && payload.count >= 3 && payload[0] == 1:
                loopCount = Int(payload[1]) | Int(payload[2]) << 8
            default:
                break
            }
            index += 1
            try check(DGifGetExtensionNext(gif, &block))
        }
    }
}

/// The graphics control extension's fields that matter for display.
struct GIFGraphicsControl {
    /// 0 unspecified, 1 keep, 2 restore to background, 3 restore to previous (others act as keep).
    var disposal = 0
    /// Delay before the next frame, in 1/100 s.
    var delayCentiseconds = 0
    /// The palette index that leaves the canvas untouched, if any.
    var transparentIndex: Int?

    init() {}

    /// Parses the 4-byte block: packed fields, delay (little-endian), transparent index.
    init(_ bytes: UnsafeBufferPointer<GifByteType>) {
        guard bytes.count >= 4 else { return }
        disposal = Int(bytes[0] >> 2) & 7
        delayCentiseconds = Int(bytes[1]) | Int(bytes[2]) << 8
        transparentIndex = bytes[0] & 1 != 0 ? Int(bytes[3]) : nil
    }
}

/// The order in which a frame's lines arrive: top to bottom, or the four interlace passes.
struct GIFRowOrder {
    let height: Int
    let isInterlaced: Bool
    private var pass = 0
    private var row = 0
    private static let starts = [0, 4, 2, 1]
    private static let steps = [8, 8, 4, 2]

    init(height: Int, isInterlaced: Bool) {
        self.height = height
        self.isInterlaced = isInterlaced
    }

    /// The frame row the next line belongs to.
    mutating func next() -> Int {
        let current = row
        if !isInterlaced {
            row += 1
        } else {
            row += Self.steps[pass]
            while row >= height && pass < 3 {
                pass += 1
                row = Self.starts[pass]
            }
        }
        return current
    }
}

// MARK: - One frame at a time (on-demand animations)

extension GIFFrameReader {
    /// Reads records up to and including the next image and returns its composited frame (fitted as in
    /// ``decodeAll()``); `nil` at the trailer. Used by `GIFFrameDecoder`, which decodes frames as they are asked for.
    ///
    /// - Throws: ``CodecError`` when the data breaks off or is corrupt before the next frame is complete.
    mutating func nextFrame() throws -> ImageFrame? {
        do {
            while true {
                var type = UNDEFINED_RECORD_TYPE
                try check(DGifGetRecordType(gif, &type))
                switch type {
                case IMAGE_DESC_RECORD_TYPE:
                    try check(DGifGetImageHeader(gif))
                    try decodeFrame()
                    return frames.removeLast()
                case EXTENSION_RECORD_TYPE:
                    try readExtension()
                case TERMINATE_RECORD_TYPE:
                    return nil
                default:
                    throw CodecError.corrupt(format: .gif, reason: "unknown record type")
                }
            }
        } catch let failure as ReadFailure {
            throw failure.error
        }
    }

    /// The loop count read so far (the NETSCAPE2.0 block precedes the first image in practice).
    var loopCountSoFar: Int { loopCount }
}
