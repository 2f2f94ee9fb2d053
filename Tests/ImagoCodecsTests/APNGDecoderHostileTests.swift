import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// Every PNG/APNG in `../shared/corpus/hostile-modern`, as its `expectations.json` asks: crafted and empty files
/// fail with a ``CodecError``; truncated ones fail or return only frames that are complete (equal to the intact
/// file's first frames); `acTL` frame counts that lie play the frames present; real malformed files decode or
/// fail with a typed error. Memory for each is measured by `scripts/hostile-rss.sh`.
@Suite struct APNGDecoderHostileTests {
    static let files: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: corpusURL("hostile-modern").path)) ?? []
        return names.filter { $0.hasSuffix(".png") }.sorted()
    }()

    @Test func everyHostileAPNGIsCovered() {
        #expect(Self.files.count == 20)
    }

    @Test(.timeLimit(.minutes(1)), arguments: files)
    func survives(_ name: String) throws {
        let data = try Data(contentsOf: corpusURL("hostile-modern").appendingPathComponent(name))
        let registry = ImageDecoderRegistry(ImagoCodecs.decoders)
        let outcome = Result { try registry.decode(data) }
        if case .failure(let error) = outcome { #expect(error is CodecError, "\(name): \(error)") }
        print("apng-hostile \(name): \(outcome.map { "\($0.frames.count) frames" })")

        switch name {
        case "empty.png":
            #expect(throws: CodecError.empty) { try outcome.get() }
        case "apng-fctl-100000x100000-outside-canvas.png":
            #expect { try outcome.get() } throws: { error in
                if case .corrupt(.apng, _) = error as? CodecError { return true }
                return false
            }
        case "apng-actl-100000-frames-4-present.png", "apng-actl-2147483647-frames.png":
            let container = try outcome.get()
            let intact = try registry.decode(try corpusData("apng/gen-dispose-none-blend-over.png"))
            #expect(container.frames.map(\.buffer) == intact.frames.map(\.buffer))
        case _ where name.hasPrefix("truncated-"):
            guard case .success(let container) = outcome else { return }
            let source =
                name.contains("apngasm") ? "gen-apngasm-kodak-4frames-loop2" : "gen-dispose-previous-blend-over"
            let intact = try registry.decode(try corpusData("apng/\(source).png"))
            #expect(container.frames.count < intact.frames.count)
            for (index, frame) in container.frames.enumerated() {
                #expect(frame.buffer == intact.frames[index].buffer, "\(name) frame \(index)")
            }
        default:
            break  // malformed-*: decode or fail with a typed error (checked above)
        }
    }

    @Test func brokenAnimationDecodesAsTheStillDefaultImage() throws {
        // Sequence numbers with a gap: browsers show the default image
        let data = try corpusData("hostile-modern/malformed-pillow-apng-sequence_gap.png")
        let container = try APNGDecoder().decode(data, options: DecodingOptions())
        let still = try PNGDecoder().decode(data, options: DecodingOptions())
        #expect(container.frames.count == 1)
        #expect(container.format == .apng)
        #expect(container.image == still.image)
    }

    @Test func truncationWithPartialDataAllowedIsAPreview() throws {
        let data = try corpusData("hostile-modern/truncated-gen-dispose-previous-blend-over-middle-of-last-fdAT.png")
        let partial = try APNGDecoder().decode(data, options: DecodingOptions(allowsPartialData: true))
        #expect(partial.isPreview)
        #expect(partial.frames.count == 3)
    }
}
