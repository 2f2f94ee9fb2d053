import CImagoShims
import CPNG
import CPNGFull
import Foundation
import ImagoCore

/// Encodes PNG with libpng's simplified API (`png_image_write_to_memory`), 8 bits a channel, not interlaced; or,
/// with ``isInterlaced``, Adam7-interlaced with libpng's full write API (the same chunks and pixels).
///
/// - `gray8` is written as grayscale; `rgba8` as RGBA, or as RGB when every pixel is opaque (smaller files; it
///   decodes to the same pixels). Premultiplied input is unpremultiplied first. Lossless: decoding gives back
///   exactly the pixels encoded.
/// - Colour: ``EncodingOptions/colorProfile`` is written as an `iCCP` chunk (the profile byte-identical once
///   inflated), replacing the `sRGB` chunk libpng writes. ``EncodingOptions/metadata``: EXIF as `eXIf`, XMP as an
///   `iTXt` chunk (IPTC has no place in PNG).
/// - One compression pass: the image is written into a buffer of the worst-case size and the result copied out
///   at its exact size; should libpng ever need more, it reports the size and the write is repeated once.
///   (`EncodingOptions` has no PNG settings; zlib's default level is used.)
/// - With ``paletteColors`` (imgproxy's `IMGPROXY_PNG_QUANTIZE`, pngquant's idea), an RGBA image whose pixels are
///   all opaque or all fully transparent is written as a palette PNG of at most that many colours: its colours as
///   they are when there are few enough, else a median-cut colour map with Floyd–Steinberg dithering (the GIF
///   encoder's quantizer), fully transparent pixels as one `tRNS` entry. Files shrink several times for
///   illustrations and screenshots; photographs lose a little (dithered) colour. An image with partial alpha
///   (soft edges, shadows) is written as a palette too: exactly when it has no more than that many RGBA colours,
///   else quantized in premultiplied RGBA and dithered in all four channels, each entry with its alpha, as
///   pngquant does; opaque and fully transparent pixels keep their alpha exactly (with only 2 colours for
///   transparent, translucent and opaque pixels, which cannot be, the image stays truecolor). Grayscale images
///   stay grayscale (lossless).
///
/// Thread-safe: every encode has its own `png_image`.
public struct PNGEncoder: ImageEncoding {
    /// At most this many colours (2…256) in a palette PNG for images that can be written so (see the type);
    /// `nil`: every image lossless, in truecolor or grayscale.
    public let paletteColors: Int?
    /// Whether files are Adam7-interlaced (imgproxy's `IMGPROXY_PNG_INTERLACED`): a browser draws a coarse
    /// preview of the whole image after an eighth of it has arrived, at the cost of larger files (filters see
    /// pixels farther apart). Decoded, they are the same pixels.
    public let isInterlaced: Bool

    /// An encoder with the behaviour described on the type; `paletteColors` (clamped to 2…256) turns on palette
    /// output, `interlaced` Adam7 interlacing. Defaults `nil` (lossless) and `false`.
    public init(paletteColors: Int? = nil, interlaced: Bool = false) {
        self.paletteColors = paletteColors.map { min(256, max(2, $0)) }
        isInterlaced = interlaced
    }

    /// `palette=N;alpha` with ``paletteColors`` (`;alpha` since partial alpha is quantized too: earlier versions
    /// wrote such images lossless under `palette=N`, and their cached outputs are not these), `adam7` with
    /// ``isInterlaced``, joined by `;`; `nil` for the defaults.
    public var settingsIdentifier: String? {
        let parts = [paletteColors.map { "palette=\($0);alpha" }, isInterlaced ? "adam7" : nil].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: ";")
    }

    /// `.png`.
    public var format: ImageFormat { .png }

    /// Encodes `image` as described on the type.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` with libpng's message.
    public func encode(_ image: PixelBuffer, options: EncodingOptions) throws -> Data {
        let image = image.alphaMode == .premultiplied ? image.unpremultiplied() : image
        let (width, height) = (image.width, image.height)
        var pngFormat = image.format == .gray8 ? cimago_png_format_gray : cimago_png_format_rgba
        var bytesPerPixel = image.format.bytesPerPixel
        var pixels = image.bytes
        var colormap: [UInt8]?
        if let paletteColors, image.format == .rgba8, let indexed = Self.indexed(image, colors: paletteColors) {
            pixels = indexed.indices
            colormap = indexed.colormap
            pngFormat = cimago_png_format_rgba_colormap
            bytesPerPixel = 1
        } else if image.format == .rgba8 && !image.hasTransparency {
            pixels = Self.packedRGB(image)
            pngFormat = cimago_png_format_rgb
            bytesPerPixel = 3
        }
        let rowBytes = width * bytesPerPixel
        guard width <= Int(Int32.max) / bytesPerPixel, height <= Int(UInt32.max) else {
            throw CodecError.encodingFailed(format: .png, reason: "\(width)x\(height) is too large")
        }

        // Deflate's worst case is the filtered data plus 5 bytes per 16 KiB block; IDAT chunks add 12 bytes per
        // 8 KiB; the header chunks (IHDR, sRGB, gAMA, cHRM, IEND) a few hundred bytes.
        let filtered = (rowBytes + 1) * height
        var capacity = filtered + filtered / 512 + 4096
        if isInterlaced {
            // Adam7's seven passes add a filter byte per row of each pass: at most 15 a row of the image.
            let encoded = try Self.interlaced(
                pixels, rowBytes: rowBytes, width: width, height: height, pngFormat: pngFormat, colormap: colormap,
                maxSize: capacity + 15 * height)
            return try Embedding.png(
                encoded, profile: options.colorProfile?.data, metadata: options.metadata?.bounded)
        }
        for _ in 0..<2 {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
            defer { buffer.deallocate() }
            var png = png_image()
            png.version = cimago_png_image_version
            png.width = UInt32(width)
            png.height = UInt32(height)
            png.format = pngFormat
            png.colormap_entries = UInt32((colormap?.count ?? 0) / 4)
            defer { png_image_free(&png) }
            var size = png_alloc_size_t(capacity)
            let ok = pixels.withUnsafeBytes { pixels in
                (colormap ?? []).withUnsafeBytes { map in
                    png_image_write_to_memory(
                        &png, buffer.baseAddress, &size, 0, pixels.baseAddress, Int32(rowBytes),
                        colormap == nil ? nil : map.baseAddress)
                }
            }
            if ok != 0 {
                let encoded = Data(UnsafeRawBufferPointer(rebasing: buffer[..<min(Int(size), capacity)]))
                return try Embedding.png(
                    encoded, profile: options.colorProfile?.data, metadata: options.metadata?.bounded)
            }
            guard size > capacity else {
                let message = withUnsafeBytes(of: &png.message) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                throw CodecError.encodingFailed(format: .png, reason: message.isEmpty ? "libpng failed" : message)
            }
            capacity = Int(size)  // libpng reported the size it needs: one more pass
        }
        throw CodecError.encodingFailed(format: .png, reason: "libpng's output kept outgrowing its buffer")
    }

    /// The Adam7-interlaced PNG of `pixels` in `pngFormat`'s layout (a simplified-API format: gray, RGB, RGBA or
    /// an RGBA colour map), at most `maxSize` bytes.
    ///
    /// - Throws: ``CodecError/encodingFailed(format:reason:)`` with libpng's message.
    static func interlaced(
        _ pixels: [UInt8], rowBytes: Int, width: Int, height: Int, pngFormat: UInt32, colormap: [UInt8]?,
        maxSize: Int
    ) throws -> Data {
        let colorType: Int32 =
            switch pngFormat {
            case cimago_png_format_gray: Int32(cimago_png_writer_gray)
            case cimago_png_format_rgb: Int32(cimago_png_writer_rgb)
            case cimago_png_format_rgba_colormap: Int32(cimago_png_writer_palette)
            default: Int32(cimago_png_writer_rgba)
            }
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: 200)
        let status = pixels.withUnsafeBufferPointer { pixels in
            (colormap ?? []).withUnsafeBufferPointer { map in
                cimago_png_write_interlaced(
                    pixels.baseAddress, rowBytes, UInt32(width), UInt32(height), colorType, map.baseAddress,
                    Int32((colormap?.count ?? 0) / 4), maxSize, &out, &size, &message, message.count)
            }
        }
        guard status == 0, let out else {
            let reason = String(nulTerminated: message)
            throw CodecError.encodingFailed(format: .png, reason: reason.isEmpty ? "libpng failed" : reason)
        }
        defer { free(out) }
        return Data(bytes: out, count: size)
    }

    /// `image` (straight RGBA) as one index a pixel and its RGBA colour map, at most `colors` entries: its own
    /// colours when it has few enough (``exactly(_:colors:)``), else quantized: in RGB with one transparent entry
    /// when every pixel is opaque or fully transparent (as GIF is), else in premultiplied RGBA
    /// (``GIFQuantizer/translucent(_:width:height:maximumColors:)``); `nil` when opaque pixels could not keep
    /// entries of their own (two colours for transparent, translucent and opaque pixels): the image is then
    /// written truecolor. Ordered by ``colourMap(indices:colours:)``.
    static func indexed(_ image: PixelBuffer, colors: Int) -> (indices: [UInt8], colormap: [UInt8])? {
        if let exact = exactly(image, colors: colors) { return exact }
        let area = image.width * image.height
        var drawn = [UInt8](repeating: 1, count: area)
        let binaryAlpha = image.withUnsafeBytes { bytes in
            for i in 0..<area {
                let alpha = bytes[i * 4 + 3]
                if alpha == 0 {
                    drawn[i] = 0
                } else if alpha != 255 {
                    return false
                }
            }
            return true
        }
        guard binaryAlpha else {
            let quantized = image.withUnsafeBytes { bytes in
                GIFQuantizer.translucent(
                    bytes.bindMemory(to: UInt8.self), width: image.width, height: image.height, maximumColors: colors)
            }
            return quantized.map { colourMap(indices: $0.indices, colours: $0.colours) }
        }
        let frame = image.withUnsafeBytes { bytes in
            GIFQuantizer.frame(
                of: bytes.bindMemory(to: UInt8.self), canvasWidth: image.width,
                rect: GIFRect(x: 0, y: 0, width: image.width, height: image.height), drawn: drawn,
                reservesTransparency: false, scratch: GIFScratch(), maximumColors: colors)
        }
        let colours = (0..<frame.colorCount).map { entry -> UInt32 in
            guard entry != frame.transparentIndex else { return 0 }
            let c = frame.colors
            return UInt32(c[entry * 3]) << 24 | UInt32(c[entry * 3 + 1]) << 16 | UInt32(c[entry * 3 + 2]) << 8 | 0xFF
        }
        return colourMap(indices: frame.indices, colours: colours)
    }

    /// `image`'s own RGBA colours as a colour map when there are at most `colors` of them (one pass with an
    /// open-addressing table that stops at the first colour too many; fully transparent pixels are one colour
    /// whatever their RGB).
    static func exactly(_ image: PixelBuffer, colors: Int) -> (indices: [UInt8], colormap: [UInt8])? {
        let area = image.width * image.height
        let slots = 1024  // at most 256 keys: a quarter full at most
        var keys = [UInt32](repeating: 0, count: slots)
        var entries = [Int16](repeating: -1, count: slots)  // -1: an empty slot
        var found: [UInt32] = []
        var fits = true
        // Not zero-filled: a photograph stops within its first few hundred pixels, before touching the rest.
        let indices = image.withUnsafeBytes { bytes in
            [UInt8](unsafeUninitializedCapacity: area) { indices, initialized in
                initialized = 0
                for i in 0..<area {
                    let p = i * 4
                    let alpha = bytes[p + 3]
                    let colour =
                        alpha == 0
                        ? 0
                        : UInt32(bytes[p]) << 24 | UInt32(bytes[p + 1]) << 16 | UInt32(bytes[p + 2]) << 8
                            | UInt32(alpha)
                    var slot = Int((colour &* 2_654_435_761) >> 22) & (slots - 1)
                    while true {
                        let entry = entries[slot]
                        if entry < 0 {
                            guard found.count < colors else {
                                fits = false
                                return
                            }
                            keys[slot] = colour
                            entries[slot] = Int16(found.count)
                            indices[i] = UInt8(found.count)
                            found.append(colour)
                            break
                        }
                        if keys[slot] == colour {
                            indices[i] = UInt8(entry)
                            break
                        }
                        slot = (slot + 1) & (slots - 1)
                    }
                }
                initialized = area
            }
        }
        guard fits else { return nil }
        return colourMap(indices: indices, colours: found)
    }

    /// `indices` into `colours` (RGBA as `0xRRGGBBAA`) as libpng takes them: the entries with alpha below 255
    /// moved first, in order, then the rest in order, so that the `tRNS` chunk, which runs to the last such entry,
    /// is as short as it can be; the indices renumbered to match.
    private static func colourMap(indices: [UInt8], colours: [UInt32]) -> (indices: [UInt8], colormap: [UInt8]) {
        let order =
            colours.indices.filter { colours[$0] & 0xFF < 255 } + colours.indices.filter { colours[$0] & 0xFF == 255 }
        var position = [UInt8](repeating: 0, count: colours.count)
        var colormap: [UInt8] = []
        colormap.reserveCapacity(colours.count * 4)
        for (newIndex, entry) in order.enumerated() {
            position[entry] = UInt8(newIndex)
            let c = colours[entry]
            colormap += [UInt8(c >> 24), UInt8((c >> 16) & 0xFF), UInt8((c >> 8) & 0xFF), UInt8(c & 0xFF)]
        }
        guard !order.elementsEqual(colours.indices) else { return (indices, colormap) }  // nothing moved
        return (indices.map { position[Int($0)] }, colormap)
    }

    /// The RGB bytes of an RGBA image (alpha dropped), 3 a pixel.
    private static func packedRGB(_ image: PixelBuffer) -> [UInt8] {
        let count = image.width * image.height * 3
        return [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            for y in 0..<image.height {
                image.copyRow(y, into: out.baseAddress! + y * image.width * 3, dropsAlpha: true)
            }
            initialized = count
        }
    }
}
