import CWebP
import Foundation
import ImagoCore

/// The frames of an animated WebP produced on demand (see ``AnimationFrameSource``): a copy of the encoded file,
/// one `WebPAnimDecoder` (two canvases) and a buffer of at most ``bufferCapacity`` decoded frames: the one last
/// asked for and the one after it, decoded ahead. Asking for an earlier frame than the decoder's position
/// restarts it from the first frame (libwebp's animation decoder composites from the start; it has no seek).
///
/// `@unchecked Sendable`: the decoder handle and the buffer are only touched under `state`'s lock, and everything
/// else is immutable after `init`; the file copy is freed in `deinit`, after the decoder that reads it.
final class WebPFrameSource: AnimationFrameSource, @unchecked Sendable {
    /// Decoded frames kept: the current one and one ahead.
    static let bufferCapacity = 2

    let frameCount: Int
    let durations: [Duration]
    private let file: UnsafeMutableRawBufferPointer
    private let canvas: PixelSize
    private let outputSize: PixelSize
    private let state: Locked<State>

    private struct State {
        var decoder: OpaquePointer
        /// The index of the frame the decoder produces next.
        var next = 0
        var buffer: [(index: Int, frame: ImageFrame)] = []
    }

    /// A source over a copy of `data`, producing `frameCount` frames of `canvas` fitted to `outputSize`.
    ///
    /// - Throws: ``CodecError/corrupt(format:reason:)`` when libwebp cannot open the animation.
    init(_ data: UnsafeRawBufferPointer, canvas: PixelSize, outputSize: PixelSize, frameCount: Int) throws {
        file = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, data.count), alignment: 16)
        file.copyMemory(from: data)
        var animOptions = WebPAnimDecoderOptions()
        var webpData = WebPData(bytes: file.baseAddress?.assumingMemoryBound(to: UInt8.self), size: data.count)
        guard WebPAnimDecoderOptionsInit(&animOptions) != 0 else {
            file.deallocate()
            throw CodecError.corrupt(format: .webp, reason: "libwebp version mismatch")
        }
        animOptions.color_mode = MODE_RGBA
        animOptions.use_threads = 0
        guard let decoder = WebPAnimDecoderNew(&webpData, &animOptions) else {
            file.deallocate()
            throw CodecError.corrupt(format: .webp, reason: "the animation could not be parsed")
        }
        // Durations from the demuxer (no decoding): the same values the timestamps of a full decode give.
        var durations: [Duration] = []
        durations.reserveCapacity(frameCount)
        if let demux = WebPAnimDecoderGetDemuxer(decoder) {
            var iterator = WebPIterator()
            for n in 1...frameCount {
                guard WebPDemuxGetFrame(demux, Int32(n), &iterator) != 0 else { break }
                durations.append(.milliseconds(max(0, Int(iterator.duration))))
            }
            WebPDemuxReleaseIterator(&iterator)
        }
        while durations.count < frameCount { durations.append(.zero) }
        self.durations = durations
        self.frameCount = frameCount
        self.canvas = canvas
        self.outputSize = outputSize
        state = Locked(State(decoder: decoder))
    }

    deinit {
        state.withLock { WebPAnimDecoderDelete($0.decoder) }
        file.deallocate()
    }

    var retainedByteCount: Int {
        let buffered = state.withLock { $0.buffer.reduce(0) { $0 + $1.frame.buffer.byteCount } }
        return file.count + 2 * canvas.pixelCount * 4 + buffered
    }

    func frame(at index: Int) throws -> ImageFrame {
        guard index >= 0, index < frameCount else {
            throw CodecError.corrupt(format: .webp, reason: "frame \(index) of an animation of \(frameCount)")
        }
        return try state.withLock { state in
            let frame: ImageFrame
            if let hit = state.buffer.first(where: { $0.index == index }) {
                frame = hit.frame
            } else {
                if state.next > index {
                    WebPAnimDecoderReset(state.decoder)
                    state.next = 0
                    state.buffer.removeAll()
                }
                var decoded: ImageFrame?
                while state.next <= index { decoded = try decodeNext(&state) }
                guard let decoded else { throw CodecError.corrupt(format: .webp, reason: "frame \(index) missing") }
                frame = decoded
                remember(&state, index, frame)
            }
            // Read one frame ahead of the play position, so that playing in order finds the next one ready.
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

    /// Decodes the decoder's next frame, composited and fitted, exactly as the up-front decode does.
    private func decodeNext(_ state: inout State) throws -> ImageFrame {
        var pixels: UnsafeMutablePointer<UInt8>?
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetNext(state.decoder, &pixels, &timestamp) != 0, let pixels else {
            throw CodecError.corrupt(format: .webp, reason: "frame \(state.next) could not be decoded")
        }
        let full = try PixelBuffer(width: canvas.width, height: canvas.height, format: .rgba8) { output in
            output.copyMemory(from: UnsafeRawBufferPointer(start: pixels, count: output.count))
        }
        let frame = ImageFrame(buffer: try full.resampled(to: outputSize), duration: durations[state.next])
        state.next += 1
        return frame
    }
}
