import CAVIF
import ImagoCore

/// The frames of an AVIF sequence decoded on request for ``OnDemandFrames``: a copy of the encoded file and one
/// libavif decoder over it, each frame converted, cropped, fitted and turned exactly as the up-front decode does.
///
/// Playing in order decodes the next image; a jump back, or forward past a key frame, lets libavif seek
/// (`avifDecoderNthImage` decodes from the nearest key frame at or before the frame, which
/// `avifDecoderNearestKeyframe` reports from the sample table's sync samples).
///
/// Used only under ``OnDemandFrames``' lock. The libavif decoder is destroyed in `deinit` before the file copy
/// it reads.
final class AVIFFrameDecoder: SequentialFrameDecoder {
    private let file: UnsafeMutableRawBufferPointer
    private let decoder: UnsafeMutablePointer<avifDecoder>
    private let session: AVIFSession
    private let durations: [Duration]
    /// The frame ``next()`` produces.
    private var index = 0

    /// An on-demand container for the sequence in `raw`, whose limits the caller checked (its frames exceed the
    /// memory budget): a new libavif decoder over a copy of the file, configured as `settings` configures one.
    ///
    /// - Throws: ``CodecError`` when libavif cannot parse the copy or the first frame does not decode.
    static func container(
        for raw: UnsafeRawBufferPointer, decoder settings: AVIFDecoder, options: DecodingOptions
    ) throws -> ImageContainer {
        let decoder = try AVIFFrameDecoder(raw, settings: settings, options: options)
        let session = decoder.session
        let source = OnDemandFrames(
            decoder, durations: decoder.durations,
            // The YUV planes libavif keeps and dav1d's reference pictures: estimated as two RGBA canvases.
            fixedBytes: raw.count + 2 * session.size.pixelCount * 4)
        let first = try source.frame(at: 0)
        var container = ImageContainer(
            frames: [first], format: .avif, loopCount: ISOBMFFBoxes.playCount(in: raw) ?? 0,
            orientation: options.appliesOrientation ? .up : session.transform.orientation,
            originalSize: session.displayedSize, bitDepth: session.bitDepth)
        container.frameSource = source
        return container
    }

    private init(_ raw: UnsafeRawBufferPointer, settings: AVIFDecoder, options: DecodingOptions) throws {
        let file = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, raw.count), alignment: 16)
        file.copyMemory(from: raw)
        self.file = file
        let decoder: UnsafeMutablePointer<avifDecoder>
        do {
            decoder = try settings.parsedDecoder(
                over: UnsafeRawBufferPointer(rebasing: file[0..<raw.count]), options: options)
        } catch {
            file.deallocate()
            throw error
        }
        self.decoder = decoder
        do {
            guard let image = decoder.pointee.image else {
                throw CodecError.corrupt(format: .avif, reason: "no image after parsing")
            }
            session = AVIFSession(
                decoder: decoder, options: options,
                size: PixelSize(width: Int(image.pointee.width), height: Int(image.pointee.height)))
            try session.checkLimits()
            try settings.tightenLimits(decoder, options: options)
            var durations: [Duration] = []
            durations.reserveCapacity(session.frameCount)
            for n in 0..<session.frameCount {
                var timing = avifImageTiming()
                let found = avifDecoderNthImageTiming(decoder, UInt32(n), &timing) == AVIF_RESULT_OK
                durations.append(found ? session.duration(timing) : .zero)
            }
            self.durations = durations
        } catch {
            avifDecoderDestroy(decoder)
            file.deallocate()
            throw error
        }
    }

    deinit {
        avifDecoderDestroy(decoder)
        file.deallocate()
    }

    func keyFrame(atOrBefore index: Int) -> Int {
        Int(avifDecoderNearestKeyframe(decoder, UInt32(clamping: index)))
    }

    func rewind() throws { index = 0 }

    func rewind(toKeyFrame index: Int) throws { self.index = index }

    func next() throws -> ImageFrame {
        guard index < durations.count else { throw CodecError.truncated(format: .avif) }
        let result =
            Int(decoder.pointee.imageIndex) + 1 == index
            ? avifDecoderNextImage(decoder) : avifDecoderNthImage(decoder, UInt32(index))
        try AVIFDecoder.check(result, decoder)
        let frame = ImageFrame(buffer: try session.frame(), duration: durations[index])
        index += 1
        return frame
    }
}
