import Foundation
import ImagoCore

/// What ``ChildProcessDecoder`` and its child say to each other through the child's standard input and output.
///
/// The request: a 4-byte big-endian length, that many bytes of the ``DecodingOptions`` in JSON, then the encoded
/// image. The answer: a 4-byte big-endian length, that many bytes of an ``Answer`` in JSON, then, for an image,
/// each frame's pixels in order (`width × height × bytesPerPixel` bytes each, rows packed).
enum ChildProcessMessage {
    /// The JSON part of an answer: the error the child's decoder threw, or the image without its pixels.
    struct Answer: Codable {
        /// The decoder's error; `nil` for an image.
        var error: CodecError?
        /// The image; `nil` for an error.
        var image: Image?

        /// An ``ImageContainer``'s description, its frames' pixels following the JSON.
        struct Image: Codable {
            var format: ImageFormat
            var loopCount: Int
            var orientation: ExifOrientation
            var isPreview: Bool
            var originalSize: PixelSize
            var bitDepth: Int?
            var profile: Data?
            var profileDescription: String?
            var metadata: ImageMetadata?
            var sourceColorProfileDescription: String?
            var colorWarning: String?
            var frames: [Frame]
        }

        /// One frame's pixel layout and duration.
        struct Frame: Codable {
            var width: Int
            var height: Int
            var pixelFormat: PixelBuffer.PixelFormat
            var alphaMode: PixelBuffer.AlphaMode
            var duration: Duration
        }
    }

    /// The most bytes of JSON a request or an answer may have (an ICC profile and three metadata blocks, in base64,
    /// fit many times over).
    static let jsonLimit = 64 << 20

    /// The format named in errors about `data`: the one decoder format, else the sniffed one when it is a decoder
    /// format, else the first by name.
    static func format(of data: Data, among formats: Set<ImageFormat>) -> ImageFormat {
        if formats.count == 1, let only = formats.first { return only }
        let sniffed = ImageFormat(sniffing: data)
        if formats.contains(sniffed) { return sniffed }
        return formats.min { $0.rawValue < $1.rawValue } ?? sniffed
    }

    /// The request for `data` decoded with `options`.
    static func request(options: DecodingOptions, data: Data, format: ImageFormat) throws -> Data {
        let json: Data
        do {
            json = try JSONEncoder().encode(options)
        } catch {
            throw CodecError.corrupt(format: format, reason: "the decoding options could not be written: \(error)")
        }
        return framed(json) + data
    }

    /// The options and the encoded image of a request; `nil` when `request` is not one.
    static func parseRequest(_ request: Data) -> (options: DecodingOptions, data: Data)? {
        guard let (json, rest) = unframe(request),
            let options = try? JSONDecoder().decode(DecodingOptions.self, from: json)
        else { return nil }
        return (options, rest)
    }

    /// The most bytes an answer to `options` may take: the JSON, and the frames the limits allow at 4 bytes a
    /// pixel (``DecodingOptions/pixelLimit`` a frame; one frame with ``DecodingOptions/decodesFirstFrameOnly``,
    /// else up to ``DecodingOptions/animationByteLimit`` beyond the first).
    static func answerLimit(for options: DecodingOptions) -> Int {
        let (frame, overflow) = max(1, options.pixelLimit).multipliedReportingOverflow(by: 4)
        guard !overflow else { return .max }
        let frames = options.decodesFirstFrameOnly ? frame : max(frame, options.animationByteLimit)
        let (total, over) = frames.addingReportingOverflow(4 + jsonLimit)
        return over ? .max : total
    }

    /// The answer for `container`.
    static func answer(_ container: ImageContainer) throws -> (head: Data, frames: [PixelBuffer]) {
        let frames = container.frames.map(\.buffer)
        let image = Answer.Image(
            format: container.format, loopCount: container.loopCount, orientation: container.orientation,
            isPreview: container.isPreview, originalSize: container.originalSize, bitDepth: container.bitDepth,
            profile: container.colorProfile?.data, profileDescription: container.colorProfile?.description,
            metadata: container.metadata, sourceColorProfileDescription: container.sourceColorProfileDescription,
            colorWarning: container.colorWarning,
            frames: zip(frames, container.frames).map { buffer, frame in
                Answer.Frame(
                    width: buffer.width, height: buffer.height, pixelFormat: buffer.format,
                    alphaMode: buffer.alphaMode, duration: frame.duration)
            })
        return (framed(try JSONEncoder().encode(Answer(image: image))), frames)
    }

    /// The answer for `error`.
    static func answer(_ error: CodecError) -> Data {
        framed((try? JSONEncoder().encode(Answer(error: error))) ?? Data())
    }

    /// The container `answer` describes, or the error it carries, for a decode of `format` with `options` whose
    /// child exited with `exitStatus`.
    static func container(
        from answer: Data, exitStatus: Int32, options: DecodingOptions, format: ImageFormat
    ) throws
        -> ImageContainer
    {
        func corrupt(_ reason: String) -> CodecError { CodecError.corrupt(format: format, reason: reason) }
        guard let (json, pixels) = unframe(answer) else {
            throw corrupt("the decoding process ended without an answer (exit status \(exitStatus))")
        }
        let decoded: Answer
        do {
            decoded = try JSONDecoder().decode(Answer.self, from: json)
        } catch {
            throw corrupt("the decoding process answered something else than an image: \(error)")
        }
        if let error = decoded.error { throw error }
        guard let image = decoded.image, !image.frames.isEmpty else {
            throw corrupt("the decoding process answered neither an image nor an error")
        }
        var offset = pixels.startIndex
        var frames: [ImageFrame] = []
        for frame in image.frames {
            try options.checkDimensions(width: frame.width, height: frame.height, format: format)
            let (count, overflow) = (frame.width * frame.height).multipliedReportingOverflow(
                by: frame.pixelFormat.bytesPerPixel)
            guard !overflow, pixels.endIndex - offset >= count else {
                throw corrupt("the decoding process's answer ends inside a frame")
            }
            let start = offset
            let buffer = try PixelBuffer(
                width: frame.width, height: frame.height, format: frame.pixelFormat, alphaMode: frame.alphaMode
            ) { target in
                pixels[start..<start + count].withUnsafeBytes { target.copyMemory(from: $0) }
            }
            frames.append(ImageFrame(buffer: buffer, duration: frame.duration))
            offset += count
        }
        guard offset == pixels.endIndex else {
            throw corrupt("the decoding process's answer has bytes after its frames")
        }
        var container = ImageContainer(
            frames: frames, format: image.format, loopCount: image.loopCount, orientation: image.orientation,
            isPreview: image.isPreview, originalSize: image.originalSize, bitDepth: image.bitDepth)
        if let profile = image.profile {
            container.colorProfile = ColorProfile(
                data: profile, description: image.profileDescription, converter: LCMSColorConverter())
        }
        container.metadata = image.metadata
        container.sourceColorProfileDescription = image.sourceColorProfileDescription
        container.colorWarning = image.colorWarning
        return container
    }

    /// `json` behind its 4-byte big-endian length.
    static func framed(_ json: Data) -> Data {
        let count = UInt32(clamping: json.count)
        return Data([UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)])
            + json
    }

    /// The JSON behind a 4-byte length at the start of `message`, and what follows it; `nil` when the length is
    /// missing, over ``jsonLimit`` or past the end.
    static func unframe(_ message: Data) -> (json: Data, rest: Data)? {
        guard message.count >= 4 else { return nil }
        let start = message.startIndex
        let length = message[start..<start + 4].reduce(0) { $0 << 8 | Int($1) }
        guard length <= jsonLimit, message.count - 4 >= length else { return nil }
        return (message[start + 4..<start + 4 + length], message[(start + 4 + length)...])
    }
}
