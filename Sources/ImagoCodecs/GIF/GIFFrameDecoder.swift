import CGIF
import Foundation
import ImagoCore

/// The frames of an animated GIF decoded in order for ``OnDemandFrames``: a copy of the encoded file and one
/// giflib handle with its ``GIFFrameReader`` (a canvas and a saved canvas). Rewinding reopens the file (GIF has no
/// key frames).
///
/// Used only under ``OnDemandFrames``' lock. The session is closed in `deinit` before the file copy it reads.
final class GIFFrameDecoder: SequentialFrameDecoder {
    private let file: UnsafeMutableRawBufferPointer
    private let options: DecodingOptions
    private var session: Session?

    /// An open giflib handle over the file copy, and the reader walking it.
    private final class Session {
        let source: GIFByteSource
        let gif: UnsafeMutablePointer<GifFileType>
        var reader: GIFFrameReader

        init(_ file: UnsafeRawBufferPointer, options: DecodingOptions) throws {
            source = GIFByteSource(file)
            var openError: Int32 = 0
            guard let gif = DGifOpen(Unmanaged.passUnretained(source).toOpaque(), gifReadCallback, &openError) else {
                throw GIFDecoder.error(code: openError)
            }
            self.gif = gif
            reader = GIFFrameReader(gif: gif, options: options)
        }

        deinit { DGifCloseFile(gif, nil) }
    }

    /// An on-demand container for the GIF in `bytes` when its frames would exceed the memory budget; `nil` to
    /// decode it up front (a still image, `decodesFirstFrameOnly`, within the budget, or no logical screen size).
    /// `gif` is the caller's open handle, used only to read the screen size.
    static func container(
        for bytes: UnsafeRawBufferPointer, gif: UnsafeMutablePointer<GifFileType>, options: DecodingOptions
    ) throws -> ImageContainer? {
        let screen = PixelSize(width: Int(gif.pointee.SWidth), height: Int(gif.pointee.SHeight))
        guard !options.decodesFirstFrameOnly, screen.width > 0, screen.height > 0 else { return nil }
        try options.checkDimensions(width: screen.width, height: screen.height, format: .gif)
        let delays = GIFStructure.frameDelays(in: bytes, limit: min(options.frameLimit, Int.max - 1) + 1)
        guard delays.count > 1 else { return nil }
        let output = TargetFitting.fittedSize(
            of: screen, within: options.targetSize, orientation: .up, mode: options.targetMode)
        let (total, overflow) = delays.count.multipliedReportingOverflow(by: output.pixelCount * 4)
        guard overflow || total > options.animationMemoryBudget else { return nil }
        guard delays.count <= options.frameLimit else { throw CodecError.tooManyFrames(limit: options.frameLimit) }
        try options.checkAnimationWork(frames: delays.count, canvas: screen)
        let decoder = try GIFFrameDecoder(bytes, options: options)
        let source = OnDemandFrames(
            decoder, durations: delays.map { .milliseconds($0 * 10) },
            fixedBytes: bytes.count + 2 * screen.pixelCount * 4)
        let first = try source.frame(at: 0)
        // The NETSCAPE2.0 block precedes the first image: read while decoding it (1 when the file has none).
        let loopCount = source.withDecoder { $0.session?.reader.loopCountSoFar ?? 1 }
        var container = ImageContainer(frames: [first], format: .gif, loopCount: loopCount, originalSize: screen)
        container.frameSource = source
        return container
    }

    private init(_ bytes: UnsafeRawBufferPointer, options: DecodingOptions) throws {
        file = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
        file.copyMemory(from: bytes)
        self.options = options
    }

    deinit {
        session = nil  // closes giflib before the bytes it reads go
        file.deallocate()
    }

    func rewind() throws { session = nil }

    func next() throws -> ImageFrame {
        if session == nil { session = try Session(UnsafeRawBufferPointer(file), options: options) }
        guard let session, let frame = try session.reader.nextFrame() else { throw CodecError.truncated(format: .gif) }
        return frame
    }
}
