import CJXL
import Foundation
import ImagoCore

/// One run of libjxl's event loop for ``JPEGXLDecoder``: reads the basic info, the colour profile and each
/// displayed frame, checking every budget before the pixels it needs are allocated.
///
/// Three ways to run it: ``run()`` decodes every frame up front (and stops with ``OverBudget`` when an
/// animation's frames would exceed ``DecodingOptions/animationMemoryBudget``), ``scan()`` reads only the frame
/// headers (no pixels), and ``nextFrame()`` decodes one frame at a time for `JPEGXLFrameDecoder`.
struct JPEGXLDecodeSession {
    let decoder: OpaquePointer
    let runner: UnsafeMutableRawPointer?
    let maximumThreads: Int
    let options: DecodingOptions
    /// Whether frames are produced one at a time (on demand): the frame count and byte budgets were checked by
    /// ``scan()``, and no frame is kept.
    var isOnDemand = false

    /// An animation's frames would exceed the memory budget: decode it on demand instead.
    struct OverBudget: Error {}

    private var info = JxlBasicInfo()
    /// The size of the delivered pixels (the stored size turned by the orientation when libjxl applies it).
    private var size = PixelSize(width: 0, height: 0)
    private var outputSize = PixelSize(width: 0, height: 0)
    private var orientation = ExifOrientation.up
    private var colour = EmbeddedColour.unspecified
    private var frames: [ImageFrame] = []
    private var pendingDuration = Duration.zero
    private var isPartial = false
    private var isLastFrame = false
    /// The frame marked last in its header has been decoded completely.
    private var sawLastFrame = false

    private static let format = JxlPixelFormat(
        num_channels: 4, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)

    init(decoder: OpaquePointer, runner: UnsafeMutableRawPointer?, maximumThreads: Int, options: DecodingOptions) {
        self.decoder = decoder
        self.runner = runner
        self.maximumThreads = maximumThreads
        self.options = options
    }

    /// Subscribes to the events we handle and hands libjxl the whole input.
    ///
    /// The input is deliberately left open: libjxl 0.7 answers a truncated file whose input was closed with
    /// `JXL_DEC_ERROR` (indistinguishable from corruption), but one left open with `JXL_DEC_NEED_MORE_INPUT`, and
    /// since it already holds every byte, that means the file is truncated.
    func start(input: UnsafePointer<UInt8>, count: Int, decodesPixels: Bool = true) throws {
        let events =
            JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_COLOR_ENCODING.rawValue | JXL_DEC_FRAME.rawValue
            | (decodesPixels ? JXL_DEC_FULL_IMAGE.rawValue : 0)
        try JPEGXLDecoder.check(JxlDecoderSubscribeEvents(decoder, Int32(events)))
        try JPEGXLDecoder.check(JxlDecoderSetKeepOrientation(decoder, options.appliesOrientation ? 0 : 1))
        try JPEGXLDecoder.check(JxlDecoderSetUnpremultiplyAlpha(decoder, 1))
        try JPEGXLDecoder.check(JxlDecoderSetInput(decoder, input, count))
    }

    /// Runs the event loop to the end of the file (or the first frame) and builds the container.
    mutating func run() throws -> (container: ImageContainer, colour: EmbeddedColour) {
        loop: while true {
            let status = JxlDecoderProcessInput(decoder)
            switch status {
            case JXL_DEC_BASIC_INFO: try readBasicInfo()
            case JXL_DEC_COLOR_ENCODING: readColour()
            case JXL_DEC_FRAME:
                if options.decodesFirstFrameOnly && !frames.isEmpty { break loop }
                try beginFrame(count: frames.count + 1)
            case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                try decodeFrame()
                if isPartial { break loop }
            case JXL_DEC_SUCCESS: break loop
            case JXL_DEC_NEED_MORE_INPUT:
                // libjxl holds every byte: the file ends early (or only boxes after the last frame are missing).
                if sawLastFrame || (options.decodesFirstFrameOnly && !frames.isEmpty) { break loop }
                guard options.allowsPartialData, !frames.isEmpty else { throw CodecError.truncated(format: .jpegXL) }
                isPartial = true
                break loop
            case JXL_DEC_ERROR: throw CodecError.corrupt(format: .jpegXL, reason: "libjxl could not decode the file")
            default:
                throw CodecError.corrupt(format: .jpegXL, reason: "unexpected libjxl event \(status.rawValue)")
            }
        }
        guard !frames.isEmpty else { throw CodecError.corrupt(format: .jpegXL, reason: "the file has no frames") }
        let container = ImageContainer(
            frames: frames, format: .jpegXL, loopCount: Int(info.animation.num_loops), orientation: orientation,
            isPreview: isPartial, originalSize: size, bitDepth: Int(info.bits_per_sample))
        return (container, colour)
    }

    /// Reads the frame headers only (started with `decodesPixels: false`): each displayed frame's duration,
    /// checked against the frame and work limits, and the colour; `nil` when the file ends early or libjxl
    /// fails (the up-front decode then reports it).
    mutating func scan() throws -> (durations: [Duration], colour: EmbeddedColour)? {
        var durations: [Duration] = []
        while true {
            switch JxlDecoderProcessInput(decoder) {
            case JXL_DEC_BASIC_INFO: try readBasicInfo()
            case JXL_DEC_COLOR_ENCODING: readColour()
            case JXL_DEC_FRAME:
                try beginFrame(count: durations.count + 1, holdsFrames: false)
                durations.append(pendingDuration)
            case JXL_DEC_SUCCESS: return (durations, colour)
            default: return nil
            }
        }
    }

    /// Decodes the next displayed frame (``isOnDemand``).
    ///
    /// - Throws: ``CodecError/truncated(format:)`` when there is none or the data ends before it;
    ///   ``CodecError/corrupt(format:reason:)`` when libjxl fails.
    mutating func nextFrame() throws -> ImageFrame {
        while true {
            let status = JxlDecoderProcessInput(decoder)
            switch status {
            case JXL_DEC_BASIC_INFO: try readBasicInfo()
            case JXL_DEC_COLOR_ENCODING: readColour()
            case JXL_DEC_FRAME: try beginFrame(count: 1)
            case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                try decodeFrame()
                if let frame = frames.popLast() { return frame }
            case JXL_DEC_SUCCESS, JXL_DEC_NEED_MORE_INPUT: throw CodecError.truncated(format: .jpegXL)
            case JXL_DEC_ERROR: throw CodecError.corrupt(format: .jpegXL, reason: "libjxl could not decode the file")
            default:
                throw CodecError.corrupt(format: .jpegXL, reason: "unexpected libjxl event \(status.rawValue)")
            }
        }
    }

    /// The pixels of the canvas frames are composited on (0 before the basic info).
    var canvasPixelCount: Int { Int(info.xsize) * Int(info.ysize) }

    /// The container's properties (every frame but the first produced on demand).
    func container(first: ImageFrame) -> ImageContainer {
        ImageContainer(
            frames: [first], format: .jpegXL, loopCount: Int(info.animation.num_loops), orientation: orientation,
            originalSize: size, bitDepth: Int(info.bits_per_sample))
    }

    private mutating func readBasicInfo() throws {
        guard JxlDecoderGetBasicInfo(decoder, &info) == JXL_DEC_SUCCESS else {
            throw CodecError.corrupt(format: .jpegXL, reason: "the basic info could not be read")
        }
        let stored = PixelSize(width: Int(info.xsize), height: Int(info.ysize))
        try options.checkDimensions(width: stored.width, height: stored.height, format: .jpegXL)
        let declared = ExifOrientation(rawValue: Int(info.orientation.rawValue)) ?? .up
        if options.appliesOrientation {
            size = declared.swapsDimensions ? PixelSize(width: stored.height, height: stored.width) : stored
            outputSize = TargetFitting.fittedSize(
                of: size, within: options.targetSize, orientation: .up, mode: options.targetMode)
        } else {
            size = stored
            orientation = declared
            outputSize = TargetFitting.fittedSize(
                of: size, within: options.targetSize, orientation: declared, mode: options.targetMode)
        }
        if let runner {
            let suggested = JxlResizableParallelRunnerSuggestThreads(UInt64(info.xsize), UInt64(info.ysize))
            JxlResizableParallelRunnerSetThreads(runner, min(Int(suggested), maximumThreads))
        }
    }

    private mutating func readColour() {
        // XYB (lossy) images can be rendered in any space: ask for sRGB (libjxl's own choice would be linear sRGB,
        // which 8-bit output bands). Losslessly stored images keep their space; the colour hook says which.
        if info.uses_original_profile == 0 {
            var srgb = JxlColorEncoding()
            JxlColorEncodingSetToSRGB(&srgb, info.num_color_channels == 1 ? 1 : 0)
            _ = JxlDecoderSetPreferredColorProfile(decoder, &srgb)
        }
        colour = EmbeddedColour.jpegXL(from: decoder)
    }

    /// A displayed frame's header: its duration, and the budgets for frame number `count` (from 1).
    private mutating func beginFrame(count: Int, holdsFrames: Bool = true) throws {
        var header = JxlFrameHeader()
        guard JxlDecoderGetFrameHeader(decoder, &header) == JXL_DEC_SUCCESS else {
            throw CodecError.corrupt(format: .jpegXL, reason: "a frame header could not be read")
        }
        pendingDuration = .zero
        isLastFrame = header.is_last != 0
        if info.have_animation != 0, info.animation.tps_numerator > 0 {
            let seconds =
                Double(header.duration) * Double(info.animation.tps_denominator)
                / Double(info.animation.tps_numerator)
            pendingDuration = .milliseconds((seconds * 1000).rounded())
        }
        if isOnDemand { return }
        guard count <= options.frameLimit else { throw CodecError.tooManyFrames(limit: options.frameLimit) }
        // Every frame is composited on the full canvas before it is fitted to the target.
        try options.checkAnimationWork(frames: count, canvas: size)
        guard holdsFrames else { return }  // a scan: frames produced on demand are never all held
        let (bytes, overflow) = count.multipliedReportingOverflow(by: outputSize.pixelCount * 4)
        // An animation past the budget is decoded on demand instead (from the second frame: a single frame is
        // held anyway).
        if info.have_animation != 0, !options.decodesFirstFrameOnly, count > 1,
            overflow || bytes > options.animationMemoryBudget
        {
            throw OverBudget()
        }
        guard !overflow, bytes <= options.animationByteLimit else {
            throw CodecError.animationTooLarge(limit: options.animationByteLimit)
        }
    }

    /// Decodes the current frame straight into a new buffer (libjxl writes every byte), then fits it.
    private mutating func decodeFrame() throws {
        var needed = 0
        var format = Self.format
        guard JxlDecoderImageOutBufferSize(decoder, &format, &needed) == JXL_DEC_SUCCESS,
            needed == size.pixelCount * 4
        else { throw CodecError.corrupt(format: .jpegXL, reason: "unexpected output buffer size") }
        var outcome = JXL_DEC_ERROR
        let decoder = self.decoder
        let allowsPartial = options.allowsPartialData && frames.isEmpty
        var image = try PixelBuffer(width: size.width, height: size.height, format: .rgba8) { output in
            // A preview of a truncated still may leave pixels unwritten: start from transparent black then.
            if allowsPartial { output.initializeMemory(as: UInt8.self, repeating: 0) }
            guard JxlDecoderSetImageOutBuffer(decoder, &format, output.baseAddress, output.count) == JXL_DEC_SUCCESS
            else {
                output.initializeMemory(as: UInt8.self, repeating: 0)
                return
            }
            repeat {
                outcome = JxlDecoderProcessInput(decoder)
            } while outcome == JXL_DEC_FRAME_PROGRESSION
            if outcome == JXL_DEC_NEED_MORE_INPUT, allowsPartial {
                outcome = JxlDecoderFlushImage(decoder) == JXL_DEC_SUCCESS ? JXL_DEC_NEED_MORE_INPUT : JXL_DEC_ERROR
            } else if outcome != JXL_DEC_FULL_IMAGE {
                output.initializeMemory(as: UInt8.self, repeating: 0)  // never hand out unwritten bytes
            }
        }
        switch outcome {
        case JXL_DEC_FULL_IMAGE: break
        case JXL_DEC_NEED_MORE_INPUT:
            guard options.allowsPartialData else { throw CodecError.truncated(format: .jpegXL) }
            isPartial = true
            // An animation's incomplete frame is dropped: only complete frames are returned.
            if !allowsPartial { return }
        default: throw CodecError.corrupt(format: .jpegXL, reason: "libjxl could not decode a frame")
        }
        if info.alpha_bits == 0 { image = image.assumingOpaque() }
        if outputSize != size { image = try image.resampledWithVectorKernel(to: outputSize) }
        frames.append(ImageFrame(buffer: image, duration: pendingDuration))
        sawLastFrame = isLastFrame && !isPartial
    }
}
