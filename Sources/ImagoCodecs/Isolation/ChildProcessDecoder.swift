import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Decodes in a child process started for each image, so that a decoding library that aborts, crashes or runs
/// too long on a hostile file ends that process, not the caller's: the decode then fails with a ``CodecError``.
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
/// - Cost: one process start (about 20 ms for `imago`) and one copy of the decoded pixels through a pipe.
///
/// Thread-safe: each decode starts its own child.
///
/// ```swift
/// let heif = ChildProcessDecoder(
///     formats: [.heic, .heif], executable: URL(fileURLWithPath: "/proc/self/exe"), arguments: ["heif-decode"],
///     timeout: .seconds(30))
/// registry.register(heif)
/// ```
public struct ChildProcessDecoder: ImageDecoding {
    /// The formats the child decodes.
    public let formats: Set<ImageFormat>
    /// The program started for each decode.
    public let executable: URL
    /// Its arguments.
    public let arguments: [String]
    /// How long a child may take to answer before it is killed.
    public let timeout: Duration

    /// A decoder of `formats` that runs `executable ARGUMENTS…` for each image and kills it after `timeout`.
    public init(formats: Set<ImageFormat>, executable: URL, arguments: [String], timeout: Duration) {
        self.formats = formats
        self.executable = executable
        self.arguments = arguments
        self.timeout = timeout
    }

    /// Decodes `data` in a child process.
    ///
    /// - Throws: ``CodecError``: the child's own, or `.renderingTimedOut` after ``timeout``, or `.corrupt` when it
    ///   could not start, ended on a signal or answered something else than an image or an error.
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        guard !data.isEmpty else { throw CodecError.empty }
        let format = ChildProcessMessage.format(of: data, among: formats)
        let request = try ChildProcessMessage.request(options: options, data: data, format: format)
        let ending: ChildProcess.Ending
        do {
            ending = try ChildProcess(executable: executable, arguments: arguments).run(
                request, limit: ChildProcessMessage.answerLimit(for: options), timeout: timeout)
        } catch {
            throw CodecError.corrupt(format: format, reason: "the decoding process could not start: \(error)")
        }
        switch ending {
        case .timedOut:
            throw CodecError.renderingTimedOut(format: format, limit: timeout)
        case .tooLong:
            throw CodecError.corrupt(format: format, reason: "the decoding process answered more than its limits allow")
        case .signalled(let signal):
            let name = strsignal(signal).map { String(cString: $0) } ?? "signal"
            throw CodecError.corrupt(
                format: format, reason: "the decoding process ended on signal \(signal) (\(name)) without an answer")
        case .answered(let answer, let status):
            return try ChildProcessMessage.container(from: answer, exitStatus: status, options: options, format: format)
        }
    }
}
