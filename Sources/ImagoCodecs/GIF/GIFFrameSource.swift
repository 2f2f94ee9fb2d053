import CGIF
import Foundation
import ImagoCore

/// The frames of an animated GIF produced on demand (see ``AnimationFrameSource``): a copy of the encoded file,
/// one giflib handle with its ``GIFFrameReader`` (a canvas and a saved canvas) and a buffer of at most
/// ``bufferCapacity`` decoded frames (the one last asked for and the next, decoded ahead). GIF has no key frames:
/// asking for a frame before the reader's position reopens the file and composites from the first frame.
///
/// `@unchecked Sendable`: the giflib session and the buffer are only touched under `state`'s lock; everything
/// else is immutable after `init`. The file copy is freed in `deinit`, after the session that reads it.
final class GIFFrameSource: AnimationFrameSource, @unchecked Sendable {
    static let bufferCapacity = 2

    let frameCount: Int
    let durations: [Duration]
    private let file: UnsafeMutableRawBufferPointer
    private let options: DecodingOptions
    private let canvasBytes: Int
    private let state: Locked<State>

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

    private struct State {
        var session: Session?
        var next = 0
        var buffer: [(index: Int, frame: ImageFrame)] = []
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
        let delays = GIFStructure.frameDelays(in: bytes, limit: options.frameLimit + 1)
        guard delays.count > 1 else { return nil }
        let output = TargetFitting.fittedSize(of: screen, within: options.targetSize, orientation: .up)
        let (total, overflow) = delays.count.multipliedReportingOverflow(by: output.pixelCount * 4)
        guard overflow || total > options.animationMemoryBudget else { return nil }
        guard delays.count <= options.frameLimit else { throw CodecError.tooManyFrames(limit: options.frameLimit) }
        try options.checkAnimationWork(frames: delays.count, canvas: screen)
        let source = try GIFFrameSource(bytes, delays: delays, canvas: screen, options: options)
        var container = ImageContainer(
            frames: [try source.frame(at: 0)], format: .gif, loopCount: source.loopCount, originalSize: screen)
        container.frameSource = source
        return container
    }

    private init(
        _ bytes: UnsafeRawBufferPointer, delays: [Int], canvas: PixelSize, options: DecodingOptions
    ) throws {
        file = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
        file.copyMemory(from: bytes)
        frameCount = delays.count
        durations = delays.map { .milliseconds($0 * 10) }
        self.options = options
        canvasBytes = canvas.pixelCount * 4
        state = Locked(State())
    }

    deinit {
        state.withLock { $0.session = nil }  // closes giflib before the bytes it reads go
        file.deallocate()
    }

    /// The NETSCAPE2.0 loop count as read while decoding frame 0 (1 when the file has none).
    private var loopCount: Int { state.withLock { $0.session?.reader.loopCountSoFar ?? 1 } }

    var retainedByteCount: Int {
        let buffered = state.withLock { $0.buffer.reduce(0) { $0 + $1.frame.buffer.byteCount } }
        return file.count + 2 * canvasBytes + buffered
    }

    func frame(at index: Int) throws -> ImageFrame {
        guard index >= 0, index < frameCount else {
            throw CodecError.corrupt(format: .gif, reason: "frame \(index) of an animation of \(frameCount)")
        }
        return try state.withLock { state in
            let frame: ImageFrame
            if let hit = state.buffer.first(where: { $0.index == index }) {
                frame = hit.frame
            } else {
                if state.session == nil || state.next > index {
                    state.session = nil
                    state.session = try Session(UnsafeRawBufferPointer(file), options: options)
                    state.next = 0
                    state.buffer.removeAll()
                }
                var decoded: ImageFrame?
                while state.next <= index { decoded = try decodeNext(&state) }
                guard let decoded else { throw CodecError.corrupt(format: .gif, reason: "frame \(index) missing") }
                frame = decoded
                remember(&state, index, frame)
            }
            if state.next == index + 1, state.next < frameCount, let ahead = try? decodeNext(&state) {
                remember(&state, index + 1, ahead)
            }
            return frame
        }
    }

    private func remember(_ state: inout State, _ index: Int, _ frame: ImageFrame) {
        state.buffer.removeAll { $0.index == index }
        state.buffer.append((index, frame))
        if state.buffer.count > Self.bufferCapacity {
            state.buffer.removeFirst(state.buffer.count - Self.bufferCapacity)
        }
    }

    private func decodeNext(_ state: inout State) throws -> ImageFrame {
        guard let session = state.session, let frame = try session.reader.nextFrame() else {
            throw CodecError.truncated(format: .gif)
        }
        state.next += 1
        return frame
    }
}
