import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What ``ChildProcessDecoder`` and ``ChildProcessEncoder`` say to their children through the children's standard
/// input and output.
///
/// A request: a 4-byte big-endian length, that many bytes of JSON (the ``DecodingOptions``; the encoder's
/// ``ChildProcessEncoder/Request``), an 8-byte big-endian length and that many bytes of payload (the encoded image;
/// the pixels). An answer: a 4-byte big-endian length, that many bytes of JSON (a decode's ``Answer``; the encoder's
/// ``ChildProcessEncoder/Answer``), then what that JSON says follows (each frame's pixels in order, `width × height
/// × bytesPerPixel` bytes each, rows packed; the encoded bytes). Both say their own length, so one child answers
/// request after request.
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

    /// A request's head: `json` in JSON and the length of the `payloadCount` bytes that follow it (sent on their
    /// own, from where they are, not copied behind the head).
    static func requestHead(json: some Encodable, payloadCount: Int, format: ImageFormat) throws(CodecError) -> Data {
        let encoded: Data
        do {
            encoded = try JSONEncoder().encode(json)
        } catch {
            throw CodecError.corrupt(format: format, reason: "the request could not be written: \(error)")
        }
        return framed(encoded) + Data(BigEndian.bytes(UInt64(payloadCount)))
    }

    /// An answer's JSON head as `type`, read from `worker` by `deadline`.
    static func readHead<Head: Decodable>(
        _ type: Head.Type, from worker: ChildWorker, deadline: ContinuousClock.Instant, format: ImageFormat
    ) -> Result<Head, ChildProcessPool.Failure> {
        let (length, lengthTransfer) = worker.receive(4, deadline: deadline)
        guard let length else { return .failure(.cutOff(lengthTransfer)) }
        let jsonLength = Int(number(length))
        guard jsonLength <= jsonLimit else {
            return .failure(.refused(.corrupt(format: format, reason: "the \(format) process answered out of turn")))
        }
        let (json, jsonTransfer) = worker.receive(jsonLength, deadline: deadline)
        guard let json else { return .failure(.cutOff(jsonTransfer)) }
        do {
            return .success(try JSONDecoder().decode(Head.self, from: json))
        } catch {
            return .failure(
                .refused(
                    .corrupt(
                        format: format, reason: "the \(format) process answered something else than an answer: \(error)"
                    )
                ))
        }
    }

    /// The child's loop: reads requests on standard input until it ends, hands each one's JSON and payload to
    /// `handle` with a function that writes to standard output (kept for the answers: anything a library prints
    /// there goes to `/dev/null`). Returns the exit status: 0 at the end of the input, 2 after input that was not a
    /// request (answered with a `CodecError.corrupt` in `Answer`'s shape).
    static func serveRequests(_ handle: (Data, Data, (UnsafeRawBufferPointer) -> Void) -> Void) -> Int32 {
        let answers = dup(1)
        let null = open("/dev/null", O_WRONLY)
        if null >= 0 {
            dup2(null, 1)
            close(null)
        }
        let write: (UnsafeRawBufferPointer) -> Void = { _ = FileDescriptorWriting.writeAll(answers, $0) }
        while true {
            guard let length = readExactly(4) else { return 0 }  // the end of the requests
            let jsonLength = Int(number(length))
            guard jsonLength <= jsonLimit, let json = readExactly(jsonLength),
                let payloadLength = readExactly(8).map(number), payloadLength <= UInt64(Int.max),
                let payload = readExactly(Int(payloadLength))
            else {
                answer(CodecError.corrupt(format: .unknown, reason: "not a request")).withUnsafeBytes(write)
                return 2
            }
            handle(json, payload, write)
        }
    }

    /// Exactly `count` bytes of standard input; `nil` when it ends first.
    private static func readExactly(_ count: Int) -> Data? {
        var data = Data(count: count)
        let complete = data.withUnsafeMutableBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return true }
            var done = 0
            while done < count {
                let n = read(0, base + done, count - done)
                if n > 0 {
                    done += n
                } else if n < 0, errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
        return complete ? data : nil
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
        Data(BigEndian.bytes(json.count, size: 4)) + json
    }

    /// The number `bytes` hold, most significant first.
    static func number(_ bytes: Data) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
