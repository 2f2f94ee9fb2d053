import Foundation
import ImagoCodecs
import ImagoCore
import Testing

/// ``ColorPolicy/keep`` hands the profile on and the encoders write it back byte-identical; broken profiles are
/// ignored (pixels as stored), never a crash.
@Suite struct ColorProfileRoundTripTests {
    let registry = ImageDecoderRegistry(ImagoCodecs.decoders)

    func decode(_ data: Data, _ policy: ColorPolicy) throws -> ImageContainer {
        var options = DecodingOptions()
        options.colorPolicy = policy
        return try registry.decode(data, options: options)
    }

    func p3Profile() throws -> ColorProfile {
        let kept = try decode(corpusData("icc/gen-kodim03-displayp3-v4.jpg"), .keep)
        return try #require(kept.colorProfile)
    }

    @Test(arguments: ["jpeg", "png", "webp", "avif", "jxl"])
    func keepWritesTheProfileBackByteIdentical(_ formatName: String) throws {
        // Given a Display P3 PNG decoded with `keep`
        let original = try corpusData("icc/gen-kodim03-displayp3-v4.png")
        let kept = try decode(original, .keep)
        let profile = try #require(kept.colorProfile)
        #expect(profile.data.count > 100)
        // When it is encoded with its profile and decoded again
        let format = ImageFormat(rawValue: formatName)
        let encoder = try #require(ImagoCodecs.encoders.first { $0.format == format })
        let encoded = try encoder.encode(
            kept.image, options: EncodingOptions(quality: 0.95, isLossless: true, colorProfile: profile))
        let again = try decode(encoded, .keep)
        // Then the profile is byte-identical, and a lossless round trip converts to the same pixels
        #expect(again.colorProfile?.data == profile.data)
        #expect(again.colorProfile?.description == profile.description)
        if format != .jpeg {
            #expect(try decode(encoded, .convertToSRGB).image == decode(original, .convertToSRGB).image)
        }
    }

    @Test func lossyJPEGXLKeepsTheProfileByteIdenticalAndItsColours() throws {
        // Given a Display P3 PNG decoded with `keep`
        let original = try corpusData("icc/gen-kodim03-displayp3-v4.png")
        let kept = try decode(original, .keep)
        let profile = try #require(kept.colorProfile)
        // When it is encoded as lossy JPEG XL with its profile
        let encoded = try JPEGXLEncoder(effort: 3).encode(
            kept.image, options: EncodingOptions(quality: 0.9, colorProfile: profile))
        // Then decoding with `keep` gives the profile byte for byte and pixels still in P3 (close to the input),
        // and converting gives the colours of the original converted to sRGB
        let again = try decode(encoded, .keep)
        #expect(again.colorProfile?.data == profile.data)
        #expect(referenceError(again.image, kept.image) < 2.5)
        let converted = try decode(encoded, .convertToSRGB).image
        #expect(referenceError(converted, try decode(original, .convertToSRGB).image) < 2.5)
        #expect(referenceError(converted, kept.image) > 2.5)  // really converted: P3 values differ from sRGB
    }

    @Test func aProfileOfManySegmentsIsReassembledInOrder() throws {
        // Given a JPEG carrying a 200 KB profile (four APP2 segments): the P3 profile padded at the end
        var data = try p3Profile().data
        data.append(Data(repeating: 0, count: 200_000))
        let image = try PixelBuffer(width: 8, height: 8, format: .rgba8)
        let jpeg = try JPEGEncoder().encode(image, options: EncodingOptions(colorProfile: ColorProfile(data: data)))
        // When it is decoded with `keep`, Then the profile comes back whole
        #expect(try decode(jpeg, .keep).colorProfile?.data == data)
    }

    /// The raw (ignore) decode and the converted decode of `encoded` are identical: the profile was ignored.
    func expectIgnored(_ encoded: Data, _ what: String = "", sourceLocation: SourceLocation = #_sourceLocation) throws {
        let converted = try decode(encoded, .convertToSRGB)
        let ignored = try decode(encoded, .ignore)
        #expect(converted.image == ignored.image, "\(what)", sourceLocation: sourceLocation)
        #expect(try decode(encoded, .keep).colorProfile == nil, "\(what)", sourceLocation: sourceLocation)
    }

    static func brokenProfiles(from p3: Data) -> [(String, Data)] {
        var garbageTags = p3
        for i in stride(from: 132, to: min(garbageTags.count, 400), by: 1) { garbageTags[i] = 0xEE }
        return [
            ("garbage", Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7919) })),
            ("truncated", p3.prefix(p3.count / 2)),
            ("header only", p3.prefix(128)),
            ("garbage tag table", garbageTags),
            ("huge", Data(repeating: 0x41, count: 9 << 20)),
        ]
    }

    @Test func brokenProfilesAreIgnoredInEveryFormat() throws {
        let p3 = try p3Profile().data
        let image = try PNGDecoder().decode(corpusData("kodak/03.png"), options: DecodingOptions()).image
            .resampled(to: PixelSize(width: 96, height: 64))
        for (name, profile) in Self.brokenProfiles(from: p3) {
            for encoder in ImagoCodecs.encoders {
                // Given a file of each format carrying the broken profile
                let encoded: Data
                do {
                    encoded = try encoder.encode(
                        image, options: EncodingOptions(colorProfile: ColorProfile(data: profile)))
                } catch {
                    Issue.record("\(name) \(encoder.format): could not embed: \(error)")
                    continue
                }
                // When it is decoded, Then the profile is ignored (pixels as stored) and nothing fails
                try expectIgnored(encoded, "\(name) in \(encoder.format)")
            }
        }
    }

    @Test func aCMYKProfileOnAnRGBImageIsIgnored() throws {
        // Given an RGB JPEG carrying the SWOP CMYK profile of a corpus file
        let cmyk = try #require(
            try Self.iccProfile(ofJPEG: try corpusData("icc/sharp-Channel_digital_image_CMYK_color.jpg")))
        let image = try PixelBuffer(width: 16, height: 16, format: .rgba8)
        let jpeg = try JPEGEncoder().encode(image, options: EncodingOptions(colorProfile: ColorProfile(data: cmyk)))
        // Then it is ignored
        try expectIgnored(jpeg)
    }

    @Test func brokenSegmentSequencesAreIgnored() throws {
        // Given a JPEG whose two APP2 segments both claim to be number 1
        let p3 = try p3Profile().data
        var data = p3
        data.append(Data(repeating: 0, count: 70_000))
        let image = try PixelBuffer(width: 8, height: 8, format: .rgba8)
        var jpeg = [UInt8](
            try JPEGEncoder().encode(image, options: EncodingOptions(colorProfile: ColorProfile(data: data))))
        let marker: [UInt8] = Array("ICC_PROFILE".utf8) + [0, 2, 2]
        let at = try #require((0..<(jpeg.count - marker.count)).first { Array(jpeg[$0..<$0 + marker.count]) == marker })
        jpeg[at + 12] = 1
        // Then the profile is ignored
        try expectIgnored(Data(jpeg))
    }

    @Test func aCorruptICCPStreamIsIgnored() throws {
        // Given a PNG whose iCCP zlib stream is cut short (CRC fixed so that libpng reads on)
        let image = try PixelBuffer(width: 8, height: 8, format: .rgba8)
        let png = [UInt8](try PNGEncoder().encode(image, options: EncodingOptions(colorProfile: p3Profile())))
        let length = Int(png[33]) << 24 | Int(png[34]) << 16 | Int(png[35]) << 8 | Int(png[36])
        var corrupted = Array(png[0..<33])
        var typeAndData = Array(png[37..<(41 + length)])
        typeAndData.removeLast(typeAndData.count / 2)
        let crc = Self.crc32(typeAndData)
        corrupted += Self.bigEndian(UInt32(typeAndData.count - 4)) + typeAndData + Self.bigEndian(crc)
        corrupted += png[(45 + length)...]
        try expectIgnored(Data(corrupted))
    }

    /// The APP2 profile bytes of a JPEG, read directly (CMYK files are converted even under `keep`, so the
    /// decoder does not hand theirs on).
    static func iccProfile(ofJPEG data: Data) throws -> Data? {
        let bytes = [UInt8](data)
        var profile = Data()
        var i = 2
        while i + 4 < bytes.count, bytes[i] == 0xFF, bytes[i + 1] != 0xDA {
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            if bytes[i + 1] == 0xE2, Array(bytes[(i + 4)..<(i + 15)]) == Array("ICC_PROFILE".utf8) {
                profile.append(contentsOf: bytes[(i + 18)..<(i + 2 + length)])
            }
            i += 2 + length
        }
        return profile.isEmpty ? nil : profile
    }

    static func bigEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)]
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
