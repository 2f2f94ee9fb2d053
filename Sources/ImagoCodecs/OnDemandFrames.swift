import ImagoCore

/// A decoder positioned in an animation: it produces composited frames in order from the first, and can go back
/// to before the first, or to a key frame. `OnDemandFrames` drives one; the GIF, WebP, APNG, AVIF and JPEG XL
/// decoders provide them.
protocol SequentialFrameDecoder: AnyObject {
    /// Decodes the next frame.
    ///
    /// - Throws: ``CodecError`` when it cannot be decoded.
    func next() throws -> ImageFrame
    /// Goes back to before the first frame.
    func rewind() throws
    /// The last frame at or before `index` from which decoding can start without the frames before it (a frame
    /// that does not depend on the canvas or reference frames before it). Default: 0, the first frame.
    func keyFrame(atOrBefore index: Int) -> Int
    /// Positions the decoder so that ``next()`` produces frame `index`, a value ``keyFrame(atOrBefore:)``
    /// returned. Default: ``rewind()`` (only frame 0 is a key frame).
    func rewind(toKeyFrame index: Int) throws
}

extension SequentialFrameDecoder {
    func keyFrame(atOrBefore index: Int) -> Int { 0 }
    func rewind(toKeyFrame index: Int) throws { try rewind() }
}

/// An ``AnimationFrameSource`` over a ``SequentialFrameDecoder``: a buffer of at most ``bufferCapacity`` decoded
/// frames (the one last asked for and the next, decoded ahead so that playing in order finds it ready). A frame
/// before the decoder's position, or after a key frame beyond it, restarts the decoder at the nearest key frame
/// at or before it (for GIF and libwebp's animation decoder, which cannot seek, the first frame) and decodes
/// forward from there.
///
/// `@unchecked Sendable`: the decoder and the buffer are only touched under `state`'s lock; everything else is
/// immutable after `init`.
final class OnDemandFrames<Decoder: SequentialFrameDecoder>: AnimationFrameSource, @unchecked Sendable {
    /// Decoded frames kept: the current one and one ahead.
    static var bufferCapacity: Int { 2 }

    let frameCount: Int
    let durations: [Duration]
    /// Bytes held whatever the position: the encoded file and the decoder's canvases.
    private let fixedBytes: Int
    private let state: Locked<State>

    private struct State {
        var decoder: Decoder
        /// The index of the frame the decoder produces next.
        var next = 0
        var buffer: [(index: Int, frame: ImageFrame)] = []
    }

    init(_ decoder: Decoder, durations: [Duration], fixedBytes: Int) {
        frameCount = durations.count
        self.durations = durations
        self.fixedBytes = fixedBytes
        state = Locked(State(decoder: decoder))
    }

    /// The decoder, for reading what it learnt (e.g. a loop count), under the lock.
    func withDecoder<R>(_ body: (Decoder) -> R) -> R { state.withLock { body($0.decoder) } }

    var retainedByteCount: Int {
        fixedBytes + state.withLock { $0.buffer.reduce(0) { $0 + $1.frame.buffer.byteCount } }
    }

    func frame(at index: Int) throws -> ImageFrame {
        guard index >= 0, index < frameCount else {
            throw CodecError.corrupt(format: .unknown, reason: "frame \(index) of an animation of \(frameCount)")
        }
        return try state.withLock { state in
            let frame: ImageFrame
            if let hit = state.buffer.first(where: { $0.index == index }) {
                frame = hit.frame
            } else {
                let key = state.decoder.keyFrame(atOrBefore: index)
                if state.next > index || key > state.next {
                    try state.decoder.rewind(toKeyFrame: key)
                    state.next = key
                }
                var decoded: ImageFrame?
                do {
                    while state.next <= index {
                        decoded = try state.decoder.next()
                        state.next += 1
                    }
                } catch {
                    // The decoder's position is unknown after a failure: the next request restarts it.
                    state.next = frameCount
                    throw error
                }
                guard let decoded else { throw CodecError.corrupt(format: .unknown, reason: "frame \(index) missing") }
                frame = decoded
                Self.remember(&state, index, frame)
            }
            if state.next == index + 1, state.next < frameCount {
                if let ahead = try? state.decoder.next() {
                    state.next += 1
                    Self.remember(&state, index + 1, ahead)
                } else {
                    state.next = frameCount  // as above; the failure is reported when that frame is asked for
                }
            }
            return frame
        }
    }

    private static func remember(_ state: inout State, _ index: Int, _ frame: ImageFrame) {
        state.buffer.removeAll { $0.index == index }
        state.buffer.append((index, frame))
        if state.buffer.count > bufferCapacity { state.buffer.removeFirst(state.buffer.count - bufferCapacity) }
    }
}
