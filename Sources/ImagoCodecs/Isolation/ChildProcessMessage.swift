import Foundation
import ImagoCore

/// What ``ChildProcessDecoder`` and its child say to each other through the child's standard input and output.
///
/// The request: a 4-byte big-endian length, that many bytes of the ``DecodingOptions`` in JSON, an 8-byte big-endian
/// length and that many bytes of the encoded image. The answer: a 4-byte big-endian length, that many bytes of an
/// ``Answer`` in JSON, then, for an image, each frame's pixels in order (`width × height × bytesPerPixel` bytes
/// each, rows packed). Both say their own length, so one child answers request after request.
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
        return framed(json) + bigEndian(UInt64(data.count), bytes: 8) + data
    }

    /// The most bytes of pixels an answer to `options` may hold: ``DecodingOptions/pixelLimit`` pixels a frame at
    /// 4 bytes each; one frame with ``DecodingOptions/decodesFirstFrameOnly``, else up to
    /// ``DecodingOptions/animationByteLimit`` in all (or one frame's worth, if that is more).
    static func pixelByteLimit(for options: DecodingOptions) -> Int {
        let (frame, overflow) = max(1, options.pixelLimit).multipliedReportingOverflow(by: 4)
        guard !overflow else { return .max }
        return options.decodesFirstFrameOnly ? frame : max(frame, options.animationByteLimit)
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

    /// The answer whose JSON is `json`.
    static func head(from json: Data, format: ImageFormat) throws(CodecError) -> Answer {
        do {
            return try JSONDecoder().decode(Answer.self, from: json)
        } catch {
            throw CodecError.corrupt(
                format: format, reason: "the decoding process answered something else than an image: \(error)")
        }
    }

    /// The bytes of `image`'s frames, each frame's size checked against `options` first.
    static func pixelByteCount(
        of image: Answer.Image, options: DecodingOptions, format: ImageFormat
    ) throws(CodecError)
        -> Int
    {
        var total = 0
        for frame in image.frames {
            try options.checkDimensions(width: frame.width, height: frame.height, format: format)
            let (count, overflow) = (frame.width * frame.height).multipliedReportingOverflow(
                by: frame.pixelFormat.bytesPerPixel)
            let (sum, over) = total.addingReportingOverflow(count)
            guard !overflow, !over else {
                throw CodecError.corrupt(format: format, reason: "the decoding process's frames overflow")
            }
            total = sum
        }
        return total
    }

    /// The container of `image` and its frames' `pixels` (``pixelByteCount(of:options:format:)`` bytes).
    static func container(of image: Answer.Image, pixels: Data) throws -> ImageContainer {
        var offset = pixels.startIndex
        var frames: [ImageFrame] = []
        for frame in image.frames {
            let count = frame.width * frame.height * frame.pixelFormat.bytesPerPixel
            let start = offset
            let buffer = try PixelBuffer(
                width: frame.width, height: frame.height, format: frame.pixelFormat, alphaMode: frame.alphaMode
            ) { target in
                pixels[start..<start + count].withUnsafeBytes { target.copyMemory(from: $0) }
            }
            frames.append(ImageFrame(buffer: buffer, duration: frame.duration))
            offset += count
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
        bigEndian(UInt64(json.count), bytes: 4) + json
    }

    /// The last `bytes` bytes of `value`, most significant first.
    static func bigEndian(_ value: UInt64, bytes: Int) -> Data {
        Data((0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) })
    }

    /// The number `bytes` hold, most significant first.
    static func number(_ bytes: Data) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
