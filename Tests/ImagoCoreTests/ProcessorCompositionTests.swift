import Testing

@testable import ImagoCore

private struct Marker: Error, Equatable {}

@Suite struct ProcessorCompositionTests {
    let image = try! TestImages.gray(4, 3) { x, y in UInt8(10 * y + x) }

    @Test func appliesProcessorsInOrder() throws {
        // Given a crop and a rotation, which do not commute
        let crop = ImageProcessors.Crop(x: 0, y: 0, width: 2, height: 3)
        let rotate = ImageProcessors.Rotate(degrees: 90)
        // When composed both ways
        let cropThenRotate = try ImageProcessors.Composition([crop, rotate]).process(image)
        let rotateThenCrop = try ImageProcessors.Composition([rotate, crop]).process(image)
        // Then each equals its processors applied one after the other
        #expect(cropThenRotate == (try rotate.process(crop.process(image))))
        #expect(rotateThenCrop == (try crop.process(rotate.process(image))))
        #expect(cropThenRotate.size == PixelSize(width: 3, height: 2))
        #expect(rotateThenCrop.size == PixelSize(width: 2, height: 3))
        #expect(rotateThenCrop.bytes == [20, 10, 21, 11, 22, 12])
    }

    @Test func identifierJoinsTheMembersInOrder() {
        let list: [any ImageProcessing] = [.resize(width: 8, height: 8), .circle()]
        #expect(
            ImageProcessors.Composition(list).identifier
                == "imago.resize?w=8&h=8&mode=fit&upscale=0|imago.circle")
        #expect(ImageProcessors.Composition(list.reversed()).identifier.hasPrefix("imago.circle|"))
        #expect(ImageProcessors.identifier(of: list) == ImageProcessors.Composition(list).identifier)
    }

    @Test func emptyCompositionIsIdentity() throws {
        let empty = ImageProcessors.Composition([])
        #expect(try empty.process(image) == image)
        #expect(empty.identifier == "imago.identity")
    }

    @Test func stopsAtTheFirstError() {
        let failing = ImageProcessors.Anonymous(id: "test.fail") { _ in throw Marker() }
        let composition = ImageProcessors.Composition([
            .flip(.horizontal), failing, .crop(x: 99, y: 99, width: 1, height: 1),
        ])
        #expect(throws: Marker()) { try composition.process(image) }
    }

    @Test func anonymousRunsItsClosureUnderTheGivenIdentifier() throws {
        let invert = ImageProcessors.Anonymous(id: "app.invert?v=1") { buffer in
            try PixelBuffer(
                width: buffer.width, height: buffer.height, format: .gray8, bytes: buffer.bytes.map { 255 - $0 })
        }
        #expect(invert.identifier == "app.invert?v=1")
        #expect(try invert.process(image).bytes == image.bytes.map { 255 - $0 })
    }

    @Test func oneProcessorValueCanRunOnManyTasksAtOnce() async throws {
        // Given one composition shared by concurrent tasks (as the pipeline's work queues will)
        let image = try TestImages.rgba(64, 48) { x, y in RGBA(r: UInt8(x * 4), g: UInt8(y * 5), b: 90, a: 200) }
        let processor = ImageProcessors.Composition([
            .resize(width: 32, height: 32, mode: .aspectFill), .gaussianBlur(radius: 2), .circle(),
        ])
        let expected = try processor.process(image)
        // When eight tasks run it at the same time
        let results = try await withThrowingTaskGroup(of: PixelBuffer.self) { group in
            for _ in 0..<8 { group.addTask { try processor.process(image) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        // Then every result is the same as a lone run
        #expect(results.count == 8)
        for result in results { #expect(result == expected) }
    }

    @Test func staticMemberSugarReadsAsAList() throws {
        // The call site the pipeline will see
        let processors: [any ImageProcessing] = [
            .resize(width: 2, height: 2, mode: .aspectFill), .crop(x: 0, y: 0, width: 1, height: 2),
            .rotate(degrees: 180),
            .flip(.vertical), .grayscale(), .tint(RGBA(r: 1, g: 2, b: 3)), .gaussianBlur(radius: 1),
            .roundedCorners(radius: 1),
            .circle(), .composition([]), .anonymous(id: "x") { $0 },
        ]
        let out = try ImageProcessors.Composition(processors).process(image)
        #expect(out.size == PixelSize(width: 1, height: 1))
    }
}
