import CAVIF
import Foundation
import Testing

@testable import ImagoCodecs

/// Builds AVIF grids whose tiles each carry their own alpha item (the layout of `AVIFTileAlpha`), of any shape,
/// alpha depth and range: each tile and each alpha is coded losslessly by libavif (aom), and the items are put
/// together with `ISOBMFFBox`.
struct AVIFGridFixture {
    var rows: Int
    var columns: Int
    var tileWidth: Int
    var tileHeight: Int
    /// The grid's output size (at most the tiles' cover; the right column and bottom row are cut to it).
    var width: Int
    var height: Int
    var alphaDepth = 8
    var alphaIsLimited = false

    /// The alpha sample (at the alpha's depth) of tile `index` at (`x`, `y`) inside the tile.
    func alphaSample(tile index: Int, x: Int, y: Int) -> Int {
        let max = (1 << alphaDepth) - 1
        let low = alphaIsLimited ? 16 << (alphaDepth - 8) : 0
        let high = alphaIsLimited ? 235 << (alphaDepth - 8) : max
        return low + (index * 37 + x * 3 + y * 5) % (high - low + 1)
    }

    /// One coded item: its `ispe`, `av1C` and `pixi` boxes and its AV1 bytes.
    struct Item {
        var properties: [[UInt8]]
        var payload: [UInt8]
    }

    /// A lossless still of `width`×`height` coded by libavif: monochrome at `depth` with luma `luma(x, y)`, or
    /// 4:4:4 colour (8-bit, a mid grey with a gradient) when `luma` is nil; its item read back out of the file.
    static func code(width: Int, height: Int, depth: Int, isLimited: Bool, luma: ((Int, Int) -> Int)?) throws -> Item {
        let format = luma == nil ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV400
        let image = try #require(avifImageCreate(UInt32(width), UInt32(height), UInt32(depth), format))
        defer { avifImageDestroy(image) }
        image.pointee.yuvRange = isLimited ? AVIF_RANGE_LIMITED : AVIF_RANGE_FULL
        #expect(avifImageAllocatePlanes(image, avifPlanesFlags(AVIF_PLANES_YUV.rawValue)) == AVIF_RESULT_OK)
        let planes = luma == nil ? 3 : 1
        for plane in 0..<planes {
            let base = [image.pointee.yuvPlanes.0, image.pointee.yuvPlanes.1, image.pointee.yuvPlanes.2][plane]!
            let rowBytes = Int(
                [image.pointee.yuvRowBytes.0, image.pointee.yuvRowBytes.1, image.pointee.yuvRowBytes.2][plane])
            for y in 0..<height {
                for x in 0..<width {
                    let value = luma?(x, y) ?? (plane == 0 ? 100 + (x + y) % 50 : 128)
                    if depth > 8 {
                        (base + y * rowBytes).withMemoryRebound(to: UInt16.self, capacity: width) {
                            $0[x] = UInt16(value)
                        }
                    } else {
                        base[y * rowBytes + x] = UInt8(value)
                    }
                }
            }
        }
        let encoder = try #require(avifEncoderCreate())
        defer { avifEncoderDestroy(encoder) }
        encoder.pointee.minQuantizer = 0  // AVIF_QUANTIZER_LOSSLESS
        encoder.pointee.maxQuantizer = 0
        encoder.pointee.speed = 10
        var output = avifRWData()
        defer { avifRWDataFree(&output) }
        #expect(avifEncoderWrite(encoder, image, &output) == AVIF_RESULT_OK)
        let file = [UInt8](UnsafeBufferPointer(start: output.data, count: output.size))
        return try file.withUnsafeBytes { raw in
            let items = try #require(ISOBMFFItems(raw))
            let id = try #require(items.primaryID)
            let boxes = try ["ispe", "av1C", "pixi"].map { try #require(items.property($0, of: id)) }
            return Item(properties: boxes.map { items.bytes(of: $0) }, payload: try #require(items.data(of: id)))
        }
    }

    /// The whole file: item 1 the grid, 2…n+1 the colour tiles, n+2…2n+1 their alpha items.
    func file() throws -> Data {
        let count = rows * columns
        let colour = try (0..<count).map { _ in
            try Self.code(width: tileWidth, height: tileHeight, depth: 8, isLimited: false, luma: nil)
        }
        let alpha = try (0..<count).map { index in
            try Self.code(
                width: tileWidth, height: tileHeight, depth: alphaDepth, isLimited: alphaIsLimited,
                luma: { alphaSample(tile: index, x: $0, y: $1) })
        }
        var grid = ISOBMFFBox("grid")  // only its body is used: ImageGrid, 16-bit sizes
        grid.append(UInt8(0), UInt8(0), UInt8(rows - 1), UInt8(columns - 1), UInt16(width), UInt16(height))
        let payloads = [grid.bytes] + colour.map(\.payload) + alpha.map(\.payload)
        let ids = (1...payloads.count).map { UInt16($0) }

        var ipco = ISOBMFFBox("ipco")
        var gridISPE = ISOBMFFBox("ispe", version: 0)
        gridISPE.append(UInt32(width), UInt32(height))
        var auxC = ISOBMFFBox("auxC", version: 0)
        auxC.bytes += Array(AVIFTileAlpha.alphaType.utf8) + [0]
        // Properties: 1 grid ispe; 2-4 the colour tiles' ispe, av1C, pixi; 5-7 the alphas'; 8 auxC.
        ipco.bytes += gridISPE.encoded + colour[0].properties.joined() + alpha[0].properties.joined() + auxC.encoded
        var ipma = ISOBMFFBox("ipma", version: 0)
        ipma.append(UInt32(ids.count))
        for id in ids {
            let associations: [UInt8] =
                id == 1 ? [1] : Int(id) <= 1 + count ? [2, 0x83, 4] : [5, 0x86, 7, 8]
            ipma.append(id, UInt8(associations.count))
            ipma.bytes += associations
        }
        var iprp = ISOBMFFBox("iprp")
        iprp.bytes = ipco.encoded + ipma.encoded

        var iinf = ISOBMFFBox("iinf", version: 0)
        iinf.append(UInt16(ids.count))
        for id in ids {
            var infe = ISOBMFFBox("infe", version: 2)
            infe.append(id, UInt16(0))
            infe.bytes += Array((id == 1 ? "grid" : "av01").utf8) + [0]
            iinf.bytes += infe.encoded
        }
        var iref = ISOBMFFBox("iref", version: 0)
        var dimg = ISOBMFFBox("dimg")
        dimg.append(UInt16(1), UInt16(count))
        for tile in 0..<count { dimg.append(UInt16(2 + tile)) }
        iref.bytes += dimg.encoded
        for tile in 0..<count {
            var auxl = ISOBMFFBox("auxl")
            auxl.append(UInt16(2 + count + tile), UInt16(1), UInt16(2 + tile))
            iref.bytes += auxl.encoded
        }
        let (hdlr, pitm, ftyp) = (ISOBMFFBox.pictureHandler, ISOBMFFBox.primaryItem(1), ISOBMFFBox.avifFileType)

        func meta(mdatBody: Int) -> ISOBMFFBox {
            var iloc = ISOBMFFBox("iloc", version: 0)
            iloc.append(UInt8(0x44), UInt8(0), UInt16(ids.count))
            var offset = mdatBody
            for (id, payload) in zip(ids, payloads) {
                iloc.append(id, UInt16(0), UInt16(1), UInt32(offset), UInt32(payload.count))
                offset += payload.count
            }
            var box = ISOBMFFBox("meta", version: 0)
            box.bytes += hdlr.encoded + pitm.encoded + iloc.encoded + iinf.encoded + iref.encoded + iprp.encoded
            return box
        }
        let mdatBody = ftyp.encoded.count + meta(mdatBody: 0).encoded.count + 8
        var mdat = ISOBMFFBox("mdat")
        mdat.bytes = Array(payloads.joined())
        return Data(ftyp.encoded + meta(mdatBody: mdatBody).encoded + mdat.encoded)
    }
}
