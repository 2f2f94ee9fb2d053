import CWebP
import ImagoCore

extension WebPDecoder {
    /// Decodes an animated WebP with `WebPAnimDecoder`, which composites every frame onto the canvas.
    func decodeAnimation(
        _ data: UnsafePointer<UInt8>, count: Int, options: DecodingOptions
    ) throws
        -> ImageContainer
    {
        var animOptions = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&animOptions) != 0 else {
            throw CodecError.corrupt(format: .webp, reason: "libwebp version mismatch")
        }
        animOptions.color_mode = MODE_RGBA
        animOptions.use_threads = 0
        var webpData = WebPData(bytes: data, size: count)
        // The canvas size was checked against the pixel limit by the caller: the decoder allocates two canvases.
        guard let decoder = WebPAnimDecoderNew(&webpData, &animOptions) else {
            throw CodecError.corrupt(format: .webp, reason: "the animation could not be parsed")
        }
        defer { WebPAnimDecoderDelete(decoder) }

        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else {
            throw CodecError.corrupt(format: .webp, reason: "the animation header could not be read")
        }
        let width = Int(info.canvas_width)
        let height = Int(info.canvas_height)
        try options.checkDimensions(width: width, height: height, format: .webp)
        let frameCount = options.decodesFirstFrameOnly ? min(1, Int(info.frame_count)) : Int(info.frame_count)
        guard frameCount > 0 else { throw CodecError.corrupt(format: .webp, reason: "the animation has no frames") }
        guard frameCount <= options.frameLimit else { throw CodecError.tooManyFrames(limit: options.frameLimit) }
        // libwebp composites every frame on the full canvas before it is fitted to the target: bound that work.
        try options.checkAnimationWork(frames: frameCount, canvas: PixelSize(width: width, height: height))
        let outputSize = options.deliveredSize(
            of: PixelSize(width: width, height: height), orientation: .up, bytesPerPixel: 4)
        let (total, overflow) = frameCount.multipliedReportingOverflow(by: outputSize.pixelCount * 4)
        // Over the memory budget: frames on demand, from a source that holds the file and a few frames.
        if frameCount > 1, overflow || total > options.animationMemoryBudget {
            let source = try WebPFrameDecoder.source(
                UnsafeRawBufferPointer(start: data, count: count), canvas: PixelSize(width: width, height: height),
                outputSize: outputSize, frameCount: frameCount)
            var container = ImageContainer(
                frames: [try source.frame(at: 0)], format: .webp, loopCount: Int(info.loop_count),
                originalSize: PixelSize(width: width, height: height))
            container.frameSource = source
            return container
        }
        guard !overflow, total <= options.animationByteLimit else {
            throw CodecError.animationTooLarge(limit: options.animationByteLimit)
        }

        var frames: [ImageFrame] = []
        frames.reserveCapacity(frameCount)
        var previousTimestamp: Int32 = 0
        while frames.count < frameCount, WebPAnimDecoderHasMoreFrames(decoder) != 0 {
            var canvas: UnsafeMutablePointer<UInt8>?
            var timestamp: Int32 = 0
            guard WebPAnimDecoderGetNext(decoder, &canvas, &timestamp) != 0, let canvas else {
                if frames.isEmpty { throw CodecError.corrupt(format: .webp, reason: "frame 0 could not be decoded") }
                break  // keep the frames decoded so far, as the GIF decoder does
            }
            let full = try PixelBuffer(width: width, height: height, format: .rgba8) { output in
                output.copyMemory(from: UnsafeRawBufferPointer(start: canvas, count: output.count))
            }
            // Timestamps are each frame's end time in milliseconds.
            let duration = Duration.milliseconds(max(0, Int(timestamp) - Int(previousTimestamp)))
            previousTimestamp = timestamp
            frames.append(ImageFrame(buffer: try full.resampledWithVectorKernel(to: outputSize), duration: duration))
        }
        guard !frames.isEmpty else { throw CodecError.corrupt(format: .webp, reason: "the animation has no frames") }
        return ImageContainer(
            frames: frames, format: .webp, loopCount: Int(info.loop_count),
            originalSize: PixelSize(width: width, height: height))
    }
}
