import Testing

@testable import ImagoCore

@Suite struct OrientationTests {
    // A 3x2 gray image:   1 2 3
    //                     4 5 6
    let image = try! PixelBuffer(width: 3, height: 2, format: .gray8, bytes: [1, 2, 3, 4, 5, 6])

    @Test(arguments: [
        (ExifOrientation.up, 3, [1, 2, 3, 4, 5, 6] as [UInt8]),
        (.upMirrored, 3, [3, 2, 1, 6, 5, 4]),
        (.down, 3, [6, 5, 4, 3, 2, 1]),
        (.downMirrored, 3, [4, 5, 6, 1, 2, 3]),
        (.leftMirrored, 2, [1, 4, 2, 5, 3, 6]),
        (.right, 2, [4, 1, 5, 2, 6, 3]),
        (.rightMirrored, 2, [6, 3, 5, 2, 4, 1]),
        (.left, 2, [3, 6, 2, 5, 1, 4]),
    ])
    func turnsPixelsSoTheImageDisplaysUpright(orientation: ExifOrientation, width: Int, expected: [UInt8]) {
        let out = image.oriented(orientation)
        #expect(out.width == width)
        #expect(out.bytes == expected)
    }
}
