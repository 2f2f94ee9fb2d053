import CWebP
import Foundation
import ImagoCore

/// The frames of an animated WebP decoded in order for ``OnDemandFrames``: a copy of the encoded file and one
/// `WebPAnimDecoder` (two canvases), each frame composited and fitted exactly as the up-front decode does.
///
/// Used only under ``OnDemandFrames``' lock. The decoder is deleted in `deinit` before the file copy it reads.
final class WebPFrameDecoder: SequentialFrameDecoder {
    private let file: UnsafeMutableRawBufferPointer
    private let decoder: OpaquePointer
    private let canvas: PixelSize
    private let outputSize: PixelSize
    private(set) var durations: [Duration] = []
    private var index = 0

    /// An on-demand source over a copy of `data`: `frameCount` frames of `canvas`, fitted to `outputSize`.
    ///
    /// - Throws: ``CodecError/corrupt(format:reason:)`` when libwebp cannot open the animation.
    static func source(
        _ data: UnsafeRawBufferPointer, canvas: PixelSize, outputSize: PixelSize, frameCount: Int
    ) throws -> OnDemandFrames<WebPFrameDecoder> {
        let decoder = try WebPFrameDecoder(data, canvas: canvas, outputSize: outputSize, frameCount: frameCount)
        return OnDemandFrames(
            decoder, durations: decoder.durations, fixedBytes: data.count + 2 * canvas.pixelCount * 4)
    }

    private init(_ data: UnsafeRawBufferPointer, canvas: PixelSize, outputSize: PixelSize, frameCount: Int) throws {
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
        self.decoder = decoder
        self.canvas = canvas
        self.outputSize = outputSize
        // Durations from the demuxer (no decoding): the same values the timestamps of a full decode give.
        if let demux = WebPAnimDecoderGetDemuxer(decoder) {
            var iterator = WebPIterator()
            for n in 1...max(1, frameCount) {
                guard WebPDemuxGetFrame(demux, Int32(n), &iterator) != 0 else { break }
                durations.append(.milliseconds(max(0, Int(iterator.duration))))
            }
            WebPDemuxReleaseIterator(&iterator)
        }
        while durations.count < frameCount { durations.append(.zero) }
    }

    deinit {
        WebPAnimDecoderDelete(decoder)
        file.deallocate()
    }

    func rewind() throws {
        WebPAnimDecoderReset(decoder)
        index = 0
    }

    func next() throws -> ImageFrame {
        var pixels: UnsafeMutablePointer<UInt8>?
        var timestamp: Int32 = 0
        guard index < durations.count, WebPAnimDecoderGetNext(decoder, &pixels, &timestamp) != 0, let pixels else {
            throw CodecError.corrupt(format: .webp, reason: "frame \(index) could not be decoded")
        }
        let full = try PixelBuffer(width: canvas.width, height: canvas.height, format: .rgba8) { output in
            output.copyMemory(from: UnsafeRawBufferPointer(start: pixels, count: output.count))
        }
        let frame = ImageFrame(buffer: try full.resampledWithVectorKernel(to: outputSize), duration: durations[index])
        index += 1
        return frame
    }
}
