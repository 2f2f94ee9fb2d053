/// A decoded bitmap: width × height pixels in one contiguous allocation, rows top to bottom.
///
/// Formats: ``PixelFormat/rgba8`` (4 bytes a pixel, R G B A) and ``PixelFormat/gray8`` (1 byte a pixel).
/// Alpha is straight (not premultiplied) unless ``alphaMode`` says otherwise; resamplers convert to
/// premultiplied for the arithmetic (see ``premultiplied()``) so that transparent pixels never bleed colour.
/// A value type with copy-on-write storage: copies are cheap until one is mutated. Sendable.
///
/// ```swift
/// var buffer = try PixelBuffer(width: 2, height: 1, format: .rgba8)
/// buffer[pixel: 1, 0] = RGBA(r: 255, g: 0, b: 0, a: 255)
/// ```
public struct PixelBuffer: Sendable, Hashable {
    /// How the bytes of one pixel are laid out.
    public enum PixelFormat: String, Sendable, Hashable, Codable {
        /// Red, green, blue, alpha: one byte each.
        case rgba8
        /// One byte of luminance, opaque.
        case gray8

        /// Bytes a pixel takes: 4 for `rgba8`, 1 for `gray8`.
        public var bytesPerPixel: Int { self == .rgba8 ? 4 : 1 }
    }

    /// How colour relates to alpha in the stored bytes.
    public enum AlphaMode: String, Sendable, Hashable, Codable {
        /// Colour is independent of alpha (what decoders produce and `--rgba` writes).
        case straight
        /// Colour has been multiplied by alpha (what resampling and compositing need).
        case premultiplied
    }

    /// Width in pixels (≥ 1).
    public let width: Int
    /// Height in pixels (≥ 1).
    public let height: Int
    /// Bytes from the start of one row to the next: `width × bytesPerPixel` (rows are tightly packed).
    public let bytesPerRow: Int
    /// The pixel layout.
    public let format: PixelFormat
    /// Whether colour is straight or premultiplied; `.straight` for everything a decoder returns.
    public internal(set) var alphaMode: AlphaMode
    /// The pixels, `bytesPerRow × height` bytes, rows top to bottom.
    public internal(set) var bytes: [UInt8] {
        get { storage }
        _modify {
            // Any write may lower an alpha byte, so it drops the opaque mark (see `isKnownOpaque`). `_modify`
            // rather than `didSet`: it yields the array in place, so writes through it never copy the pixels.
            opaqueMark = false
            yield &storage
        }
    }
    private var storage: [UInt8]
    /// Set by ``assumingOpaque()`` and by transforms of a marked buffer that keep every alpha at 255; cleared by
    /// every write to ``bytes``. Not part of equality: it is knowledge about the pixels, not a pixel.
    var opaqueMark = false

    /// Bytes of pixel data (`bytesPerRow × height`), the cost used by caches.
    public var byteCount: Int { bytes.count }
    /// The dimensions.
    public var size: PixelSize { PixelSize(width: width, height: height) }

    /// A buffer filled with zeros (transparent black for `rgba8`).
    ///
    /// Throws ``PixelBuffer/Error/invalidDimensions(width:height:)`` for a zero, negative or overflowing size.
    public init(
        width: Int, height: Int, format: PixelFormat = .rgba8, alphaMode: AlphaMode = .straight
    ) throws(PixelBuffer.Error) {
        let count = try Self.checkedByteCount(width: width, height: height, format: format)
        self.init(
            uncheckedWidth: width, height: height, format: format, alphaMode: alphaMode,
            bytes: [UInt8](repeating: 0, count: count))
    }

    /// Wraps existing bytes; `bytes.count` must be exactly `width × height × bytesPerPixel`.
    public init(
        width: Int, height: Int, format: PixelFormat = .rgba8, alphaMode: AlphaMode = .straight, bytes: [UInt8]
    )
        throws(PixelBuffer.Error)
    {
        let count = try Self.checkedByteCount(width: width, height: height, format: format)
        guard bytes.count == count else { throw Error.byteCountMismatch(expected: count, actual: bytes.count) }
        self.init(uncheckedWidth: width, height: height, format: format, alphaMode: alphaMode, bytes: bytes)
    }

    /// Makes a buffer whose bytes `initializer` writes directly (no zero fill); every byte must be written.
    ///
    /// This is how decoders fill their output without a second copy.
    public init(
        width: Int, height: Int, format: PixelFormat = .rgba8, alphaMode: AlphaMode = .straight,
        initializingWith initializer: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws {
        let count = try Self.checkedByteCount(width: width, height: height, format: format)
        let bytes = try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            try initializer(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
        self.init(uncheckedWidth: width, height: height, format: format, alphaMode: alphaMode, bytes: bytes)
    }

    init(uncheckedWidth width: Int, height: Int, format: PixelFormat, alphaMode: AlphaMode, bytes: [UInt8]) {
        self.width = width
        self.height = height
        self.format = format
        self.bytesPerRow = width * format.bytesPerPixel
        self.alphaMode = alphaMode
        self.storage = bytes
    }

    /// Equal when the size, layout, alpha mode and bytes are equal (``isKnownOpaque`` is not compared).
    public static func == (lhs: PixelBuffer, rhs: PixelBuffer) -> Bool {
        lhs.width == rhs.width && lhs.height == rhs.height && lhs.format == rhs.format
            && lhs.alphaMode == rhs.alphaMode && lhs.storage == rhs.storage
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(width)
        hasher.combine(height)
        hasher.combine(format)
        hasher.combine(alphaMode)
        hasher.combine(storage)
    }

    /// The byte count of a `width × height` buffer, or a thrown error when it is empty or would overflow.
    public static func checkedByteCount(width: Int, height: Int, format: PixelFormat) throws(PixelBuffer.Error) -> Int {
        guard width > 0, height > 0 else { throw Error.invalidDimensions(width: width, height: height) }
        let (pixels, o1) = width.multipliedReportingOverflow(by: height)
        let (count, o2) = pixels.multipliedReportingOverflow(by: format.bytesPerPixel)
        guard !o1, !o2, count <= Int(Int32.max) * 8 else { throw Error.invalidDimensions(width: width, height: height) }
        return count
    }

    /// Reads the raw bytes without copying.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }

    /// Writes the raw bytes in place (copying first if the storage is shared).
    public mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeMutableBytes(body)
    }

    /// The pixel at (`x`, `y`) as RGBA (gray is expanded, alpha 255); reading or writing out of bounds traps,
    /// like an array index.
    public subscript(pixel x: Int, y: Int) -> RGBA {
        get {
            precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) outside \(width)x\(height)")
            switch format {
            case .rgba8:
                let i = y * bytesPerRow + x * 4
                return RGBA(r: bytes[i], g: bytes[i + 1], b: bytes[i + 2], a: bytes[i + 3])
            case .gray8:
                let v = bytes[y * bytesPerRow + x]
                return RGBA(r: v, g: v, b: v, a: 255)
            }
        }
        set {
            precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) outside \(width)x\(height)")
            switch format {
            case .rgba8:
                let i = y * bytesPerRow + x * 4
                bytes[i] = newValue.r
                bytes[i + 1] = newValue.g
                bytes[i + 2] = newValue.b
                bytes[i + 3] = newValue.a
            case .gray8:
                bytes[y * bytesPerRow + x] = newValue.luminance
            }
        }
    }

    /// Errors from constructing a buffer.
    public enum Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// The width or height is zero, negative, or the byte count would overflow.
        case invalidDimensions(width: Int, height: Int)
        /// The bytes given do not match width × height × bytes per pixel.
        case byteCountMismatch(expected: Int, actual: Int)

        /// A sentence saying what went wrong.
        public var description: String {
            switch self {
            case .invalidDimensions(let w, let h): "invalid image dimensions \(w)x\(h)"
            case .byteCountMismatch(let e, let a): "pixel data has \(a) bytes, expected \(e)"
            }
        }
    }
}

/// One pixel's red, green, blue and alpha bytes.
public struct RGBA: Sendable, Hashable, CustomStringConvertible {
    /// Red, 0…255.
    public var r: UInt8
    /// Green, 0…255.
    public var g: UInt8
    /// Blue, 0…255.
    public var b: UInt8
    /// Alpha, 0 (transparent) … 255 (opaque).
    public var a: UInt8

    /// A pixel from its four channels; alpha defaults to 255 (opaque).
    public init(r: UInt8, g: UInt8, b: UInt8, a: UInt8 = 255) {
        self.r = r
        self.g = g
        self.b = b
        self.a = a
    }

    /// Rec. 601 luma, rounded: `(299 R + 587 G + 114 B) / 1000`.
    public var luminance: UInt8 {
        let sum: Int = 299 * Int(r) + 587 * Int(g) + 114 * Int(b)
        return UInt8((sum + 500) / 1000)
    }

    /// `rgba(r,g,b,a)`.
    public var description: String { "rgba(\(r),\(g),\(b),\(a))" }
}

/// A width and height in pixels.
public struct PixelSize: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// A size from its two dimensions.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// `width × height`, without overflow checking beyond Int's.
    public var pixelCount: Int { width * height }

    /// `WxH`.
    public var description: String { "\(width)x\(height)" }
}
