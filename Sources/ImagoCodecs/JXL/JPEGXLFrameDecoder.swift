import CJXL
import ImagoCore

/// The frames of a JPEG XL animation decoded on request for ``OnDemandFrames``: a copy of the encoded file and one
/// libjxl decoder over it (with its thread pool), each frame composited by libjxl and fitted exactly as the
/// up-front decode does.
///
/// Any frame can be a starting point: going back rewinds libjxl (`JxlDecoderRewind`, which keeps what it learnt
/// about the frames) and skips to the frame (`JxlDecoderSkipFrames`, which decodes only the frames later ones
/// are composited from); going forward past the next frame skips from where it is.
///
/// Used only under ``OnDemandFrames``' lock. libjxl is destroyed in `deinit` before the file copy it reads.
final class JPEGXLFrameDecoder: SequentialFrameDecoder {
    private let file: UnsafeMutableRawBufferPointer
    private let decoder: OpaquePointer
    private let runner: UnsafeMutableRawPointer?
    private let maximumThreads: Int
    private let options: DecodingOptions
    private var session: JPEGXLDecodeSession
    /// The frame libjxl produces next.
    private var index = 0

    /// An on-demand container for the animation in `raw` (its frames exceed the memory budget) and its colour:
    /// the frame headers are scanned first (durations, frame and work limits), then frame 0 is decoded.
    ///
    /// - Returns: `nil` when the scan fails (the file ends early or libjxl fails: the up-front decode reports it).
    static func container(
        for raw: UnsafeRawBufferPointer, maximumThreads: Int, options: DecodingOptions
    ) throws -> (container: ImageContainer, colour: EmbeddedColour)? {
        let decoder = try JPEGXLFrameDecoder(raw, maximumThreads: maximumThreads, options: options)
        guard let (durations, colour) = try decoder.scanned(), durations.count > 1 else { return nil }
        let source = OnDemandFrames(
            decoder, durations: durations,
            // libjxl keeps the reference frames later ones are composited from: estimated as two RGBA canvases.
            fixedBytes: raw.count + 2 * decoder.session.canvasPixelCount * 4)
        let first = try source.frame(at: 0)
        let container = source.withDecoder { $0.session.container(first: first) }
        var result = container
        result.frameSource = source
        return (result, colour)
    }

    private init(_ raw: UnsafeRawBufferPointer, maximumThreads: Int, options: DecodingOptions) throws {
        guard let decoder = JxlDecoderCreate(nil) else {
            throw CodecError.corrupt(format: .jpegXL, reason: "libjxl could not create a decoder")
        }
        var options = options
        options.allowsPartialData = false  // a frame is complete or an error
        self.decoder = decoder
        self.maximumThreads = maximumThreads
        self.options = options
        file = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, raw.count), alignment: 16)
        file.copyMemory(from: raw)
        runner = maximumThreads > 1 ? JxlResizableParallelRunnerCreate(nil) : nil
        session = JPEGXLDecodeSession(
            decoder: decoder, runner: runner, maximumThreads: maximumThreads, options: options)
        if let runner {
            guard JxlDecoderSetParallelRunner(decoder, JxlResizableParallelRunner, runner) == JXL_DEC_SUCCESS else {
                throw CodecError.corrupt(format: .jpegXL, reason: "libjxl refused its thread pool")
            }
        }
    }

    deinit {
        JxlDecoderDestroy(decoder)
        if let runner { JxlResizableParallelRunnerDestroy(runner) }
        file.deallocate()
    }

    /// Reads every frame header without pixels, then rewinds for decoding.
    private func scanned() throws -> (durations: [Duration], colour: EmbeddedColour)? {
        try session.start(input: input, count: file.count, decodesPixels: false)
        let result = try session.scan()
        try restart()
        return result
    }

    private var input: UnsafePointer<UInt8> {
        // The allocation has at least one byte, so the base address is never nil.
        UnsafePointer(file.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self))
    }

    /// Back to the start of the file, subscribed for pixels.
    private func restart() throws {
        JxlDecoderRewind(decoder)
        session = JPEGXLDecodeSession(
            decoder: decoder, runner: runner, maximumThreads: maximumThreads, options: options)
        session.isOnDemand = true
        try session.start(input: input, count: file.count)
        index = 0
    }

    func keyFrame(atOrBefore index: Int) -> Int { index }

    func rewind() throws { try restart() }

    func rewind(toKeyFrame index: Int) throws {
        if index < self.index { try restart() }
        if index > self.index { JxlDecoderSkipFrames(decoder, index - self.index) }
        self.index = index
    }

    func next() throws -> ImageFrame {
        let frame = try session.nextFrame()
        index += 1
        return frame
    }
}
