import Foundation
import ImagoCore

/// Encodes in child processes, so that what an encoding library leaks or breaks stays in a child: x265 3.5 leaks
/// 1,168 bytes for every HEIC encoded (RELIABILITY.md §46), which a server encoding HEIC outputs for months would
/// hold forever; here a child is ended after ``answersPerChild`` encodes.
///
/// - The child is `executable ARGUMENTS…`, which must call ``runChild(encoding:)`` with the in-process encoder
///   (`imago heic-encode` does with ``HEICEncoder``). It reads the options (quality, losslessness, the ICC profile
///   and metadata to embed) and the pixels on standard input and writes the encoded bytes, or the ``CodecError`` it
///   threw, which reaches the caller as the same case.
/// - A child that has not answered within ``timeout`` is killed: ``CodecError/renderingTimedOut(format:limit:)``.
///   One that ends on a signal or without a well-formed answer: ``CodecError/encodingFailed(format:reason:)``. An
///   answer is read only up to 16 MiB or 8 bytes a pixel, whichever is more.
/// - Children are kept as ``ChildProcessDecoder`` keeps them: up to ``idleChildren`` between encodes, each for up
///   to ``answersPerChild`` encodes; one that crashed, timed out or answered out of turn is never reused.
/// - ``settingsIdentifier`` is the in-process encoder's, so that outputs cached under either are the same.
///
/// Thread-safe: concurrent encodes each take a child of their own.
///
/// ```swift
/// let heic = ChildProcessEncoder(
///     format: .heic, settingsIdentifier: HEICEncoder().settingsIdentifier,
///     executable: URL(fileURLWithPath: "/proc/self/exe"), arguments: ["heic-encode"], timeout: .seconds(30),
///     idleChildren: 1)
/// encoders.register(heic)
/// ```
public struct ChildProcessEncoder: ImageEncoding {
    /// The format the child writes.
    public let format: ImageFormat
    /// The child's encoder's ``ImageEncoding/settingsIdentifier``.
    public let settingsIdentifier: String?
    /// How long a child may take to answer one request before it is killed.
    public let timeout: Duration
    /// The program started for each child.
    public var executable: URL { pool.executable }
    /// Its arguments.
    public var arguments: [String] { pool.arguments }
    /// The most children kept waiting between encodes.
    public var idleChildren: Int { pool.idleLimit }
    /// The requests a child answers before it is ended.
    public var answersPerChild: Int { pool.answerLimit }
    let pool: ChildProcessPool

    /// An encoder of `format` (whose in-process encoder has `settingsIdentifier`) whose children run `executable
    /// ARGUMENTS…`, each killed when it has not answered a request within `timeout`; up to `idleChildren` (default
    /// 0: a child for every encode) are kept between encodes, each for up to `answersPerChild` requests (default
    /// 1,000).
    public init(
        format: ImageFormat, settingsIdentifier: String?, executable: URL, arguments: [String], timeout: Duration,
        idleChildren: Int = 0, answersPerChild: Int = 1_000
    ) {
        self.format = format
        self.settingsIdentifier = settingsIdentifier
        self.timeout = timeout
        self.pool = ChildProcessPool(
            executable: executable, arguments: arguments, idleLimit: idleChildren, answerLimit: answersPerChild)
    }

    /// The JSON part of a request: the options and the pixels' layout.
    struct Request: Codable {
        var quality: Double
        var isLossless: Bool
        var profile: Data?
        var profileDescription: String?
        var metadata: ImageMetadata?
        var width: Int
        var height: Int
        var pixelFormat: PixelBuffer.PixelFormat
        var alphaMode: PixelBuffer.AlphaMode
    }

    /// The JSON part of an answer: the error the child's encoder threw, or the length of the bytes that follow.
    struct Answer: Codable {
        var error: CodecError?
        var length: Int?
    }

    /// Encodes `image` in a child process.
    ///
    /// - Throws: ``CodecError``: the child's own, or `.renderingTimedOut` after ``timeout``, or `.encodingFailed`
    ///   when it could not start, ended on a signal or answered something else than bytes or an error.
    public func encode(_ image: PixelBuffer, options: EncodingOptions) throws -> Data {
        let head = Request(
            quality: options.quality, isLossless: options.isLossless, profile: options.colorProfile?.data,
            profileDescription: options.colorProfile?.description, metadata: options.metadata, width: image.width,
            height: image.height, pixelFormat: image.format, alphaMode: image.alphaMode)
        let request = try ChildProcessMessage.requestHead(
            json: head, payloadCount: image.bytes.count, format: format)
        do {
            return try call(request, pixels: image.bytes, limit: max(16 << 20, image.width * image.height * 8))
        } catch {
            // The child, not the pixels: an encoder's failure.
            guard case .corrupt(let format, let reason) = error else { throw error }
            throw CodecError.encodingFailed(format: format, reason: reason)
        }
    }

    /// Sends `request` and `pixels` to a child and reads the encoded bytes it answers, at most `limit` of them.
    private func call(_ request: Data, pixels: [UInt8], limit: Int) throws(CodecError) -> Data {
        let format = format
        return try pool.call(request, payload: pixels, format: format, timeout: timeout) { worker, deadline in
            let answer: Answer
            switch ChildProcessMessage.readHead(Answer.self, from: worker, deadline: deadline, format: format) {
            case .success(let head): answer = head
            case .failure(let failure): return .failed(failure)
            }
            if let error = answer.error { return .answered(.failure(error)) }
            guard let length = answer.length, length >= 0, length <= limit else {
                let reason = "the \(format) process answered \(answer.length.map { "\($0) bytes" } ?? "no bytes")"
                return .failed(.refused(.corrupt(format: format, reason: reason)))
            }
            let (bytes, transfer) = worker.receive(length, deadline: deadline)
            guard let bytes else { return .failed(.cutOff(transfer)) }
            return .answered(.success(bytes))
        }
    }

    /// The child's side of a ``ChildProcessEncoder``: reads requests on standard input one after another, encodes
    /// each with `encoder` in this process and writes its answer on standard output, until the input ends. Returns
    /// the exit status: 0 at the end of the input, 2 after input that was not a request.
    public static func runChild(encoding encoder: any ImageEncoding) -> Int32 {
        ChildProcessMessage.serveRequests { json, pixels, write in
            func answer(_ answer: Answer, _ bytes: Data = Data()) {
                ChildProcessMessage.framed((try? JSONEncoder().encode(answer)) ?? Data()).withUnsafeBytes(write)
                bytes.withUnsafeBytes(write)
            }
            do {
                let request = try JSONDecoder().decode(Request.self, from: json)
                let image = try PixelBuffer(
                    width: request.width, height: request.height, format: request.pixelFormat,
                    alphaMode: request.alphaMode, bytes: [UInt8](pixels))
                let options = EncodingOptions(
                    quality: request.quality, isLossless: request.isLossless,
                    colorProfile: request.profile.map {
                        ColorProfile(data: $0, description: request.profileDescription)
                    },
                    metadata: request.metadata)
                let bytes = try encoder.encode(image, options: options)
                answer(Answer(length: bytes.count), bytes)
            } catch let error as CodecError {
                answer(Answer(error: error))
            } catch {
                answer(Answer(error: .encodingFailed(format: encoder.format, reason: "\(error)")))
            }
        }
    }
}
