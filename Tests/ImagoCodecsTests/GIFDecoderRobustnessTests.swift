import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// Hostile, broken and truncated GIFs: limits hold before allocation, nothing crashes or hangs.
@Suite struct GIFDecoderRobustnessTests {
    @Test func hugeLogicalScreenFailsBeforeAllocating() throws {
        // Given a 13-byte GIF declaring a 65535x65535 screen
        let gif = TestGIF(width: 65535, height: 65535, frames: []).encoded()

        // Then the pixel limit stops it
        #expect(throws: CodecError.tooManyPixels(width: 65535, height: 65535, limit: 100_000_000)) {
            try GIFDecoder().decode(gif, options: DecodingOptions())
        }
    }

    @Test func hugeFrameInSmallScreenFailsBeforeDecodingIt() throws {
        // Given a 4x4 GIF with one good frame, then the header of a 65535x65535 frame (and no data for it)
        let gif = TestGIF(width: 4, height: 4)
        var data = gif.encoded().dropLast()  // without the trailer
        data.append(gif.encode(TestGIF.Frame(width: 1, height: 1, indices: [1])))
        data.append(contentsOf: [0x2C, 0, 0, 0, 0])
        data.append(le16(65535))
        data.append(le16(65535))
        data.append(contentsOf: [0, 8, 0])

        // Then the frame's own size is checked before its lines are read
        #expect(throws: CodecError.tooManyPixels(width: 65535, height: 65535, limit: 100_000_000)) {
            try GIFDecoder().decode(Data(data), options: DecodingOptions())
        }
    }

    @Test func hundredThousandFramesFailWithTooManyFrames() throws {
        // Given 100,000 one-pixel frames (~2 MB)
        let one = [UInt8](TestGIF(width: 1, height: 1).encode(TestGIF.Frame(width: 1, height: 1, indices: [1])))
        var bytes = [UInt8](TestGIF(width: 1, height: 1, loopCount: 0).encoded().dropLast())
        bytes.reserveCapacity(bytes.count + one.count * 100_000 + 1)
        for _ in 0..<100_000 { bytes.append(contentsOf: one) }
        bytes.append(0x3B)
        let data = Data(bytes)

        // Then the default frame limit (10,000) stops it
        #expect(throws: CodecError.tooManyFrames(limit: 10_000)) {
            try GIFDecoder().decode(data, options: DecodingOptions())
        }
    }

    @Test func frameLimitAndAnimationByteLimitAreHonoured() throws {
        let frame = TestGIF.Frame(width: 100, height: 100, indices: [UInt8](repeating: 1, count: 10_000))
        let gif = TestGIF(width: 100, height: 100, frames: Array(repeating: frame, count: 5)).encoded()
        #expect(throws: CodecError.tooManyFrames(limit: 3)) {
            try GIFDecoder().decode(gif, options: DecodingOptions(frameLimit: 3))
        }
        // 5 frames of 40,000 bytes each do not fit in 100,000 bytes
        #expect(throws: CodecError.animationTooLarge(limit: 100_000)) {
            try GIFDecoder().decode(gif, options: DecodingOptions(animationByteLimit: 100_000))
        }
        #expect(try GIFDecoder().decode(gif, options: DecodingOptions(animationByteLimit: 200_000)).frames.count == 5)
    }

    // Issue 23 item 6 changed this: a truncated file used to decode to its complete frames as if whole.
    @Test func truncatedAfterACompleteFrameFailsUnlessPartialDataIsAllowed() throws {
        let frame = TestGIF.Frame(width: 8, height: 8, indices: [UInt8](repeating: 2, count: 64))
        let full = TestGIF(width: 8, height: 8, frames: [frame, frame]).encoded()
        let cut = Data(full.prefix(full.count - 20))
        #expect(throws: CodecError.truncated(format: .gif)) {
            try GIFDecoder().decode(cut, options: DecodingOptions())
        }
        let container = try GIFDecoder().decode(cut, options: DecodingOptions(allowsPartialData: true))
        #expect(container.frames.count == 1)
        #expect(container.image[pixel: 7, 7] == RGBA(r: 0, g: 255, b: 0))
        #expect(container.isPreview)
    }

    @Test func aMissingTrailerByteIsNotATruncation() throws {
        // Many GIFs in the wild end right after their last frame; browsers show them whole
        let frame = TestGIF.Frame(width: 8, height: 8, indices: [UInt8](repeating: 2, count: 64))
        let full = TestGIF(width: 8, height: 8, frames: [frame, frame]).encoded()
        #expect(full.last == 0x3B)
        let container = try GIFDecoder().decode(Data(full.dropLast()), options: DecodingOptions())
        #expect(container.frames.count == 2)
        #expect(!container.isPreview)
    }

    @Test func truncatedInsideTheFirstFrameThrowsUnlessPartialDataIsAllowed() throws {
        // Given a 32x32 frame (its LZW data spans several sub-blocks) cut in the middle
        let frame = TestGIF.Frame(width: 32, height: 32, indices: [UInt8](repeating: 2, count: 1024))
        let full = TestGIF(width: 32, height: 32, frames: [frame]).encoded()
        let cut = Data(full.prefix(full.count / 2))
        #expect(throws: CodecError.truncated(format: .gif)) {
            try GIFDecoder().decode(cut, options: DecodingOptions())
        }
        let preview = try GIFDecoder().decode(cut, options: DecodingOptions(allowsPartialData: true))
        #expect(preview.isPreview)
        #expect(preview.frames.count == 1)
        #expect(preview.image[pixel: 0, 0] == RGBA(r: 0, g: 255, b: 0))
        #expect(preview.image[pixel: 31, 31].a == 0)
    }

    @Test func emptyAndImagelessDataFail() throws {
        #expect(throws: CodecError.empty) { try GIFDecoder().decode(Data(), options: DecodingOptions()) }
        #expect(throws: CodecError.self) {
            try GIFDecoder().decode(TestGIF(width: 2, height: 2).encoded(), options: DecodingOptions())
        }
        #expect(throws: CodecError.self) {
            try GIFDecoder().decode(Data("GIF89a".utf8), options: DecodingOptions())
        }
    }

    @Test(arguments: ["gif/malformed", "gif/regression", "gif/stall"])
    func brokenCorpusFilesDecodeOrThrowACodecError(_ folder: String) throws {
        let files = try corpusFiles(folder, ext: "gif")
        #expect(!files.isEmpty)
        for url in files {
            let data = try Data(contentsOf: url)
            do {
                let container = try GIFDecoder().decode(data, options: DecodingOptions())
                #expect(!container.frames.isEmpty, "\(url.lastPathComponent)")
            } catch is CodecError {
                // failing with a typed error is an accepted outcome
            }
        }
    }

    @Test func stallFileWithASmallScreenStillTerminates() throws {
        // Given the file that once looped forever (a zero-width frame), with its 6727x65351 screen shrunk to
        // 16x16 so that its frame data is actually reached
        var data = try Data(
            contentsOf: corpusURL("gif/stall").appendingPathComponent("issue-101-infinite-empty-loop.gif"))
        data.replaceSubrange(6..<10, with: [16, 0, 16, 0])

        // Then decoding ends, with frames or a typed error
        do {
            let container = try GIFDecoder().decode(data, options: DecodingOptions())
            #expect(container.image.size == PixelSize(width: 16, height: 16))
        } catch is CodecError {}
    }

    @Test func everyTruncationOfTheSamplesDecodesOrThrows() throws {
        // Given the small samples cut at 48 points each
        for url in try corpusFiles("gif/samples", ext: "gif") {
            let data = try Data(contentsOf: url)
            guard data.count < 20_000 else { continue }
            for step in 1..<48 {
                let cut = Data(data.prefix(data.count * step / 48))
                // Then each decodes (complete frames) or fails with a typed error
                do {
                    _ = try GIFDecoder().decode(cut, options: DecodingOptions())
                } catch is CodecError {}
            }
        }
    }
}
