import Foundation
import Imago

/// The images the demo serves: the Kodak photos and the decodable files of the corpus's formats folder when
/// `../shared/corpus` is present, else gradients it draws and encodes itself.
struct DemoGallery {
    struct Item: Sendable {
        /// The path it is served at (`/gallery/kodak-01.png`).
        let path: String
        let data: Data
        let contentType: String
    }

    let items: [Item]
    /// Where the images came from, for the header line.
    let origin: String

    /// Files of `formats/` that the shipped codecs decode, one of each kind (still, animated, large).
    static let formatFiles = [
        "TestJFIF.jpg", "TestImage.jpg", "MonochromeTestImage.jpg", "TestImage.png", "IndexedPNG.png",
        "TestImage.gif", "TestImageAnimated.webp", "TestImageStatic.webp",
    ]

    /// Builds the gallery from `corpus` (a `shared/corpus` folder) or, when it is missing, from generated images;
    /// at most `limit` items.
    static func make(corpus: URL?, limit: Int?, encoders: ImageEncoderRegistry) throws -> DemoGallery {
        var items: [Item] = []
        if let corpus, FileManager.default.fileExists(atPath: corpus.appendingPathComponent("kodak").path) {
            let kodak = corpus.appendingPathComponent("kodak")
            let names = try FileManager.default.contentsOfDirectory(atPath: kodak.path).filter { $0.hasSuffix(".png") }
                .sorted()
            for name in names {
                let data = try Data(contentsOf: kodak.appendingPathComponent(name))
                items.append(Item(path: "/gallery/kodak-\(name)", data: data, contentType: "image/png"))
            }
            for name in formatFiles {
                let url = corpus.appendingPathComponent("formats/\(name)")
                guard let data = try? Data(contentsOf: url) else { continue }
                items.append(Item(path: "/gallery/\(name)", data: data, contentType: contentType(for: name)))
            }
            if let limit { items = Array(items.prefix(limit)) }
            return DemoGallery(items: items, origin: "\(corpus.path) (Kodak photos and the formats folder)")
        }
        let count = limit ?? 24
        for i in 0..<count {
            let image = try gradient(index: i, width: 384, height: 256)
            let format: ImageFormat = i % 3 == 0 ? .png : (i % 3 == 1 ? .jpeg : .webp)
            let data = try encoders.encode(image, as: format)
            items.append(
                Item(
                    path: "/gallery/generated-\(i).\(format.fileExtension)", data: data,
                    contentType: "image/\(format.rawValue)"))
        }
        return DemoGallery(items: items, origin: "generated (no ../shared/corpus beside the project)")
    }

    static func contentType(for name: String) -> String {
        switch (name as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        default: "application/octet-stream"
        }
    }

    /// A colourful test image: a diagonal gradient whose hue depends on `index`, with a circle in the middle.
    static func gradient(index: Int, width: Int, height: Int) throws -> PixelBuffer {
        let hue = Double(index % 12) / 12
        return try PixelBuffer(width: width, height: height) { raw in
            for y in 0..<height {
                for x in 0..<width {
                    let t = Double(x + y) / Double(width + height)
                    let dx = Double(x - width / 2)
                    let dy = Double(y - height / 2)
                    let inside = dx * dx + dy * dy < Double(height * height) / 9
                    let i = (y * width + x) * 4
                    raw[i] = UInt8(255 * (inside ? 1 - t : abs(sin((hue + t) * .pi))))
                    raw[i + 1] = UInt8(255 * abs(sin((hue + t + 0.33) * .pi)))
                    raw[i + 2] = UInt8(255 * (inside ? t : abs(sin((hue + t + 0.66) * .pi))))
                    raw[i + 3] = 255
                }
            }
        }
    }
}
