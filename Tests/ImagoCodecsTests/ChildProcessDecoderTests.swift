import Foundation
import ImagoCore
import ImagoTesting
import Testing

@testable import ImagoCodecs

#if canImport(Glibc)
    import Glibc
#endif

/// Decoding in a child process (`ChildProcessDecoder`, `imago heif-decode`): the same container as in-process,
/// typed errors crossing typed, and a child that crashes, hangs or answers nonsense costing one decode, never the
/// caller's process.
@Suite struct ChildProcessDecoderTests {
    /// The HEIF decoder `imago serve` uses, run in the plain `imago` build (under `make test-tsan` the sanitizer
    /// build beside the tests starts too slowly).
    static func heif(
        timeout: Duration = .seconds(30), idleChildren: Int = 0, answersPerChild: Int = 1_000
    ) throws -> ChildProcessDecoder {
        let executable = try #require(
            ImagoTesting.builtExecutable(named: "imago", environmentVariable: "IMAGO_CLI", preferringPlainBuild: true),
            "build the imago executable first (swift build)")
        return ChildProcessDecoder(
            formats: [.heic, .heif], executable: executable, arguments: ["heif-decode"], timeout: timeout,
            idleChildren: idleChildren, answersPerChild: answersPerChild)
    }

    /// A decoder whose child is `/bin/sh -c SCRIPT`.
    static func shell(_ script: String, timeout: Duration = .seconds(10)) -> ChildProcessDecoder {
        ChildProcessDecoder(
            formats: [.heic, .heif], executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", script],
            timeout: timeout)
    }

    static func heic(_ name: String) throws -> Data {
        try Data(contentsOf: corpusURL("heic").appendingPathComponent(name))
    }

    static func expectSame(_ there: ImageContainer, _ here: ImageContainer, _ comment: Comment) {
        #expect(there.frames.count == here.frames.count, comment)
        for (a, b) in zip(there.frames, here.frames) { #expect(a.buffer == b.buffer, comment) }
        #expect(there.format == here.format, comment)
        #expect(there.originalSize == here.originalSize && there.bitDepth == here.bitDepth, comment)
        #expect(there.orientation == here.orientation && there.loopCount == here.loopCount, comment)
        #expect(there.colorProfile == here.colorProfile && there.metadata == here.metadata, comment)
        #expect(there.sourceColorProfileDescription == here.sourceColorProfileDescription, comment)
        #expect(there.colorWarning == here.colorWarning, comment)
    }

    @Test(.timeLimit(.minutes(2)), arguments: [0, 1])
    func theChildDecodesWhatThisProcessDecodes(idleChildren: Int) throws {
        let child = try Self.heif(idleChildren: idleChildren)
        var small = DecodingOptions(targetSize: PixelSize(width: 100, height: 100))
        small.targetMode = .cover
        var metadata = DecodingOptions()
        metadata.readsMetadata = true
        for name in [
            "gen-kodim03-8bit-420.heic", "gen-kodim12-alpha.heic", "gen-kodim19-10bit.heic",
            "gen-kodim23-irot3.heic", "pillowheif-L_exif_xmp_iptc.heic", "pillowheif-RGBA_8__29x100.heif",
        ] {
            let data = try Self.heic(name)
            for options in [DecodingOptions(), small, metadata] {
                Self.expectSame(
                    try child.decode(data, options: options), try HEIFDecoder().decode(data, options: options),
                    "\(name) \(options.targetSize.map { "\($0)" } ?? "full")")
            }
        }
        // The file's metadata and a kept profile cross too (a Display P3 JPEG's pixels and profile, as HEIC).
        let p3 = try Data(contentsOf: corpusURL("icc").appendingPathComponent("gen-kodim03-displayp3-v4.jpg"))
        var keep = DecodingOptions()
        keep.colorPolicy = .keep
        keep.readsMetadata = true
        let kept = try JPEGDecoder().decode(p3, options: keep)
        let profile = try #require(kept.colorProfile)
        let heic = try HEICEncoder().encode(kept.image, options: EncodingOptions(colorProfile: profile))
        let there = try child.decode(heic, options: keep)
        Self.expectSame(there, try HEIFDecoder().decode(heic, options: keep), "P3 kept")
        #expect(there.colorProfile?.data == profile.data)
        #expect(there.colorProfile?.converter != nil, "a kept profile converts colours in the parent too")
        let exif = try child.decode(try Self.heic("pillowheif-L_exif_xmp_iptc.heic"), options: metadata).metadata
        #expect(exif?.exif != nil && exif?.xmp != nil, "\(String(describing: exif))")
    }

    @Test(.timeLimit(.minutes(1)))
    func theChildsErrorsArriveAsTheSameCases() throws {
        let child = try Self.heif()
        let data = try Self.heic("gen-kodim03-8bit-420.heic")
        #expect(throws: CodecError.tooManyPixels(width: 384, height: 256, limit: 1_000)) {
            try child.decode(data, options: DecodingOptions(pixelLimit: 1_000))
        }
        let here = #expect(throws: CodecError.self) { try HEIFDecoder().decode(data.prefix(600), options: .init()) }
        let there = #expect(throws: CodecError.self) { try child.decode(data.prefix(600), options: .init()) }
        #expect(here == there)
        #expect(throws: CodecError.empty) { try child.decode(Data(), options: DecodingOptions()) }
    }

    /// What libheif's `assert`s do to a process (RELIABILITY.md §46): the child ends on a signal, the parent gets
    /// a typed error and goes on.
    @Test(.timeLimit(.minutes(1)))
    func aChildThatCrashesIsACorruptImage() throws {
        let data = try Self.heic("gen-kodim03-8bit-420.heic")
        for (script, signal) in [("cat > /dev/null; kill -ABRT $$", 6), ("kill -SEGV $$", 11)] {
            do {
                _ = try Self.shell(script).decode(data, options: DecodingOptions())
                Issue.record("\(script): decoded")
            } catch let error as CodecError {
                guard case .corrupt(let format, let reason) = error else {
                    Issue.record("\(script): \(error)")
                    continue
                }
                #expect(format == .heic)
                #expect(reason.contains("signal \(signal)"), "\(reason)")
            }
        }
        // This process is still here, and the next decode works.
        #expect(try Self.heif().decode(data, options: DecodingOptions()).image.width == 384)
    }

    @Test(.timeLimit(.minutes(1)))
    func aChildThatHangsIsKilledAfterTheTimeout() throws {
        let data = try Self.heic("gen-kodim03-8bit-420.heic")
        let start = ContinuousClock.now
        #expect(throws: CodecError.renderingTimedOut(format: .heic, limit: .seconds(1))) {
            try Self.shell("cat > /dev/null; sleep 30", timeout: .seconds(1)).decode(data, options: DecodingOptions())
        }
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test(.timeLimit(.minutes(1)))
    func answersThatAreNotImagesAreCorruptNotTrusted() throws {
        let data = try Self.heic("gen-kodim03-8bit-420.heic")
        func reason(_ script: String, _ options: DecodingOptions = DecodingOptions()) -> String {
            do {
                _ = try Self.shell(script).decode(data, options: options)
                return "decoded"
            } catch let error as CodecError {
                if case .corrupt(_, let reason) = error { return reason }
                return "\(error)"
            } catch {
                return "\(error)"
            }
        }
        #expect(reason("cat > /dev/null; exit 3").contains("without an answer (exit status 3)"))
        #expect(reason("cat > /dev/null; printf '\\000\\000\\000\\002{}'").contains("neither an image nor an error"))
        #expect(reason("cat > /dev/null; printf '\\000\\000\\000\\003abc'").contains("something else than an answer"))
        // A frame said to be larger than the pixel limit is refused before a buffer is made.
        let huge =
            #"{"image":{"format":"heic","loopCount":0,"orientation":1,"isPreview":false,"#
            + #""originalSize":{"width":1,"height":1},"frames":[{"width":100000,"height":100000,"#
            + #""pixelFormat":"rgba8","alphaMode":"straight","duration":[0,0]}]}}"#
        let framed = String(format: "\\%03o\\%03o", huge.utf8.count >> 8, huge.utf8.count & 0xFF)
        let script = "cat > /dev/null; printf '\\000\\000\(framed)'; printf '%s' '\(huge)'"
        do {
            _ = try Self.shell(script).decode(data, options: DecodingOptions())
            Issue.record("a 100000x100000 frame was accepted")
        } catch let error as CodecError {
            #expect(error == .tooManyPixels(width: 100_000, height: 100_000, limit: 100_000_000), "\(error)")
        }
        // Frames within the pixel limit but together over the animation byte limit are refused before they are read.
        let two =
            #"{"image":{"format":"heic","loopCount":0,"orientation":1,"isPreview":false,"#
            + #""originalSize":{"width":4,"height":4},"frames":[{"width":4,"height":4,"pixelFormat":"rgba8","#
            + #""alphaMode":"straight","duration":[0,0]},{"width":4,"height":4,"pixelFormat":"rgba8","#
            + #""alphaMode":"straight","duration":[0,0]}]}}"#
        let twoFramed = String(format: "\\%03o\\%03o", two.utf8.count >> 8, two.utf8.count & 0xFF)
        let limits = DecodingOptions(pixelLimit: 16, animationByteLimit: 64)
        let over = "cat > /dev/null; printf '\\000\\000\(twoFramed)'; printf '%s' '\(two)'; head -c 128 /dev/zero"
        #expect(reason(over, limits).contains("answered more than its limits allow"), "\(reason(over, limits))")
        // Zeros: a JSON of length 0, not an answer.
        #expect(reason("cat > /dev/null; head -c 80000000 /dev/zero").contains("something else than an answer"))
    }

    /// A child gets none of this process's descriptors but its socket (a server's connections stay the server's),
    /// and Swift's backtracer is off in it (a crash ends it at once instead of holding the answer open).
    @Test(.timeLimit(.minutes(1)))
    func theChildInheritsNoDescriptorAndNoBacktracer() throws {
        let data = try Self.heic("gen-kodim03-8bit-420.heic")
        let descriptor = open("/dev/null", O_RDONLY)  // without O_CLOEXEC: a child would inherit it
        try #require(descriptor > 2)
        defer { close(descriptor) }
        func status(_ script: String) -> String {
            do {
                _ = try Self.shell("cat > /dev/null; " + script).decode(data, options: DecodingOptions())
                return "decoded"
            } catch {
                return "\(error)"
            }
        }
        #expect(status("[ -e /proc/$$/fd/\(descriptor) ] && exit 4; exit 3").contains("exit status 3"))
        #expect(status("[ -e /proc/$$/fd/0 ] && [ -e /proc/$$/fd/1 ] && exit 5; exit 3").contains("exit status 5"))
        #expect(status("[ \"$SWIFT_BACKTRACE\" = enable=no ] && exit 6; exit 3").contains("exit status 6"))
    }

    /// Kept children: reused between decodes, ended after their answers, replaced when gone, one each for decodes
    /// at once.
    @Test(.timeLimit(.minutes(2)))
    func idleChildrenAreReusedEndedAndReplaced() async throws {
        let data = try Self.heic("gen-kodim03-8bit-420.heic")
        let expected = try HEIFDecoder().decode(data, options: DecodingOptions()).image
        let decoder = try Self.heif(idleChildren: 1, answersPerChild: 3)
        #expect(try decoder.decode(data, options: DecodingOptions()).image == expected)
        let first = decoder.pool.idleProcesses
        #expect(first.count == 1)
        #expect(try decoder.decode(data, options: DecodingOptions()).image == expected)
        #expect(decoder.pool.idleProcesses == first, "the same child answered again")
        #expect(try decoder.decode(data, options: DecodingOptions()).image == expected)
        #expect(decoder.pool.idleProcesses.isEmpty, "ended after its third answer")
        #expect(kill(first[0], 0) != 0, "the ended child is gone")

        // An idle child killed from outside is replaced.
        _ = try decoder.decode(data, options: DecodingOptions())
        let idle = try #require(decoder.pool.idleProcesses.first)
        kill(idle, SIGKILL)
        try await Task.sleep(for: .milliseconds(100))
        #expect(try decoder.decode(data, options: DecodingOptions()).image == expected)
        #expect(decoder.pool.idleProcesses.count == 1 && decoder.pool.idleProcesses != [idle])

        // Four at once: each its own child, at most one kept.
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 {
                group.addTask { (try? decoder.decode(data, options: DecodingOptions()).image) == expected }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == [true, true, true, true])
        #expect(decoder.pool.idleProcesses.count == 1)
    }
}
