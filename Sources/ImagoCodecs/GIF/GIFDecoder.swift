import CGIF
import Foundation
import ImagoCore

/// Decodes GIF (still and animated) with giflib, compositing every frame onto the logical screen.
///
/// Behaviour, chosen to match what browsers show:
/// - Each frame is the full canvas after drawing that frame: disposal methods (keep, restore to background,
///   restore to previous), the transparency index, interlacing, local and global colour maps and frames partly
///   outside the canvas (clipped) are all applied. The canvas starts fully transparent, and "restore to
///   background" clears to transparent (as browsers do), not to the background colour.
/// - A frame without any colour map draws with a grey ramp (index *i* → grey *i*); indices beyond the colour
///   map's size draw opaque black.
/// - Durations are the graphics control extension's delay (1/100 s) exactly as the file says, 0 included.
/// - ``ImageContainer/loopCount`` is the NETSCAPE2.0 (or ANIMEXTS1.0) loop count as stored, 0 meaning forever,
///   as Apple's ImageIO, SDWebImage and Kingfisher report it (browsers play a stored count *n* ≥ 1 *n* + 1
///   times); a GIF without that block plays once, so its loop count is 1.
/// - A file whose data runs out throws ``CodecError/truncated(format:)``, like every other decoder, unless
///   ``DecodingOptions/allowsPartialData`` is set: then the complete frames (or the partly drawn first frame)
///   come back as a preview (`isPreview`, never cached). A file that is corrupt after at least one complete
///   frame returns the complete frames; before that it throws `.corrupt`.
/// - Limits are checked before allocating: the canvas and each frame against ``DecodingOptions/pixelLimit``,
///   the frame count as frames arrive against ``DecodingOptions/frameLimit``, and the bytes of all output
///   frames against ``DecodingOptions/animationByteLimit``. Frames are read record by record, so memory stays
///   bounded by one canvas, one saved canvas and the output frames, whatever the file holds.
/// - With ``DecodingOptions/targetSize`` each composited frame is downsampled (area averaging) to fit.
/// - An animation whose frames would exceed ``DecodingOptions/animationMemoryBudget`` is decoded on demand
///   (``ImageContainer/frameSource``, see `GIFFrameDecoder`).
///
/// Thread-safe: the decoder has no state; each call opens its own giflib handle.
///
/// ```swift
/// let container = try GIFDecoder().decode(data, options: DecodingOptions())
/// print(container.frames.count, container.loopCount)
/// ```
public struct GIFDecoder: ImageDecoding {
    /// A GIF decoder; it has no settings.
    public init() {}

    /// `[.gif]`.
    public var formats: Set<ImageFormat> { [.gif] }

    /// Decodes every frame of `data` (or only the first with ``DecodingOptions/decodesFirstFrameOnly``).
    ///
    /// - Throws: ``CodecError``: `.empty`, `.corrupt`, `.truncated`, `.tooManyPixels`, `.tooManyFrames`,
    ///   `.animationTooLarge`.
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        guard !data.isEmpty else { throw CodecError.empty }
        return try data.withUnsafeBytes { bytes in
            let source = GIFByteSource(bytes)
            return try withExtendedLifetime(source) {
                var openError: Int32 = 0
                guard let gif = DGifOpen(Unmanaged.passUnretained(source).toOpaque(), gifReadCallback, &openError)
                else { throw GIFDecoder.error(code: openError) }
                defer { DGifCloseFile(gif, nil) }
                var reader = GIFFrameReader(gif: gif, options: options)
                reader.declaredFrames = GIFStructure.frameCount(in: bytes, limit: options.frameLimit)
                if let onDemand = try GIFFrameDecoder.container(for: bytes, gif: gif, options: options) {
                    return onDemand
                }
                return try reader.decodeAll()
            }
        }
    }

    /// The ``CodecError`` for a giflib error code: read failures mean the data ended early.
    static func error(code: Int32) -> CodecError {
        switch code {
        case D_GIF_ERR_READ_FAILED, D_GIF_ERR_EOF_TOO_SOON: .truncated(format: .gif)
        default: .corrupt(format: .gif, reason: message(code: code))
        }
    }

    /// giflib's sentence for an error `code` (its decoder's and its encoder's).
    static func message(code: Int32) -> String {
        GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
    }
}

/// The encoded bytes giflib reads through ``gifReadCallback``, with a read position.
///
/// Only touched by the one decode call that created it, on that call's thread.
final class GIFByteSource {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Copies up to `count` bytes to `destination`; returns how many (0 at the end, which giflib treats as an
    /// error, so a read loop can never spin on exhausted data).
    func read(into destination: UnsafeMutablePointer<GifByteType>, count: Int) -> Int {
        let n = max(0, min(count, bytes.count - offset))
        if n > 0, let base = bytes.baseAddress {
            UnsafeMutableRawPointer(destination).copyMemory(from: base + offset, byteCount: n)
            offset += n
        }
        return n
    }
}

/// giflib's `InputFunc` over a ``GIFByteSource`` stored in `UserData`.
func gifReadCallback(
    _ gif: UnsafeMutablePointer<GifFileType>?, _ buffer: UnsafeMutablePointer<GifByteType>?, _ count: Int32
) -> Int32 {
    guard let gif, let buffer, count > 0, let user = gif.pointee.UserData else { return 0 }
    let source = Unmanaged<GIFByteSource>.fromOpaque(user).takeUnretainedValue()
    return Int32(source.read(into: buffer, count: Int(count)))
}
