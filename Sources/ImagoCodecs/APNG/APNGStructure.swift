import ImagoCore

/// The chunk layout of an animated PNG: the header, the chunks every frame shares, `acTL` and each frame's
/// control and data, found by walking chunk headers (never trusting a length: every read is bounds-checked).
///
/// Nothing here allocates per pixel: frames are byte ranges into the file. The walk stops counting at
/// `frameLimit`, so a file declaring (or holding) millions of frames costs no more than the limit.
struct APNGStructure {
    /// A frame: its control and the payload ranges of its image data (`IDAT`, or `fdAT` minus the sequence number).
    struct Frame {
        var control: APNGFrameControl
        var data: [Range<Int>] = []
    }

    /// Why the animation cannot be played; the decoder then shows the still default image, as browsers do.
    enum Fallback: Error {
        /// No `acTL` before the image data: a plain PNG.
        case notAnimated
        /// The animation chunks break the APNG rules (sequence numbers, order, missing data, bad ops).
        case broken(String)
    }

    /// The `IHDR` payload (13 bytes).
    var header: Range<Int> = 0..<0
    var canvas = PixelSize(width: 0, height: 0)
    var bitDepth = 8
    var colorType = 0
    var isInterlaced = false
    /// Whole chunks (length to CRC) every frame's stream repeats: `PLTE` and `tRNS`.
    var sharedChunks: [Range<Int>] = []
    /// `num_plays`: 0 = forever.
    var playCount = 0
    /// `num_frames` as declared (never used to allocate).
    var declaredFrames = 0
    /// The complete frames, in order, at most `declaredFrames` of them.
    var frames: [Frame] = []
    /// Whether the default image (`IDAT`) is the first frame.
    var defaultImageIsFrame = false
    /// Whether the data ended before `IEND`; `frames` then holds only the frames completed before the cut.
    var isTruncated = false

    private static let ihdr: UInt32 = 0x4948_4452
    private static let plte: UInt32 = 0x504C_5445
    private static let trns: UInt32 = 0x7452_4E53
    private static let actl: UInt32 = 0x6163_544C
    private static let fctl: UInt32 = 0x6663_544C
    private static let fdat: UInt32 = 0x6664_4154
    private static let idat: UInt32 = 0x4944_4154
    private static let iend: UInt32 = 0x4945_4E44

    /// Walks `bytes`.
    ///
    /// - Throws: ``Fallback`` when the animation is absent or broken; ``CodecError`` when the file itself is not
    ///   usable (`.truncated` before anything complete, `.corrupt` for a bad header or a frame region outside the
    ///   canvas, `.tooManyPixels`, `.tooManyFrames` beyond `frameLimit` unless only the first frame is wanted).
    init(scanning bytes: UnsafeRawBufferPointer, options: DecodingOptions) throws {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.count >= 8 else { throw CodecError.truncated(format: .apng) }
        guard bytes.prefix(8).elementsEqual(signature) else {
            throw CodecError.corrupt(format: .apng, reason: "not a PNG signature")
        }
        var offset = 8
        var sawHeader = false
        var sawImageData = false
        var sawAnimationControl = false
        var expectedSequence: UInt32 = 0
        var current: Frame?
        var currentIsDefaultImage = false
        let maximumFrames = options.decodesFirstFrameOnly ? 1 : Int.max

        func finishCurrent() throws {
            guard let frame = current else { return }
            current = nil
            guard !frame.data.isEmpty else { throw Fallback.broken("a frame without image data") }
            if frames.count < min(declaredFrames, maximumFrames) { frames.append(frame) }
        }

        walk: while true {
            guard offset <= bytes.count - 12 else {
                isTruncated = true
                break
            }
            let length = Int(BigEndian.u32(bytes, at: offset))
            let type = BigEndian.u32(bytes, at: offset + 4)
            guard length <= Int(Int32.max) else {
                throw CodecError.corrupt(format: .apng, reason: "chunk length \(length) beyond the PNG limit")
            }
            let payload = (offset + 8)..<(offset + 8 + length)
            guard payload.upperBound + 4 <= bytes.count else {
                isTruncated = true
                break
            }
            let body = UnsafeRawBufferPointer(rebasing: bytes[payload])
            if !sawHeader && type != Self.ihdr {
                throw CodecError.corrupt(format: .apng, reason: "IHDR is not the first chunk")
            }
            switch type {
            case Self.ihdr:
                guard !sawHeader, length == 13 else { throw CodecError.corrupt(format: .apng, reason: "bad IHDR") }
                sawHeader = true
                header = payload
                canvas = PixelSize(width: Int(BigEndian.u32(body, at: 0)), height: Int(BigEndian.u32(body, at: 4)))
                bitDepth = Int(body[8])
                colorType = Int(body[9])
                isInterlaced = body[12] == 1
                try options.checkDimensions(width: canvas.width, height: canvas.height, format: .apng)
            case Self.plte where !sawImageData, Self.trns where !sawImageData:
                sharedChunks.append(offset..<(payload.upperBound + 4))
            case Self.actl where !sawImageData:
                guard !sawAnimationControl, length == 8 else { throw Fallback.broken("bad or repeated acTL") }
                sawAnimationControl = true
                declaredFrames = Int(BigEndian.u32(body, at: 0))
                playCount = Int(BigEndian.u32(body, at: 4))
                guard declaredFrames > 0 else { throw Fallback.broken("acTL declares no frames") }
            case Self.fctl where sawAnimationControl:
                guard length == 26, BigEndian.u32(body, at: 0) == expectedSequence else {
                    throw Fallback.broken("fcTL out of sequence")
                }
                expectedSequence &+= 1
                try finishCurrent()
                guard let control = APNGFrameControl(payload: body) else { throw Fallback.broken("bad fcTL ops") }
                guard control.fits(in: canvas) else {
                    throw CodecError.corrupt(
                        format: .apng,
                        reason: "frame region \(control.width)x\(control.height) at (\(control.x), \(control.y)) "
                            + "outside the \(canvas) canvas")
                }
                currentIsDefaultImage = !sawImageData
                if currentIsDefaultImage {
                    guard control.x == 0, control.y == 0, control.width == canvas.width,
                        control.height == canvas.height
                    else { throw Fallback.broken("the default image's fcTL does not cover the canvas") }
                    defaultImageIsFrame = true
                }
                if frames.count + 1 > options.frameLimit, maximumFrames > 1, frames.count < declaredFrames {
                    throw CodecError.tooManyFrames(limit: options.frameLimit)
                }
                current = Frame(control: control)
            case Self.idat:
                sawImageData = true
                if currentIsDefaultImage { current?.data.append(payload) }
            case Self.fdat where sawAnimationControl:
                guard length >= 4, BigEndian.u32(body, at: 0) == expectedSequence else {
                    throw Fallback.broken("fdAT out of sequence")
                }
                expectedSequence &+= 1
                guard sawImageData, current != nil, !currentIsDefaultImage else {
                    throw Fallback.broken("fdAT without a frame")
                }
                current?.data.append((payload.lowerBound + 4)..<payload.upperBound)
            case Self.iend:
                try finishCurrent()
                break walk
            default:
                // The default image's IDAT run ends at the first other chunk: that frame is then complete.
                if currentIsDefaultImage, sawImageData { try finishCurrent() }
            }
            offset = payload.upperBound + 4
        }
        guard sawHeader else { throw CodecError.truncated(format: .apng) }
        guard sawAnimationControl else {
            if isTruncated { throw CodecError.truncated(format: .apng) }
            throw Fallback.notAnimated
        }
        if isTruncated {
            // The frame being read when the data ended is incomplete: only the ones before it count.
            guard !frames.isEmpty else { throw CodecError.truncated(format: .apng) }
        } else if frames.isEmpty {
            throw sawImageData ? Fallback.broken("no frames") : CodecError.corrupt(format: .apng, reason: "no IDAT")
        }
    }

    /// Bits per channel the file stores (palette entries are 8-bit).
    var sourceBitDepth: Int { colorType == 3 ? 8 : bitDepth }
}
