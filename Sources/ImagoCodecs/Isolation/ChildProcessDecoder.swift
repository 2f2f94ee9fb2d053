import Foundation
import ImagoCore

/// Decodes in child processes, so that a decoding library that aborts, crashes or runs too long on a hostile file
/// ends a child, not the caller's process: the decode then fails with a ``CodecError``.
///
/// Debian's libheif 1.15 keeps its `assert`s, which abort the process on files it does not expect (RELIABILITY.md
/// §46), and librsvg cannot be interrupted (§28): `imago serve` decodes HEIF and SVG sources this way.
///
/// - The child is `executable ARGUMENTS…`, which must call ``runChild(decoding:)`` with the in-process decoder
///   (`imago heif-decode` and `imago svg-render` do). It reads the options and the encoded bytes on standard input
///   and writes the container (every frame's pixels, the profile kept under ``ColorPolicy/keep``, the metadata
///   read under ``DecodingOptions/readsMetadata``, the original size, bit depth and colour notes) or the
///   ``CodecError`` it threw, which reaches the caller as the same case.
/// - A child that has not answered within ``timeout`` is killed: ``CodecError/renderingTimedOut(format:limit:)``.
///   One that ends on a signal (an `abort`, a segmentation fault) or without a well-formed answer:
///   ``CodecError/corrupt(format:reason:)``. An answer is read only up to the bytes the options' limits allow
///   (``DecodingOptions/pixelLimit`` × 4 a frame, within ``DecodingOptions/animationByteLimit``), and every frame's
///   size is checked against ``DecodingOptions/pixelLimit`` before its buffer is made.
/// - Animations cross whole: the child decodes every frame up front (``DecodingOptions/animationMemoryBudget`` is
///   not used there), within ``DecodingOptions/animationByteLimit``.
/// - Children are kept: up to ``idleChildren`` wait between decodes, each answering up to ``answersPerChild``
///   requests before it is ended (so that what a library leaks stays bounded); a child that crashed, timed out or
///   answered out of turn is never reused. With `idleChildren` 0 each decode starts a child and ends it, and the
///   child sees the end of its input after the request.
/// - Cost: a copy of the request and of the decoded pixels through a socket, and a process start (`imago` loads
///   its libraries, and libavcodec for HEIC) for every decode no idle child takes (BENCHMARKS.md, "HEIF in a child
///   process").
///
/// Thread-safe: concurrent decodes each take a child of their own.
///
/// ```swift
/// let heif = ChildProcessDecoder(
///     formats: [.heic, .heif], executable: URL(fileURLWithPath: "/proc/self/exe"), arguments: ["heif-decode"],
///     timeout: .seconds(30), idleChildren: 2)
/// registry.register(heif)
/// ```
public struct ChildProcessDecoder: ImageDecoding {
    /// The formats the child decodes.
    public let formats: Set<ImageFormat>
    /// The program started for each child.
    public var executable: URL { pool.executable }
    /// Its arguments.
    public var arguments: [String] { pool.arguments }
    /// How long a child may take to answer one request before it is killed.
    public let timeout: Duration
    /// The most children kept waiting between decodes.
    public var idleChildren: Int { pool.idleLimit }
    /// The requests a child answers before it is ended.
    public var answersPerChild: Int { pool.answerLimit }
    let pool: ChildProcessPool

    /// A decoder of `formats` whose children run `executable ARGUMENTS…`, each killed when it has not answered a
    /// request within `timeout`; up to `idleChildren` (default 0: a child for every decode) are kept between
    /// decodes, each for up to `answersPerChild` requests (default 1,000).
    public init(
        formats: Set<ImageFormat>, executable: URL, arguments: [String], timeout: Duration, idleChildren: Int = 0,
        answersPerChild: Int = 1_000
    ) {
        self.formats = formats
        self.timeout = timeout
        self.pool = ChildProcessPool(
            executable: executable, arguments: arguments, idleLimit: idleChildren, answerLimit: answersPerChild)
    }

    /// Decodes `data` in a child process.
    ///
    /// - Throws: ``CodecError``: the child's own, or `.renderingTimedOut` after ``timeout``, or `.corrupt` when it
    ///   could not start, ended on a signal or answered something else than an image or an error.
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        guard !data.isEmpty else { throw CodecError.empty }
        let format = ChildProcessMessage.format(of: data, among: formats)
        let head = try ChildProcessMessage.requestHead(json: options, payloadCount: data.count, format: format)
        return try pool.call(head, payload: data, format: format, timeout: timeout) { worker, deadline in
            Self.readAnswer(from: worker, deadline: deadline, options: options, format: format)
        }
    }

    /// The decoded container `worker` answers, by `deadline`.
    static func readAnswer(
        from worker: ChildWorker, deadline: ContinuousClock.Instant, options: DecodingOptions, format: ImageFormat
    ) -> ChildProcessPool.Answer<ImageContainer> {
        let answer: ChildProcessMessage.Answer
        switch ChildProcessMessage.readHead(
            ChildProcessMessage.Answer.self, from: worker, deadline: deadline, format: format)
        {
        case .success(let head): answer = head
        case .failure(let failure): return .failed(failure)
        }
        if let error = answer.error { return .answered(.failure(error)) }
        guard let image = answer.image, !image.frames.isEmpty else {
            return .failed(
                .refused(
                    .corrupt(format: format, reason: "the decoding process answered neither an image nor an error")))
        }
        let count: Int
        do {
            count = try ChildProcessMessage.pixelByteCount(of: image, options: options, format: format)
        } catch {
            return .failed(.refused(error))
        }
        guard count <= ChildProcessMessage.pixelByteLimit(for: options) else {
            return .failed(
                .refused(.corrupt(format: format, reason: "the decoding process answered more than its limits allow")))
        }
        let (pixels, transfer) = worker.receive(count, deadline: deadline)
        guard let pixels else { return .failed(.cutOff(transfer)) }
        do {
            return .answered(.success(try ChildProcessMessage.container(of: image, pixels: pixels)))
        } catch {
            return .failed(.refused(.corrupt(format: format, reason: "\(error)")))
        }
    }
}
