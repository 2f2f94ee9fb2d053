import Foundation

/// A decoded image as the pipeline passes it around: one or more frames plus what the file said about them.
///
/// A still image has one frame; an animated GIF, WebP or APNG has one per frame, each already composited to the
/// full canvas (disposal and blending applied), with its display duration.
///
/// ```swift
/// let container = try registry.decode(data)
/// print(container.image.width, container.frames.count, container.loopCount)
/// ```
public struct ImageContainer: Sendable {
    // Every field lives in one copy-on-write storage: a copy of a container (each memory-cache hit hands one out)
    // is one retain, where the fields held inline made it a value-witness call that retained each reference and
    // went through Foundation's witnesses for the `Data` inside ``colorProfile`` and ``originalData``.
    private var storage: Storage

    /// The frames, never empty. Frame 0 is the still image.
    public var frames: [ImageFrame] {
        get { storage.frames }
        _modify { yield &unique().frames }
    }
    /// The format the bytes were in (`.unknown` for images made in memory).
    public var format: ImageFormat {
        get { storage.format }
        set { unique().format = newValue }
    }
    /// How many times an animation plays: 0 means forever (the default, also GIF's "no NETSCAPE block" case is 1).
    public var loopCount: Int {
        get { storage.loopCount }
        set { unique().loopCount = newValue }
    }
    /// The EXIF orientation the file declared; `.up` once it has been applied to the pixels.
    public var orientation: ExifOrientation {
        get { storage.orientation }
        set { unique().orientation = newValue }
    }
    /// The encoded bytes this came from, kept when the request asked for them (default `nil`).
    public var originalData: Data? {
        get { storage.originalData }
        set { unique().originalData = newValue }
    }
    /// `true` for a progressive preview decoded from part of the data; the final image follows.
    public var isPreview: Bool {
        get { storage.isPreview }
        set { unique().isPreview = newValue }
    }
    /// The pixel size of the original image before any downsampling (equal to `image.size` when none was done).
    public var originalSize: PixelSize {
        get { storage.originalSize }
        set { unique().originalSize = newValue }
    }
    /// Bits per channel of the source image as encoded (8 for most JPEG, PNG, GIF and WebP files; 10 or 12 for
    /// many AVIF and HEIC files; up to 16 for PNG and JPEG XL). Pixels are always delivered as 8-bit; this says
    /// what the file held. Default `nil`: not known (an image made in memory, or a decoder that does not say).
    public var bitDepth: Int? {
        get { storage.bitDepth }
        set { unique().bitDepth = newValue }
    }
    /// The embedded colour profile, kept when decoded with ``ColorPolicy/keep`` (the pixels are then in its colour
    /// space). Default `nil`: the pixels are sRGB (converted, or taken as sRGB).
    public var colorProfile: ColorProfile? {
        get { storage.colorProfile }
        set { unique().colorProfile = newValue }
    }
    /// The file's EXIF, XMP and IPTC blocks, read when decoded with ``DecodingOptions/readsMetadata``. Default
    /// `nil`: not read, or the file has none.
    public var metadata: ImageMetadata? {
        get { storage.metadata }
        set { unique().metadata = newValue }
    }
    /// The description of the colour profile the file declared, whatever became of it: the ICC description
    /// (e.g. `"Display P3"`), or `"sRGB"`, `"gAMA 1.8 + cHRM"` for PNG chunks. Default `nil`: the file declared none,
    /// or it was decoded with ``ColorPolicy/ignore`` (which does not read profiles).
    public var sourceColorProfileDescription: String? {
        get { storage.sourceColorProfileDescription }
        set { unique().sourceColorProfileDescription = newValue }
    }
    /// Why the file's colour declaration was not used, when it could not be (an ICC profile that does not parse,
    /// is over the size limit, is of the wrong colour space or not an image profile; ICC segments out of
    /// sequence): the pixels were then taken as sRGB. The decoders write nothing anywhere; a program shows this
    /// where it wants (`imago decode` and `fetch` print it on standard error). Default `nil`: the declaration was
    /// used, or there was none.
    public var colorWarning: String? {
        get { storage.colorWarning }
        set { unique().colorWarning = newValue }
    }
    /// For an animation decoded on demand (its frames would exceed ``DecodingOptions/animationMemoryBudget``):
    /// the source that produces every frame; ``frames`` then holds only frame 0. Read frames with
    /// ``frameCount`` and ``frame(at:)``, which work either way. Default `nil`: every frame is in ``frames``.
    public var frameSource: (any AnimationFrameSource)? {
        get { storage.frameSource }
        set { unique().frameSource = newValue }
    }

    // The storage, copied first if another container shares it (copy on write, as `Array` does).
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    // @unchecked Sendable: a storage is mutated only through `unique()`, i.e. when one container alone holds it;
    // a shared one is never written, so containers keep value semantics across threads.
    private final class Storage: @unchecked Sendable {
        var frames: [ImageFrame]
        var format: ImageFormat
        var loopCount: Int
        var orientation: ExifOrientation
        var originalData: Data?
        var isPreview: Bool
        var originalSize: PixelSize
        var bitDepth: Int?
        var colorProfile: ColorProfile?
        var metadata: ImageMetadata?
        var sourceColorProfileDescription: String?
        var colorWarning: String?
        var frameSource: (any AnimationFrameSource)?

        init(
            frames: [ImageFrame], format: ImageFormat, loopCount: Int, orientation: ExifOrientation,
            originalData: Data?, isPreview: Bool, originalSize: PixelSize, bitDepth: Int?
        ) {
            self.frames = frames
            self.format = format
            self.loopCount = loopCount
            self.orientation = orientation
            self.originalData = originalData
            self.isPreview = isPreview
            self.originalSize = originalSize
            self.bitDepth = bitDepth
        }

        func copy() -> Storage {
            let copy = Storage(
                frames: frames, format: format, loopCount: loopCount, orientation: orientation,
                originalData: originalData, isPreview: isPreview, originalSize: originalSize, bitDepth: bitDepth)
            copy.colorProfile = colorProfile
            copy.metadata = metadata
            copy.sourceColorProfileDescription = sourceColorProfileDescription
            copy.colorWarning = colorWarning
            copy.frameSource = frameSource
            return copy
        }
    }

    /// A container of one or more frames.
    ///
    /// - Parameters:
    ///   - frames: at least one frame; all should have the same size.
    ///   - format: the source format (default `.unknown`).
    ///   - loopCount: 0 = forever (default).
    ///   - orientation: the declared orientation still to apply (default `.up`).
    ///   - originalData: the encoded bytes, kept when the request asked for them (default `nil`).
    ///   - isPreview: whether this is a progressive preview (default `false`).
    ///   - originalSize: the size before downsampling (default: the first frame's).
    ///   - bitDepth: bits per channel of the source (default `nil`: unknown).
    public init(
        frames: [ImageFrame], format: ImageFormat = .unknown, loopCount: Int = 0,
        orientation: ExifOrientation = .up, originalData: Data? = nil, isPreview: Bool = false,
        originalSize: PixelSize? = nil, bitDepth: Int? = nil
    ) {
        precondition(!frames.isEmpty, "an ImageContainer needs at least one frame")
        self.storage = Storage(
            frames: frames, format: format, loopCount: loopCount, orientation: orientation,
            originalData: originalData, isPreview: isPreview, originalSize: originalSize ?? frames[0].buffer.size,
            bitDepth: bitDepth)
    }

    /// A still image of one frame.
    public init(image: PixelBuffer, format: ImageFormat = .unknown, orientation: ExifOrientation = .up) {
        self.init(frames: [ImageFrame(buffer: image)], format: format, orientation: orientation)
    }

    /// The first frame's pixels: the still image.
    public var image: PixelBuffer {
        get { frames[0].buffer }
        set { frames[0].buffer = newValue }
    }

    /// Whether there is more than one frame.
    public var isAnimated: Bool { frameCount > 1 }

    /// Bytes of pixel data over all frames held, plus what an on-demand ``frameSource`` holds, plus the encoded
    /// bytes kept in ``originalData``: the cost the memory cache charges (a cache of images kept with their
    /// originals holds both).
    public var cost: Int {
        frames.reduce(originalData?.count ?? 0) { $0 + $1.buffer.byteCount } + (frameSource?.retainedByteCount ?? 0)
    }

    /// Total display time of one loop of the animation (zero for a still image).
    public var totalDuration: Duration {
        if let frameSource { return frameSource.durations.reduce(.zero, +) }
        return frames.reduce(.zero) { $0 + $1.duration }
    }

    /// A copy with `transform` applied to every frame's pixels in ``frames`` (an on-demand ``frameSource`` is
    /// dropped, leaving frame 0: use ``mapFramesLazily(_:)`` to keep the animation).
    public func mapFrames(_ transform: (PixelBuffer) throws -> PixelBuffer) rethrows -> ImageContainer {
        var copy = self
        copy.frames = try frames.map { ImageFrame(buffer: try transform($0.buffer), duration: $0.duration) }
        copy.frameSource = nil
        return copy
    }
}

/// One frame of an image: its pixels and how long it shows.
public struct ImageFrame: Sendable {
    /// The frame's pixels, composited to the full canvas.
    public var buffer: PixelBuffer
    /// How long the frame shows (zero for a still image; GIF's 0 or 10 ms delays are kept as the file said).
    public var duration: Duration

    /// A frame with its display duration (default zero).
    public init(buffer: PixelBuffer, duration: Duration = .zero) {
        self.buffer = buffer
        self.duration = duration
    }
}

/// The EXIF orientation tag (1…8): how the stored pixels must be turned to display upright.
public enum ExifOrientation: Int, Sendable, Hashable, Codable, CaseIterable {
    /// 1: as stored.
    case up = 1
    /// 2: mirrored left-right.
    case upMirrored = 2
    /// 3: rotated 180°.
    case down = 3
    /// 4: mirrored top-bottom.
    case downMirrored = 4
    /// 5: mirrored along the top-left to bottom-right diagonal (transpose).
    case leftMirrored = 5
    /// 6: must be rotated 90° clockwise to display.
    case right = 6
    /// 7: transverse (mirrored along the other diagonal).
    case rightMirrored = 7
    /// 8: must be rotated 90° counter-clockwise to display.
    case left = 8

    /// Whether applying this orientation swaps width and height.
    public var swapsDimensions: Bool { rawValue >= 5 }
}
