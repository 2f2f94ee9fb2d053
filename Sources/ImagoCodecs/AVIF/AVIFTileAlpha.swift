import CAVIF
import ImagoCore

/// The alpha of an AVIF grid whose tiles each carry their own alpha item (one `auxl` alpha item per `dimg` tile,
/// and no alpha grid), a layout libavif 0.11 does not look for: it returns such an image opaque. libavif 1.x
/// reads it (its test file `color_grid_alpha_nogrid.avif`).
///
/// libavif decodes the colour grid as usual. Then each tile's alpha item is decoded on its own, as a one-item
/// AVIF made of the item's `av1C`, `ispe` and `pixi` and its bytes, and its luma is copied into the image's alpha
/// plane at the tile's place, before the conversion to RGB. As libavif does with alpha:
/// - samples are full range; a tile coded in limited range is expanded, as libavif 0.11 fixes "studio range" alpha;
/// - a tile of another bit depth than the colour is rescaled to it;
/// - a `prem` reference from the grid or a tile to its alpha marks the colour premultiplied (then unpremultiplied
///   in the conversion, as for any AVIF).
///
/// Only when every tile has exactly one such item of type `av01`; with some tiles lacking one, the image is
/// opaque, as in libavif 1.x. An alpha tile that cannot be read or decoded, or whose size is not its colour
/// tile's, fails the decode with ``CodecError/corrupt(format:reason:)``. Each tile's file is made and decoded one
/// at a time: memory is one tile's bytes and one tile's planes beside the image.
struct AVIFTileAlpha {
    /// `auxC`'s type of an alpha auxiliary image (MIAF).
    static let alphaType = "urn:mpeg:mpegB:cicp:systems:auxiliary:alpha"

    private let items: ISOBMFFItems
    /// The alpha item of each colour tile, in the grid's order (row by row).
    let alphaIDs: [UInt32]
    /// Tiles per row of the grid.
    let columns: Int
    /// The size of every tile (the first colour tile's `ispe`).
    let tileSize: PixelSize
    /// Whether the colour was premultiplied by this alpha (`prem`).
    let isPremultiplied: Bool
    /// Decodes each tile, with the caller's threads and libavif settings.
    private let codec: AVIFDecoder

    /// Finds the layout in `bytes` (the whole file, which must outlive the value); `nil` when the primary item is
    /// not a grid whose every tile has its own alpha item.
    init?(_ bytes: UnsafeRawBufferPointer, codec: AVIFDecoder) {
        guard let items = ISOBMFFItems(bytes), let grid = items.primaryID, items.types[grid] == "grid",
            let gridData = items.data(of: grid), gridData.count >= 8
        else { return nil }
        // ImageGrid: version, flags, rows_minus_one, columns_minus_one, output width and height.
        let columns = Int(gridData[3]) + 1
        let tiles = items.referenced("dimg", from: grid)
        // Each item's auxl and prem referrers, indexed once (a grid has up to 65,536 tiles).
        let auxiliaries = items.referrers("auxl")
        let premultiplied = items.referrers("prem")
        func alphas(of item: UInt32) -> [UInt32] {
            (auxiliaries[item] ?? []).filter {
                items.types[$0] == "av01" && items.auxiliaryType(of: $0) == Self.alphaType
            }
        }
        guard tiles.count == (Int(gridData[2]) + 1) * columns, let first = items.spatialExtent(of: tiles[0]),
            alphas(of: grid).isEmpty  // an alpha grid is libavif's to find
        else { return nil }
        var alphaIDs: [UInt32] = []
        for tile in tiles {
            let found = alphas(of: tile)
            guard found.count == 1 else { return nil }
            alphaIDs.append(found[0])
        }
        self.items = items
        self.alphaIDs = alphaIDs
        self.columns = columns
        self.tileSize = PixelSize(width: first.width, height: first.height)
        self.isPremultiplied = zip(tiles, alphaIDs).contains { tile, alpha in
            premultiplied[alpha].map { $0.contains(tile) || $0.contains(grid) } ?? false
        }
        self.codec = codec
    }

    /// Decodes every alpha tile into a new alpha plane of `image` (libavif's current image: the decoded grid).
    func apply(to image: UnsafeMutablePointer<avifImage>, options: DecodingOptions) throws {
        guard image.pointee.alphaPlane == nil else { return }
        try AVIFDecoder.check(avifImageAllocatePlanes(image, avifPlanesFlags(AVIF_PLANES_A.rawValue)), nil)
        let width = Int(image.pointee.width)
        let height = Int(image.pointee.height)
        // Each alpha item is copied out once, however many tiles name it, and distinct items must fit in the file
        // together: up to 65,536 tiles over items that all span the file would otherwise copy it that many times.
        var distinct = Set<UInt32>()
        var total = 0
        for alpha in alphaIDs where distinct.insert(alpha).inserted {
            total += items.length(of: alpha) ?? 0
            guard total <= items.fileLength else {
                throw CodecError.corrupt(
                    format: .avif, reason: "the grid's alpha items together are larger than the file")
            }
        }
        var files: [UInt32: [UInt8]] = [:]
        for (index, alpha) in alphaIDs.enumerated() {
            let x = index % columns * tileSize.width
            let y = index / columns * tileSize.height
            guard x < width, y < height else { continue }
            guard let extent = items.spatialExtent(of: alpha), extent == (tileSize.width, tileSize.height) else {
                throw Self.corrupt(index, "its size is not its colour tile's \(tileSize.width)x\(tileSize.height)")
            }
            guard let file = files[alpha] ?? singleItemFile(alpha) else {
                throw Self.corrupt(index, "its bytes are not in the file")
            }
            files[alpha] = file
            try decode(file, pixelLimit: min(tileSize.pixelCount, options.pixelLimit)) { tile in
                guard Int(tile.width) == tileSize.width, Int(tile.height) == tileSize.height,
                    let luma = tile.yuvPlanes.0
                else {
                    throw Self.corrupt(index, "its AV1 frame is \(tile.width)x\(tile.height), not its ispe")
                }
                copy(
                    from: (luma, Int(tile.yuvRowBytes.0), Int(tile.depth), tile.yuvRange == AVIF_RANGE_LIMITED),
                    into: image, at: (x, y),
                    size: (min(tileSize.width, width - x), min(tileSize.height, height - y)))
            }
        }
        if isPremultiplied { image.pointee.alphaPremultiplied = AVIF_TRUE }
    }

    private static func corrupt(_ tile: Int, _ reason: String) -> CodecError {
        .corrupt(format: .avif, reason: "the alpha item of grid tile \(tile): \(reason)")
    }

    /// Decodes `file` with libavif (the caller's threads and settings; dav1d refuses a frame over `pixelLimit`)
    /// and hands its first image to `body`.
    private func decode(_ file: [UInt8], pixelLimit: Int, _ body: (avifImage) throws -> Void) throws {
        try file.withUnsafeBytes { raw in
            let decoder = try codec.parsedDecoder(over: raw, options: DecodingOptions())
            defer { avifDecoderDestroy(decoder) }
            try codec.tightenLimits(decoder, options: DecodingOptions(pixelLimit: pixelLimit))
            try AVIFDecoder.check(avifDecoderNextImage(decoder), decoder)
            guard let image = decoder.pointee.image else {
                throw CodecError.corrupt(format: .avif, reason: "no image after decoding")
            }
            try body(image.pointee)
        }
    }

    /// Copies a tile's luma (`source`: plane, row bytes, depth, limited range) into `image`'s alpha plane:
    /// `size` samples from its top left to `at`, expanded to full range and rescaled to the image's depth.
    private func copy(
        from source: (plane: UnsafeMutablePointer<UInt8>, rowBytes: Int, depth: Int, isLimited: Bool),
        into image: UnsafeMutablePointer<avifImage>, at: (x: Int, y: Int), size: (width: Int, height: Int)
    ) {
        let depth = Int(image.pointee.depth)
        let rowBytes = Int(image.pointee.alphaRowBytes)
        guard let plane = image.pointee.alphaPlane else { return }
        let sourceMax = (1 << source.depth) - 1
        let targetMax = (1 << depth) - 1
        let low = 16 << (source.depth - 8)
        let high = 235 << (source.depth - 8)
        func value(_ sample: Int) -> Int {
            var v = sample
            if source.isLimited { v = min(sourceMax, max(0, (v - low) * sourceMax / (high - low))) }
            return source.depth == depth ? v : (v * targetMax + sourceMax / 2) / sourceMax
        }
        for row in 0..<size.height {
            let from = UnsafeRawPointer(source.plane + row * source.rowBytes)
            let to = UnsafeMutableRawPointer(plane + (at.y + row) * rowBytes)
            for column in 0..<size.width {
                let sample =
                    source.depth > 8
                    ? Int(from.loadUnaligned(fromByteOffset: column * 2, as: UInt16.self))
                    : Int(from.load(fromByteOffset: column, as: UInt8.self))
                let v = value(sample)
                if depth > 8 {
                    to.storeBytes(of: UInt16(v), toByteOffset: (at.x + column) * 2, as: UInt16.self)
                } else {
                    to.storeBytes(of: UInt8(v), toByteOffset: at.x + column, as: UInt8.self)
                }
            }
        }
    }

    /// A still AVIF holding only `item`: `ftyp`, a `meta` with the item's `ispe`, `av1C` (essential) and `pixi`,
    /// and an `mdat` with its bytes; `nil` when the item has no `ispe` or `av1C` or its bytes are not readable.
    func singleItemFile(_ item: UInt32) -> [UInt8]? {
        guard let payload = items.data(of: item), let ispe = items.property("ispe", of: item),
            let av1C = items.property("av1C", of: item)
        else { return nil }
        var properties: [(box: Range<Int>, isEssential: Bool)] = [(ispe, false), (av1C, true)]
        if let pixi = items.property("pixi", of: item) { properties.append((pixi, false)) }
        var ipco = ISOBMFFBox("ipco")
        for property in properties { ipco.bytes += items.bytes(of: property.box) }
        var ipma = ISOBMFFBox("ipma", version: 0)
        ipma.append(UInt32(1), UInt16(1), UInt8(properties.count))
        for (index, property) in properties.enumerated() {
            ipma.append(UInt8(index + 1) | (property.isEssential ? 0x80 : 0))
        }
        var infe = ISOBMFFBox("infe", version: 2)
        infe.append(UInt16(1), UInt16(0))
        infe.bytes += Array("av01\0".utf8)
        var iinf = ISOBMFFBox("iinf", version: 0)
        iinf.append(UInt16(1))
        iinf.bytes += infe.encoded
        let (hdlr, pitm, ftyp) = (ISOBMFFBox.pictureHandler, ISOBMFFBox.primaryItem(1), ISOBMFFBox.avifFileType)
        var iprp = ISOBMFFBox("iprp")
        iprp.bytes += ipco.encoded + ipma.encoded
        // iloc (version 0, 4-byte offsets and lengths): one extent, at the mdat's body, whose offset needs the
        // size of everything before it; iloc's own size does not depend on the value.
        func iloc(offset: Int) -> ISOBMFFBox {
            var box = ISOBMFFBox("iloc", version: 0)
            box.append(UInt8(0x44), UInt8(0), UInt16(1), UInt16(1), UInt16(0), UInt16(1))
            box.append(UInt32(truncatingIfNeeded: offset), UInt32(truncatingIfNeeded: payload.count))
            return box
        }
        func meta(offset: Int) -> ISOBMFFBox {
            var box = ISOBMFFBox("meta", version: 0)
            box.bytes += hdlr.encoded + pitm.encoded + iloc(offset: offset).encoded + iinf.encoded + iprp.encoded
            return box
        }
        let offset = ftyp.encoded.count + meta(offset: 0).encoded.count + 8
        guard offset + payload.count <= Int(UInt32.max) else { return nil }
        var mdat = ISOBMFFBox("mdat")
        mdat.bytes = payload
        return ftyp.encoded + meta(offset: offset).encoded + mdat.encoded
    }
}
