import CGIF
import Foundation
import ImagoCore

/// A GIF89a written into memory with giflib's encoder: the screen, the loop count, then frames, then the trailer.
///
/// Used by one encode call on one thread; ``finish()`` (or deinit) closes the giflib handle exactly once.
final class GIFWriter {
    private let sink = GIFOutputSink()
    private var gif: UnsafeMutablePointer<GifFileType>?

    /// Starts a GIF of `size` (each side at most 65,535) with no global colour map (every frame carries its own).
    /// `loopCount` writes a NETSCAPE2.0 block (0 plays forever); `nil` writes none, which plays once.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)``.
    init(size: PixelSize, loopCount: Int?) throws {
        var error: Int32 = 0
        gif = EGifOpen(Unmanaged.passUnretained(sink).toOpaque(), gifWriteCallback, &error)
        guard let gif else { throw Self.failure(error) }
        EGifSetGifVersion(gif, true)
        guard
            EGifPutScreenDesc(gif, Int32(size.width), Int32(size.height), 8, 0, nil) == GIF_OK
        else { throw Self.failure(gif.pointee.Error) }
        guard let loopCount else { return }
        let count = UInt16(clamping: loopCount)
        var netscape = Array("NETSCAPE2.0".utf8)
        var loop: [UInt8] = [1, UInt8(count & 0xFF), UInt8(count >> 8)]
        guard
            EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK,
            EGifPutExtensionBlock(gif, Int32(netscape.count), &netscape) == GIF_OK,
            EGifPutExtensionBlock(gif, Int32(loop.count), &loop) == GIF_OK,
            EGifPutExtensionTrailer(gif) == GIF_OK
        else { throw Self.failure(gif.pointee.Error) }
    }

    deinit {
        if let gif { EGifCloseFile(gif, nil) }
    }

    /// Writes `frame`: a graphics control block when `isAnimated` or the frame has a transparent entry, then the
    /// image with its own colour map (padded with black to a power of two, as GIF requires).
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)``.
    func write(_ frame: GIFIndexedFrame, isAnimated: Bool) throws {
        guard let gif else { throw CodecError.encodingFailed(format: .gif, reason: "the GIF is already closed") }
        if isAnimated || frame.transparentIndex != nil {
            var control = GraphicsControlBlock(
                DisposalMode: isAnimated ? frame.disposal.rawValue : DISPOSAL_UNSPECIFIED, UserInputFlag: false,
                DelayTime: Int32(clamping: frame.delay),
                TransparentColor: frame.transparentIndex.map { Int32($0) } ?? NO_TRANSPARENT_COLOR)
            var extensionBytes = [UInt8](repeating: 0, count: 4)
            let length = EGifGCBToExtension(&control, &extensionBytes)
            guard EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, Int32(length), extensionBytes) == GIF_OK else {
                throw Self.failure(gif.pointee.Error)
            }
        }
        var bits = 1
        while 1 << bits < frame.colorCount { bits += 1 }
        var colors = [GifColorType](repeating: GifColorType(), count: 1 << bits)
        for entry in 0..<frame.colorCount {
            colors[entry] = GifColorType(
                Red: frame.colors[entry * 3], Green: frame.colors[entry * 3 + 1], Blue: frame.colors[entry * 3 + 2])
        }
        guard let map = GifMakeMapObject(Int32(colors.count), colors) else {
            throw CodecError.encodingFailed(format: .gif, reason: "giflib could not make a colour map")
        }
        defer { GifFreeMapObject(map) }  // EGifPutImageDesc keeps a copy
        let rect = frame.rect
        var indices = frame.indices  // giflib masks the line in place
        guard
            EGifPutImageDesc(
                gif, Int32(rect.x), Int32(rect.y), Int32(rect.width), Int32(rect.height), false, map) == GIF_OK,
            EGifPutLine(gif, &indices, Int32(indices.count)) == GIF_OK
        else { throw Self.failure(gif.pointee.Error) }
    }

    /// Writes the trailer, closes the handle and returns the file.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)``.
    func finish() throws -> Data {
        guard let gif else { throw CodecError.encodingFailed(format: .gif, reason: "the GIF is already closed") }
        self.gif = nil
        var error: Int32 = 0
        guard EGifCloseFile(gif, &error) == GIF_OK else { throw Self.failure(error) }
        return sink.data
    }

    private static func failure(_ code: Int32) -> CodecError {
        .encodingFailed(format: .gif, reason: GIFDecoder.message(code: code))
    }
}

/// The bytes giflib has written so far, reached through `UserData` by ``gifWriteCallback``.
final class GIFOutputSink {
    var data = Data()
}

/// giflib's `OutputFunc`: appends to the ``GIFOutputSink`` in `UserData`.
func gifWriteCallback(
    _ gif: UnsafeMutablePointer<GifFileType>?, _ bytes: UnsafePointer<GifByteType>?, _ count: Int32
) -> Int32 {
    guard let gif, let bytes, count > 0, let user = gif.pointee.UserData else { return 0 }
    Unmanaged<GIFOutputSink>.fromOpaque(user).takeUnretainedValue().data.append(bytes, count: Int(count))
    return count
}
