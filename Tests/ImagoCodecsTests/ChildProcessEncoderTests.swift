import Foundation
import ImagoCore
import ImagoTesting
import Testing

@testable import ImagoCodecs

/// Encoding in a child process (`ChildProcessEncoder`, `imago heic-encode`): the same bytes as in-process, typed
/// errors crossing typed, a crash or a lying answer costing one encode, children ended after their answers.
@Suite(.enabled(if: HEICEncoder.isAvailable, "libheif has no HEVC encoder"))
struct ChildProcessEncoderTests {
    static func heic(idleChildren: Int = 0, answersPerChild: Int = 1_000) throws -> ChildProcessEncoder {
        let executable = try #require(
            ImagoTesting.builtExecutable(named: "imago", environmentVariable: "IMAGO_CLI", preferringPlainBuild: true),
            "build the imago executable first (swift build)")
        return ChildProcessEncoder(
            format: .heic, settingsIdentifier: HEICEncoder().settingsIdentifier, executable: executable,
            arguments: ["heic-encode"], timeout: .seconds(60), idleChildren: idleChildren,
            answersPerChild: answersPerChild)
    }

    /// An encoder whose child is `/bin/sh -c SCRIPT`.
    static func shell(_ script: String) -> ChildProcessEncoder {
        ChildProcessEncoder(
            format: .heic, settingsIdentifier: nil, executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", "cat > /dev/null; " + script], timeout: .seconds(10))
    }

    /// A 96 × 64 part of a Kodak photo with a Display P3 profile, and EXIF.
    static func image() throws -> (PixelBuffer, EncodingOptions) {
        let jpeg = try Data(contentsOf: corpusURL("icc").appendingPathComponent("gen-kodim03-displayp3-v4.jpg"))
        var keep = DecodingOptions(targetSize: PixelSize(width: 96, height: 96))
        keep.colorPolicy = .keep
        let decoded = try JPEGDecoder().decode(jpeg, options: keep)
        let exif = Data("MM\0*\0\0\0\u{8}\0\0\0\0\0\0".utf8)
        return (
            decoded.image,
            EncodingOptions(quality: 0.7, colorProfile: decoded.colorProfile, metadata: ImageMetadata(exif: exif))
        )
    }

    @Test(.timeLimit(.minutes(2)), arguments: [0, 1])
    func theChildWritesWhatThisProcessWrites(idleChildren: Int) throws {
        let (image, options) = try Self.image()
        let child = try Self.heic(idleChildren: idleChildren)
        let here = try HEICEncoder().encode(image, options: options)
        let there = try child.encode(image, options: options)
        #expect(there == here, "\(there.count) bytes against \(here.count)")
        #expect(child.settingsIdentifier == HEICEncoder().settingsIdentifier)
        var keep = DecodingOptions()
        keep.colorPolicy = .keep
        keep.readsMetadata = true
        let decoded = try HEIFDecoder().decode(there, options: keep)
        #expect(decoded.colorProfile?.data == options.colorProfile?.data)
        #expect(decoded.image.size == image.size)
    }

    @Test(.timeLimit(.minutes(1)))
    func errorsCrashesAndLiesCostOneEncode() throws {
        let (image, options) = try Self.image()
        func framed(_ json: String) -> String {
            let length = String(format: "\\%03o\\%03o", json.utf8.count >> 8, json.utf8.count & 0xFF)
            return "printf '\\000\\000\(length)'; printf '%s' '\(json)'"
        }
        #expect(throws: CodecError.encodingFailed(format: .heic, reason: "x265 said no")) {
            try Self.shell(framed(#"{"error":{"encodingFailed":{"format":"heic","reason":"x265 said no"}}}"#))
                .encode(image, options: options)
        }
        func reason(_ script: String) -> String {
            do {
                _ = try Self.shell(script).encode(image, options: options)
                return "encoded"
            } catch {
                return "\(error)"
            }
        }
        #expect(reason("kill -SEGV $$").contains("signal 11"))
        #expect(reason("exit 3").contains("exit status 3"))
        #expect(reason(framed(#"{"length":999999999}"#)).contains("answered 999999999 bytes"))
        #expect(reason(framed(#"{"length":10}"#) + "; printf abc").contains("without an answer"))
        #expect(reason(framed(#"{}"#)).contains("answered no bytes"))
    }

    @Test(.timeLimit(.minutes(2)))
    func aChildIsEndedAfterItsAnswers() throws {
        let (image, options) = try Self.image()
        let child = try Self.heic(idleChildren: 1, answersPerChild: 2)
        _ = try child.encode(image, options: options)
        let first = child.pool.idleProcesses
        #expect(first.count == 1)
        _ = try child.encode(image, options: options)
        #expect(child.pool.idleProcesses.isEmpty, "ended after its second encode (x265's leak stays bounded)")
    }
}
