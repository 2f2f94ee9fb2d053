import ImagoCore

/// The frames of an animated PNG decoded in order for ``OnDemandFrames``: a copy of the encoded file, its chunk
/// layout, one canvas (and the saved canvas `dispose_op` previous needs) and one scratch frame, each frame drawn
/// and fitted exactly as the up-front decode does.
///
/// Key frames, where decoding can restart without the frames before: the first frame, a frame drawn over a
/// canvas that the previous frame left fully cleared (it covers the canvas and disposes to background), and a
/// frame that covers the whole canvas with blend op source (its pixels replace everything) and does not dispose
/// to previous. From each, decoding starts on a transparent black canvas.
///
/// Used only under ``OnDemandFrames``' lock. The frame ranges point into the file copy, freed in `deinit`.
final class APNGFrameDecoder: SequentialFrameDecoder {
    private let file: UnsafeMutableRawBufferPointer
    private let structure: APNGStructure
    private let outputSize: PixelSize
    private let keyFrames: [Int]
    private var canvas: APNGCanvas
    private var scratch: [UInt8] = []
    private var index = 0

    /// An on-demand container for `structure` (walked over `bytes`) when its frames would exceed the memory
    /// budget; `nil` to decode it up front (one frame, or within the budget).
    ///
    /// - Throws: ``CodecError`` for the limits (`.tooManyFrames` was checked by the walk;
    ///   `.animationTooMuchWork`) or when the first frame does not decode.
    static func container(
        for structure: APNGStructure, bytes: UnsafeRawBufferPointer, outputSize: PixelSize, options: DecodingOptions
    ) throws -> ImageContainer? {
        let count = structure.frames.count
        guard count > 1, !options.decodesFirstFrameOnly else { return nil }
        let (total, overflow) = count.multipliedReportingOverflow(by: outputSize.pixelCount * 4)
        guard overflow || total > options.animationMemoryBudget else { return nil }
        try options.checkAnimationWork(frames: count, canvas: structure.canvas)
        let decoder = try APNGFrameDecoder(structure, bytes: bytes, outputSize: outputSize)
        let canvasBytes = 2 * structure.canvas.pixelCount * 4
        let largestFrame = structure.frames.reduce(0) { max($0, $1.control.width * $1.control.height * 4) }
        let source = OnDemandFrames(
            decoder, durations: structure.frames.map(\.control.duration),
            fixedBytes: bytes.count + canvasBytes + largestFrame)
        let first = try source.frame(at: 0)
        var container = ImageContainer(
            frames: [first], format: .apng, loopCount: structure.playCount,
            isPreview: structure.isTruncated && options.allowsPartialData, originalSize: structure.canvas,
            bitDepth: structure.sourceBitDepth)
        container.frameSource = source
        return container
    }

    private init(_ structure: APNGStructure, bytes: UnsafeRawBufferPointer, outputSize: PixelSize) throws {
        canvas = try APNGCanvas(size: structure.canvas)
        file = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
        file.copyMemory(from: bytes)
        self.structure = structure
        self.outputSize = outputSize
        keyFrames = Self.keyFrames(of: structure)
    }

    deinit { file.deallocate() }

    /// The frames decoding can start from, in order (always including 0).
    static func keyFrames(of structure: APNGStructure) -> [Int] {
        var keys = [0]
        let frames = structure.frames
        func covers(_ control: APNGFrameControl) -> Bool {
            control.x == 0 && control.y == 0 && control.width == structure.canvas.width
                && control.height == structure.canvas.height
        }
        for k in frames.indices.dropFirst() {
            let previous = frames[k - 1].control
            let control = frames[k].control
            let clearedBefore = covers(previous) && previous.dispose == .background
            let replacesAll = covers(control) && control.blend == .source && control.dispose != .previous
            if clearedBefore || replacesAll { keys.append(k) }
        }
        return keys
    }

    func keyFrame(atOrBefore index: Int) -> Int { keyFrames.last { $0 <= index } ?? 0 }

    func rewind() throws { try rewind(toKeyFrame: 0) }

    func rewind(toKeyFrame index: Int) throws {
        canvas = try APNGCanvas(size: structure.canvas)
        self.index = index
    }

    func next() throws -> ImageFrame {
        guard index < structure.frames.count else { throw CodecError.truncated(format: .apng) }
        let frame = structure.frames[index]
        let stream = APNGFrameStream.make(frame, structure: structure, bytes: UnsafeRawBufferPointer(file))
        try APNGFrameStream.decode(
            stream, into: &scratch, width: frame.control.width, height: frame.control.height,
            isInterlaced16Bit: structure.isInterlaced && structure.bitDepth == 16)
        canvas.draw(scratch, control: frame.control)
        let shown =
            outputSize == structure.canvas ? canvas.pixels : try canvas.pixels.resampledWithVectorKernel(to: outputSize)
        canvas.dispose(frame.control)
        index += 1
        return ImageFrame(buffer: shown, duration: frame.control.duration)
    }
}
