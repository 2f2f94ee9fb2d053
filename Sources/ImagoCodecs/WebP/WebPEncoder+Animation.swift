import CWebP
import Foundation
import ImagoCore

extension WebPEncoder {
    /// `true`: animated containers keep every frame.
    public var encodesAnimation: Bool { true }

    /// Encodes `container`: a still image as ``encode(_:options:)-(PixelBuffer,_)`` does; an animated one with
    /// libwebpmux's `WebPAnimEncoder`, every frame (each a full canvas of the first frame's size) at its
    /// duration rounded to milliseconds, and ``ImageContainer/loopCount`` (0 = forever, as WebP counts).
    ///
    /// libwebp merges a frame identical to the one before into it (the durations add up), so decoding can give
    /// fewer frames than were written, showing the same pictures for the same total time.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` (frames of differing sizes, libwebp errors).
    public func encode(_ container: ImageContainer, options: EncodingOptions) throws -> Data {
        guard container.isAnimated else { return try encode(container.image, options: options) }
        let size = container.image.size
        var config = try configuration(options)
        var animationOptions = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&animationOptions) != 0 else { throw failure("libwebpmux version mismatch") }
        animationOptions.anim_params.loop_count = Int32(clamping: container.loopCount)
        guard
            let encoder = WebPAnimEncoderNew(
                Int32(clamping: size.width), Int32(clamping: size.height), &animationOptions)
        else { throw failure("cannot start an animation of \(size)") }
        defer { WebPAnimEncoderDelete(encoder) }

        var timestamp = 0
        // Frame by frame through frame(at:): an on-demand animation (ImageContainer.frameSource) holds only its
        // first frame in `frames` and produces the others as they are asked for, one at a time.
        for index in 0..<container.frameCount {
            let frame = try container.frame(at: index)
            guard frame.buffer.size == size else { throw failure("the frames of an animation must all be \(size)") }
            var picture = try picture(of: frame.buffer)
            defer { WebPPictureFree(&picture) }
            guard WebPAnimEncoderAdd(encoder, &picture, Int32(clamping: timestamp), &config) != 0 else {
                throw failure(Self.animationError(encoder))
            }
            timestamp += Int((frame.duration / .milliseconds(1)).rounded())
        }
        // The end timestamp gives the last frame its duration.
        guard WebPAnimEncoderAdd(encoder, nil, Int32(clamping: timestamp), nil) != 0 else {
            throw failure(Self.animationError(encoder))
        }
        var output = WebPData()
        WebPDataInit(&output)
        defer { WebPDataClear(&output) }
        guard WebPAnimEncoderAssemble(encoder, &output) != 0, let bytes = output.bytes, output.size > 0 else {
            throw failure(Self.animationError(encoder))
        }
        return Data(bytes: bytes, count: output.size)
    }

    private static func animationError(_ encoder: OpaquePointer) -> String {
        guard let message = WebPAnimEncoderGetError(encoder), message.pointee != 0 else { return "libwebpmux error" }
        return String(cString: message)
    }
}
