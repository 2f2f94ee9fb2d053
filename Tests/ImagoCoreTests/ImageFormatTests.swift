import Foundation
import Testing

@testable import ImagoCore

@Suite struct ImageFormatTests {
    @Test func sniffsEveryFormatFromItsMagicBytes() {
        let cases: [([UInt8], ImageFormat)] = [
            ([0xFF, 0xD8, 0xFF, 0xE0], .jpeg),
            ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8), .png),
            (Array("GIF89a".utf8), .gif),
            (Array("GIF87a".utf8), .gif),
            (Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8 ".utf8), .webp),
            ([0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8), .heic),
            ([0, 0, 0, 0x18] + Array("ftypmif1".utf8) + [0, 0, 0, 0] + Array("mif1avif".utf8), .avif),
            ([0, 0, 0, 0x14] + Array("ftypavif".utf8) + [0, 0, 0, 0] + Array("avif".utf8), .avif),
            ([0, 0, 0, 0x14] + Array("ftypmif1".utf8) + [0, 0, 0, 0] + Array("mif1".utf8), .heif),
            ([0xFF, 0x0A, 0x00], .jpegXL),
            ([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A], .jpegXL),
            (Array("BM".utf8) + [UInt8](repeating: 0, count: 30), .bmp),
            ([0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0] + [UInt8](repeating: 0, count: 8), .ico),
            ([0, 0, 2, 0, 1, 0, 32, 32, 0, 0, 1, 0, 1, 0] + [UInt8](repeating: 0, count: 8), .ico),
            ([0, 0, 1, 0, 0, 0, 16, 16, 0, 0, 1, 0, 32, 0] + [UInt8](repeating: 0, count: 8), .unknown),
            ([0x49, 0x49, 0x2A, 0x00], .tiff),
            (Array("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8), .svg),
            (Array("hello world".utf8), .unknown),
            ([], .unknown),
        ]
        for (bytes, expected) in cases {
            #expect(ImageFormat(sniffing: Data(bytes)) == expected, "bytes \(bytes.prefix(12))")
        }
    }

    @Test func tellsAnimatedPNGFromStillPNG() {
        func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let n = UInt32(payload.count)
            return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + Array(type.utf8)
                + payload + [0, 0, 0, 0]
        }
        let sig: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let ihdr = chunk("IHDR", [UInt8](repeating: 0, count: 13))
        let apng = sig + ihdr + chunk("acTL", [0, 0, 0, 2, 0, 0, 0, 0]) + chunk("IDAT", [1, 2])
        let png = sig + ihdr + chunk("IDAT", [1, 2]) + chunk("acTL", [0, 0, 0, 2, 0, 0, 0, 0])
        #expect(ImageFormat(sniffing: Data(apng)) == .apng)
        #expect(ImageFormat(sniffing: Data(png)) == .png)
    }

    @Test func sniffsTheCorpusFormatsFolder() throws {
        let folder = corpusURL("formats")
        let expected: [String: ImageFormat] = [
            "TestJFIF.jpg": .jpeg, "TestImage.png": .png, "TestImageAnimated.apng": .apng,
            "TestImage.gif": .gif, "TestImageStatic.webp": .webp, "TestImage.heic": .heic,
            "TestImage.avif": .avif, "TestImage.jxl": .jpegXL, "TestImage.svg": .svg,
        ]
        for (name, format) in expected {
            let url = folder.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            #expect(ImageFormat(sniffing: try Data(contentsOf: url)) == format, "\(name)")
        }
    }
}
