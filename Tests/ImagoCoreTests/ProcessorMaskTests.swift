import Foundation
import Testing

@testable import ImagoCore

/// The area of pixel (x, y) inside a rounded rectangle covering the whole `w` × `h` image, by 32×32 supersampling.
private func referenceCoverage(x: Int, y: Int, w: Int, h: Int, radius r: Double) -> Double {
    var inside = 0
    let n = 32
    for sy in 0..<n {
        for sx in 0..<n {
            let px = Double(x) + (Double(sx) + 0.5) / Double(n)
            let py = Double(y) + (Double(sy) + 0.5) / Double(n)
            // Distance to the nearest corner centre, only where the point lies in a corner square.
            let cx = px < r ? r : (px > Double(w) - r ? Double(w) - r : px)
            let cy = py < r ? r : (py > Double(h) - r ? Double(h) - r : py)
            if (px - cx) * (px - cx) + (py - cy) * (py - cy) <= r * r { inside += 1 }
        }
    }
    return Double(inside) / Double(n * n)
}

@Suite struct ProcessorRoundedCornersTests {
    let color = RGBA(r: 200, g: 100, b: 50, a: 255)

    @Test func cornersBecomeTransparentWithAntiAliasedEdges() throws {
        // Given a 40x30 opaque image
        let image = try TestImages.uniform(40, 30, color)
        // When its corners are rounded with radius 10
        let out = try ImageProcessors.RoundedCorners(radius: 10).process(image)
        // Then each pixel's alpha follows its area inside the shape, fully inside pixels are untouched
        var partial = 0
        for y in 0..<30 {
            for x in 0..<40 {
                let area = referenceCoverage(x: x, y: y, w: 40, h: 30, radius: 10)
                let p = out[pixel: x, y]
                if area == 1 { #expect(p == color, "(\(x), \(y))") }
                #expect(abs(Double(p.a) - 255 * area) <= 24, "(\(x), \(y)) alpha \(p.a), area \(area)")
                if p.a > 0 && p.a < 255 {
                    partial += 1
                    #expect(RGBA(r: p.r, g: p.g, b: p.b) == color, "edge pixels keep their colour")
                }
            }
        }
        #expect(out[pixel: 0, 0].a == 0)
        #expect(out[pixel: 39, 29].a == 0)
        #expect(out[pixel: 20, 0] == color, "straight edges are not cut")
        #expect(partial >= 4 * 8, "every corner has a band of partially transparent pixels")
    }

    @Test func theFourCornersAreMirrorImages() throws {
        let out = try ImageProcessors.RoundedCorners(radius: 7.5).process(try TestImages.uniform(21, 17, color))
        for y in 0..<17 {
            for x in 0..<21 {
                #expect(out[pixel: x, y] == out[pixel: 20 - x, y])
                #expect(out[pixel: x, y] == out[pixel: x, 16 - y])
            }
        }
    }

    @Test func borderIsPaintedInsideTheEdge() throws {
        // Given a red image and an opaque blue 2-pixel border with square corners
        let red = RGBA(r: 255, g: 0, b: 0)
        let blue = RGBA(r: 0, g: 0, b: 255)
        let image = try TestImages.uniform(10, 8, red)
        let out = try ImageProcessors.RoundedCorners(radius: 0, border: .init(color: blue, width: 2)).process(image)
        // Then the outer two rings are blue and the rest is red
        for y in 0..<8 {
            for x in 0..<10 {
                let inBorder = x < 2 || y < 2 || x >= 8 || y >= 6
                #expect(out[pixel: x, y] == (inBorder ? blue : red), "(\(x), \(y))")
            }
        }
    }

    @Test func halfPixelBorderBlendsHalfway() throws {
        let image = try TestImages.uniform(6, 6, RGBA(r: 0, g: 0, b: 0))
        let out = try ImageProcessors.RoundedCorners(
            radius: 0, border: .init(color: RGBA(r: 200, g: 0, b: 0), width: 0.5)
        )
        .process(image)
        #expect(out[pixel: 0, 3] == RGBA(r: 100, g: 0, b: 0))
        #expect(out[pixel: 1, 3] == RGBA(r: 0, g: 0, b: 0))
    }

    @Test func grayInputGainsAlpha() throws {
        let gray = try TestImages.gray(12, 12) { _, _ in 90 }
        let out = try ImageProcessors.RoundedCorners(radius: 4).process(gray)
        #expect(out.format == .rgba8)
        #expect(out[pixel: 0, 0].a == 0)
        #expect(out[pixel: 6, 6] == RGBA(r: 90, g: 90, b: 90))
    }

    @Test func zeroRadiusWithoutBorderIsIdentity() throws {
        let image = try TestImages.uniform(5, 5, color)
        #expect(try ImageProcessors.RoundedCorners(radius: 0).process(image) == image)
    }

    @Test(arguments: [-1, Double.nan, Double.infinity])
    func rejectsAnInvalidRadius(radius: Double) throws {
        let image = try TestImages.uniform(5, 5, color)
        #expect(throws: ImageProcessors.Error.self) {
            try ImageProcessors.RoundedCorners(radius: radius).process(image)
        }
        #expect(throws: ImageProcessors.Error.invalidBorderWidth(-2)) {
            try ImageProcessors.RoundedCorners(radius: 1, border: .init(color: color, width: -2)).process(image)
        }
    }
}

@Suite struct ProcessorCircleTests {
    @Test func cropsTheCentredSquareAndMasksACircle() throws {
        // Given a 40x30 opaque image whose red channel encodes the column
        let image = try TestImages.rgba(40, 30) { x, y in RGBA(r: UInt8(x), g: UInt8(y), b: 9) }
        // When made circular
        let out = try ImageProcessors.Circle().process(image)
        // Then it is the centred 30x30 square (columns 5…34) masked to a circle of radius 15
        #expect(out.size == PixelSize(width: 30, height: 30))
        #expect(out[pixel: 15, 15] == image[pixel: 20, 15])
        for (x, y) in [(0, 0), (29, 0), (0, 29), (29, 29), (2, 2)] { #expect(out[pixel: x, y].a == 0) }
        for (x, y) in [(15, 0), (0, 15), (29, 15), (15, 29)] { #expect(out[pixel: x, y].a > 100) }
        var total = 0.0
        for y in 0..<30 {
            for x in 0..<30 {
                let p = out[pixel: x, y]
                total += Double(p.a)
                let area = referenceCoverage(x: x, y: y, w: 30, h: 30, radius: 15)
                #expect(abs(Double(p.a) - 255 * area) <= 24, "(\(x), \(y))")
                if p.a > 0 { #expect(p.r == UInt8(x + 5) && p.g == UInt8(y)) }
            }
        }
        // And the opaque area matches π r² within half a percent
        #expect(abs(total / 255 - Double.pi * 225) / (Double.pi * 225) < 0.005)
    }

    @Test func portraitImagesAreCroppedVertically() throws {
        let image = try TestImages.rgba(10, 16) { x, y in RGBA(r: UInt8(x), g: UInt8(y), b: 0) }
        let out = try ImageProcessors.Circle().process(image)
        #expect(out.size == PixelSize(width: 10, height: 10))
        #expect(out[pixel: 5, 5] == image[pixel: 5, 8])
    }

    @Test func borderFollowsTheCircle() throws {
        let white = RGBA(r: 255, g: 255, b: 255)
        let image = try TestImages.uniform(20, 20, RGBA(r: 0, g: 0, b: 0))
        let out = try ImageProcessors.Circle(border: .init(color: white, width: 2)).process(image)
        // The top row's pixel is cut by the curve a little (its area is about 0.98), but all border
        let top = out[pixel: 10, 0]
        #expect(RGBA(r: top.r, g: top.g, b: top.b) == white && top.a >= 240)
        #expect(out[pixel: 10, 1] == white)
        #expect(out[pixel: 10, 3] == RGBA(r: 0, g: 0, b: 0))
        #expect(out[pixel: 10, 10] == RGBA(r: 0, g: 0, b: 0))
        #expect(out[pixel: 0, 0].a == 0)
    }
}
