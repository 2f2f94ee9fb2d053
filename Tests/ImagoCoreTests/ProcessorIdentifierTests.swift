import Testing

@testable import ImagoCore

@Suite struct ProcessorIdentifierTests {
    /// Every processor with each parameter varied once: no two may share an identifier.
    static let variants: [any ImageProcessing] = [
        .resize(width: 256, height: 256), .resize(width: 256, height: 255), .resize(width: 255, height: 256),
        .resize(width: 256, height: 256, mode: .aspectFill), .resize(width: 256, height: 256, mode: .exact),
        .resize(width: 256, height: 256, allowsUpscaling: true),
        .crop(x: 0, y: 0, width: 10, height: 10), .crop(x: 1, y: 0, width: 10, height: 10),
        .crop(x: 0, y: 1, width: 10, height: 10), .crop(x: 0, y: 0, width: 11, height: 10),
        .crop(x: 0, y: 0, width: 10, height: 11), .crop(x: 10, y: 10, width: 0, height: 0),
        .roundedCorners(radius: 8), .roundedCorners(radius: 8.5), .roundedCorners(radius: 80),
        .roundedCorners(radius: 8, border: .init(color: RGBA(r: 0, g: 0, b: 0), width: 1)),
        .roundedCorners(radius: 8, border: .init(color: RGBA(r: 0, g: 0, b: 0), width: 2)),
        .roundedCorners(radius: 8, border: .init(color: RGBA(r: 0, g: 0, b: 1), width: 1)),
        .circle(), .circle(border: .init(color: RGBA(r: 255, g: 255, b: 255), width: 1)),
        .circle(border: .init(color: RGBA(r: 255, g: 255, b: 255, a: 254), width: 1)),
        .gaussianBlur(radius: 1), .gaussianBlur(radius: 2), .gaussianBlur(radius: 1.5), .gaussianBlur(radius: 0.1),
        .gaussianBlur(radius: 0.10000000000000002), .gaussianBlur(radius: 20),
        .rotate(degrees: 90), .rotate(degrees: 180), .rotate(degrees: 270), .rotate(degrees: 0), .rotate(degrees: 45),
        .flip(.horizontal), .flip(.vertical),
        .grayscale(), .grayscale(luma: .rec709),
        .tint(RGBA(r: 1, g: 2, b: 3)), .tint(RGBA(r: 1, g: 2, b: 4)), .tint(RGBA(r: 1, g: 2, b: 3, a: 128)),
        .tint(RGBA(r: 1, g: 2, b: 3), blend: .multiply),
        .sharpen(), .sharpen(sigma: 2), .sharpen(amount: 2), .pixelate(), .pixelate(size: 9),
        .canvas(width: 10, height: 10, x: 0, y: 0), .canvas(width: 11, height: 10, x: 0, y: 0),
        .canvas(width: 10, height: 11, x: 0, y: 0), .canvas(width: 10, height: 10, x: 1, y: 0),
        .canvas(width: 10, height: 10, x: 0, y: 1),
        .canvas(width: 10, height: 10, x: 0, y: 0, fill: RGBA(r: 0, g: 0, b: 0)),
        .background(RGBA(r: 255, g: 255, b: 255)), .background(RGBA(r: 255, g: 255, b: 254)),
        .smartCrop(width: 10, height: 10), .smartCrop(width: 11, height: 10), .smartCrop(width: 10, height: 11),
        .trim(), .trim(threshold: 11), .trim(color: RGBA(r: 0, g: 0, b: 0)), .trim(equalHorizontal: true),
        .trim(equalVertical: true),
        .composition([.grayscale(), .flip(.vertical)]), .composition([.flip(.vertical), .grayscale()]),
        .composition([]), .anonymous(id: "app.sepia") { $0 },
    ]

    @Test func everyParameterChangeGivesADistinctIdentifier() {
        let ids = Self.variants.map(\.identifier)
        var seen: [String: Int] = [:]
        for (i, id) in ids.enumerated() {
            #expect(seen[id] == nil, "\(id) at \(i) repeats \(seen[id] ?? -1)")
            seen[id] = i
        }
    }

    @Test func identifiersAreStableStrings() {
        // These end up in cache keys on disk: changing one invalidates every cached variant.
        let expected: [(any ImageProcessing, String)] = [
            (.resize(width: 256, height: 256), "imago.resize?w=256&h=256&mode=fit&upscale=0"),
            (
                .resize(width: 64, height: 32, mode: .aspectFill, allowsUpscaling: true),
                "imago.resize?w=64&h=32&mode=fill&upscale=1"
            ),
            (.crop(x: -1, y: 2, width: 3, height: 4), "imago.crop?x=-1&y=2&w=3&h=4"),
            (.roundedCorners(radius: 8), "imago.roundedCorners?r=8"),
            (
                .roundedCorners(radius: 2.5, border: .init(color: RGBA(r: 255, g: 0, b: 10, a: 128), width: 1)),
                "imago.roundedCorners?r=2.5&border=1&color=#ff000a80"
            ),
            (.circle(), "imago.circle"),
            (.circle(border: .init(color: RGBA(r: 0, g: 0, b: 0), width: 3)), "imago.circle?border=3&color=#000000ff"),
            (.gaussianBlur(radius: 8), "imago.gaussianBlur?r=8"),
            (.gaussianBlur(radius: 0.1), "imago.gaussianBlur?r=0.1"),
            (.rotate(degrees: -90), "imago.rotate?deg=270"),
            (.rotate(degrees: 45), "imago.rotate?deg=45"),
            (.flip(.horizontal), "imago.flip?dir=h"),
            (.grayscale(), "imago.grayscale?luma=601"),
            (.tint(RGBA(r: 0, g: 122, b: 255), blend: .multiply), "imago.tint?color=#007affff&blend=multiply"),
            (.sharpen(sigma: 0.5), "imago.sharpen?sigma=0.5&amount=1"),
            (.pixelate(size: 12), "imago.pixelate?size=12"),
            (.canvas(width: 5, height: 6, x: -1, y: 2), "imago.canvas?w=5&h=6&x=-1&y=2&fill=#00000000"),
            (.background(RGBA(r: 255, g: 255, b: 255)), "imago.background?color=#ffffffff"),
            (.smartCrop(width: 1200, height: 630), "imago.smartCrop?w=1200&h=630"),
            (.trim(), "imago.trim?t=10&color=auto&eh=0&ev=0"),
            (
                .trim(threshold: 3, color: RGBA(r: 1, g: 2, b: 3), equalVertical: true),
                "imago.trim?t=3&color=#010203ff&eh=0&ev=1"
            ),
        ]
        for (processor, id) in expected { #expect(processor.identifier == id) }
    }

    @Test func equalTurnsShareAnIdentifier() {
        #expect(ImageProcessors.Rotate(degrees: -90).identifier == ImageProcessors.Rotate(degrees: 270).identifier)
        #expect(ImageProcessors.Rotate(degrees: 450).identifier == ImageProcessors.Rotate(degrees: 90).identifier)
    }

    @Test func errorsSayWhatToPassInstead() {
        let errors: [ImageProcessors.Error] = [
            .invalidTargetSize(width: 0, height: 5), .invalidCropSize(width: 0, height: 1),
            .cropOutsideImage(x: 9, y: 9, width: 1, height: 1, image: PixelSize(width: 2, height: 2)),
            .invalidRadius(processor: "blur", radius: -1), .invalidBorderWidth(-1), .invalidRotation(degrees: 45),
        ]
        for error in errors { #expect(error.description.contains("pass")) }
    }
}
