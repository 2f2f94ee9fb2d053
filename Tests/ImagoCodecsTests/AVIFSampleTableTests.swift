import CDav1dQuiet
import Foundation
import Glibc
import ImagoCodecs
import ImagoCore
import Testing

/// AVIF sequences whose sample tables declare more frames than ``DecodingOptions/frameLimit``: libavif 0.11 builds
/// its table of samples while parsing, at far more bytes a sample than the file spends on it (RELIABILITY.md §48),
/// so the count is refused before the table is built, whether every frame or only the first is wanted.
@Suite struct AVIFSampleTableTests {
    /// A 16×16 AV1 key frame (Imago's encoder) and its `av1C` box, taken from a still.
    static let keyFrame: (configuration: [UInt8], payload: [UInt8], still: PixelBuffer) = {
        var image = try! PixelBuffer(width: 16, height: 16)
        for y in 0..<16 {
            for x in 0..<16 { image[pixel: x, y] = RGBA(r: UInt8(x * 16), g: UInt8(y * 16), b: 90, a: 255) }
        }
        let still = [UInt8](try! AVIFEncoder(speed: 10).encode(image, options: EncodingOptions(quality: 0.5)))
        let decoded = try! AVIFDecoder().decode(Data(still), options: DecodingOptions()).image
        return (box("av1C", in: still), Array(box("mdat", in: still).dropFirst(8)), decoded)
    }()

    /// An `avis` file of one track whose `frames` samples all are the key frame (one chunk each, 100 ms each):
    /// 4 bytes of `stco` a sample. With `trailing`, each sample also holds those bytes after the frame.
    static func sequence(frames: Int, trailing: [UInt8] = []) -> Data {
        let configuration = keyFrame.configuration
        let payload = keyFrame.payload + trailing
        let matrix = [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000].flatMap { be32(UInt32($0)) }
        let duration = be32(UInt32(frames * 100))
        let ftyp = box("ftyp", Array("avis".utf8) + zeros(4) + Array("mif1miafavismsf1".utf8))
        func moov(_ mdatStart: UInt32) -> [UInt8] {
            let mvhd = fullBox(
                "mvhd",
                zeros(8) + be32(1000) + duration + be32(0x0001_0000) + [1, 0] + zeros(10) + matrix + zeros(24)
                    + be32(2))
            let tkhd = fullBox(
                "tkhd", zeros(8) + be32(1) + zeros(4) + duration + zeros(16) + matrix + be32(16 << 16) + be32(16 << 16),
                flags: 3)
            let mdhd = fullBox("mdhd", zeros(8) + be32(1000) + duration + [0x55, 0xC4] + zeros(2))
            let hdlr = fullBox("hdlr", zeros(4) + Array("pict".utf8) + zeros(13))
            let entry = box(
                "av01",
                zeros(6) + [0, 1] + zeros(16) + [0, 16, 0, 16] + be32(0x0048_0000) + be32(0x0048_0000) + zeros(4)
                    + [0, 1] + zeros(32) + [0, 0x18, 0xFF, 0xFF] + configuration)
            let stbl = box(
                "stbl",
                fullBox("stsd", be32(1) + entry) + fullBox("stts", be32(1) + be32(UInt32(frames)) + be32(100))
                    + fullBox("stsc", be32(1) + be32(1) + be32(1) + be32(1))
                    + fullBox("stsz", be32(UInt32(payload.count)) + be32(UInt32(frames)))
                    + fullBox("stco", be32(UInt32(frames)) + Array(repeating: be32(mdatStart), count: frames).joined()))
            let dinf = box("dinf", fullBox("dref", be32(1) + fullBox("url ", [], flags: 1)))
            let minf = box("minf", fullBox("vmhd", zeros(8), flags: 1) + dinf + stbl)
            return box("moov", mvhd + box("trak", tkhd + box("mdia", mdhd + hdlr + minf)))
        }
        let mdatStart = UInt32(ftyp.count + moov(0).count + 8)
        return Data(ftyp + moov(mdatStart) + box("mdat", payload))
    }

    @Test func aWrittenSequenceDecodesFrameByFrame() throws {
        // Given a sequence of 3 samples, each the same key frame
        let data = Self.sequence(frames: 3)

        // When it is decoded
        let container = try AVIFDecoder().decode(data, options: DecodingOptions())

        // Then every frame is the still's picture, 100 ms each
        #expect(container.frames.count == 3)
        #expect(container.frames.map(\.duration) == Array(repeating: .milliseconds(100), count: 3))
        for frame in container.frames { #expect(frame.buffer == Self.keyFrame.still) }
    }

    @Test(arguments: [false, true])
    func aSampleTableLongerThanTheFrameLimitIsRefused(firstFrameOnly: Bool) throws {
        let options = DecodingOptions(frameLimit: 40, decodesFirstFrameOnly: firstFrameOnly)

        // Given sequences of exactly the limit's frames and of one more
        // When they are decoded, Then the first decodes (all 40 frames, or the first)
        let atTheLimit = try AVIFDecoder().decode(Self.sequence(frames: 40), options: options)
        #expect(atTheLimit.frames.count == (firstFrameOnly ? 1 : 40))
        #expect(atTheLimit.image == Self.keyFrame.still)
        // And the longer one is refused with the typed error, even when only its first frame is wanted
        #expect(throws: CodecError.tooManyFrames(limit: 40)) {
            try AVIFDecoder().decode(Self.sequence(frames: 41), options: options)
        }
    }

    @Test func dav1dWritesNothingToStandardError() throws {
        // Given dav1d's settings as libavif gets them, through the dynamic linker: the logger is off
        #expect(cdav1d_quiet_is_active() == 1)

        // And a sequence whose samples end in reserved OBUs, each of which dav1d's default logger reports on stderr
        let data = Self.sequence(frames: 5, trailing: [0x00, 0x00, 0x00, 0x00])

        // When it is decoded with the process's stderr sent to a file
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dav1d-stderr-\(getpid()).txt").path
        defer { unlink(path) }
        let file = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
        try #require(file >= 0)
        fflush(nil)
        let saved = dup(2)
        dup2(file, 2)
        let container = try? AVIFDecoder().decode(data, options: DecodingOptions())
        fflush(nil)
        dup2(saved, 2)
        close(saved)
        close(file)

        // Then the frames decode and dav1d wrote nothing (other tests' output, if any ran meanwhile, is not dav1d's)
        #expect(container?.frames.count == 5)
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!written.contains("OBU"), "\(written)")
    }

    // MARK: Writing boxes

    private static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        be32(UInt32(8 + body.count)) + Array(type.utf8) + body
    }

    private static func fullBox(_ type: String, _ body: [UInt8], flags: UInt8 = 0) -> [UInt8] {
        box(type, [0, 0, 0, flags] + body)
    }

    private static func be32(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
    }

    private static func zeros(_ count: Int) -> [UInt8] { Array(repeating: 0, count: count) }

    /// The first box of `type` in `file`, whole (the encoder's small files hold no look-alike of its type).
    private static func box(_ type: String, in file: [UInt8]) -> [UInt8] {
        let name = Array(type.utf8)
        let start = (4..<(file.count - 4)).first { Array(file[$0..<$0 + 4]) == name }!
        let size = file[start - 4..<start].reduce(0) { $0 << 8 | Int($1) }
        return Array(file[start - 4..<start - 4 + size])
    }
}
