#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What identifies a decoded image in the caches: its source and what was done to it (Nuke's `ImageRequestKeys`).
///
/// A typed value, not a string: the compiler, not a separator character, keeps the source apart from its variant,
/// and ``ImageCaching/removeImages(where:)`` matches keys by their fields. The one text form of a key is
/// ``dataCacheKey``, under which a ``DataCaching`` stores the encoded image.
///
/// The hash is computed once, when the key is made: hashing a URL-sized string with `Hasher` (SipHash) costs more
/// than taking a lock, and a key built once per request is then looked up, stored and compared several times. The
/// key hashes the UTF-8 bytes of its source with wyhash under a seed drawn at random once per process, mixing in
/// the variant only when there is one (figures: BENCHMARKS.md, `url-key`).
///
/// Sources compare their UTF-8 bytes: two texts that are canonically equivalent in Unicode but spelled with
/// different bytes (precomposed "é" against "e" + combining accent) are different keys, as they are on disk.
public struct ImageCacheKey: Sendable, Hashable, CustomStringConvertible {
    /// What was done to a decoded image: the decode size and frames, then the processors in order. Empty for the
    /// image as decoded at full size.
    public struct Variant: Sendable, Hashable {
        /// The request's ``ImageRequest/targetSize``. Default `nil`.
        public var targetSize: PixelSize?
        /// The decode target taken from the first processor when the request gives no target size (the decoded
        /// image is then smaller than the full decode). Default `nil`.
        public var decodeTarget: DecodeTarget?
        /// Only the first frame was decoded (``ImageRequest/Options/decodesFirstFrameOnly``). Default `false`.
        public var isFirstFrameOnly: Bool
        /// How the request's own ``ImageRequest/decodingOptions`` decode, when it has them: their fields that change
        /// the pixels. Requests without use their pipeline's options, which are the same for all of one pipeline's
        /// keys. Default `nil`.
        public var decoding: Decoding?
        /// The ``ImageProcessing/identifier`` of each processor applied, in order. Default none.
        public var processors: [String]

        /// A variant; each parameter defaults as its property documents.
        public init(
            targetSize: PixelSize? = nil, decodeTarget: DecodeTarget? = nil, isFirstFrameOnly: Bool = false,
            decoding: Decoding? = nil, processors: [String] = []
        ) {
            self.targetSize = targetSize
            self.decodeTarget = decodeTarget
            self.isFirstFrameOnly = isFirstFrameOnly
            self.decoding = decoding
            self.processors = processors
        }

        /// Whether nothing was done to the decoded image.
        public var isEmpty: Bool {
            targetSize == nil && decodeTarget == nil && !isFirstFrameOnly && decoding == nil && processors.isEmpty
        }
    }

    /// The fields of ``DecodingOptions`` that change a decoded image's pixels (limits only decide whether it
    /// decodes at all, so they are left out): two requests whose options agree on these share cache entries.
    public struct Decoding: Sendable, Hashable {
        /// ``DecodingOptions/appliesOrientation``.
        public var appliesOrientation: Bool
        /// ``DecodingOptions/colorPolicy``.
        public var colorPolicy: ColorPolicy
        /// ``DecodingOptions/renderingIntent``.
        public var renderingIntent: RenderingIntent
        /// ``DecodingOptions/usesBlackPointCompensation``.
        public var usesBlackPointCompensation: Bool
        /// ``DecodingOptions/decodedByteLimit``.
        public var decodedByteLimit: Int?
        /// ``DecodingOptions/targetMode``.
        public var targetMode: DecodingOptions.TargetMode
        /// ``DecodingOptions/decodesFirstFrameOnly``.
        public var decodesFirstFrameOnly: Bool
        /// ``DecodingOptions/allowsPartialData``.
        public var allowsPartialData: Bool
        /// ``DecodingOptions/embeddedThumbnails``.
        public var embeddedThumbnails: DecodingOptions.EmbeddedThumbnails
        /// ``DecodingOptions/readsMetadata`` (not pixels, but what a decoded image holds).
        public var readsMetadata: Bool

        /// The pixel-changing fields of `options`.
        public init(_ options: DecodingOptions) {
            appliesOrientation = options.appliesOrientation
            colorPolicy = options.colorPolicy
            renderingIntent = options.renderingIntent
            usesBlackPointCompensation = options.usesBlackPointCompensation
            decodedByteLimit = options.decodedByteLimit
            targetMode = options.targetMode
            decodesFirstFrameOnly = options.decodesFirstFrameOnly
            allowsPartialData = options.allowsPartialData
            embeddedThumbnails = options.embeddedThumbnails
            readsMetadata = options.readsMetadata
        }

        /// The stable text of ``ImageCacheKey/dataCacheKey``'s `decoding=` part, e.g.
        /// `orient=1;color=convertToSRGB;intent=0;bpc=1;bytes=none;mode=fit;first=0;partial=0` (and `;thumbs=never`
        /// or `;thumbs=always` for embedded thumbnails other than the default, and `;meta=1` when metadata is read, so
        /// keys from before those options stay as they were).
        var text: String {
            "orient=\(appliesOrientation ? 1 : 0);color=\(colorPolicy.rawValue);intent=\(renderingIntent.rawValue)"
                + ";bpc=\(usesBlackPointCompensation ? 1 : 0);bytes=\(decodedByteLimit.map(String.init) ?? "none")"
                + ";mode=\(targetMode == .cover ? "cover" : "fit");first=\(decodesFirstFrameOnly ? 1 : 0)"
                + ";partial=\(allowsPartialData ? 1 : 0)"
                + (embeddedThumbnails == .whenLargeEnough ? "" : ";thumbs=\(embeddedThumbnails.rawValue)")
                + (readsMetadata ? ";meta=1" : "")
        }
    }

    /// The source's key: the URL after the key policy (see ``ImageRequest/sourceKey``), or the source's id.
    public let source: String
    /// What was done to the decoded image.
    public var variant: Variant { variantBox?.variant ?? Variant() }
    /// The hash, computed once (seeded per process: never persist it).
    public let precomputedHash: Int
    /// A non-empty variant, behind one reference; `nil` for the image as decoded (most keys). The key stays three
    /// words, as cheap to copy, store and compare as the plain string key was, and a source-only key never
    /// compares variants. The source-only initialiser is inlinable, so making a key from a string in another
    /// module costs no call and no extra retain.
    @usableFromInline let variantBox: VariantBox?

    /// The key of the image of `source` as decoded at full size (no variant).
    @inlinable public init(_ source: String) {
        self.source = source
        self.variantBox = nil
        self.precomputedHash = Self.hash(source)
    }

    /// The key of `variant` of the image of `source`.
    public init(source: String, variant: Variant) {
        self.source = source
        let sourceHash = Self.hash(source)
        if variant.isEmpty {
            self.variantBox = nil
            self.precomputedHash = sourceHash
        } else {
            self.variantBox = VariantBox(variant)
            var hasher = Hasher()
            hasher.combine(sourceHash)
            hasher.combine(variant)
            self.precomputedHash = hasher.finalize()
        }
    }

    /// Equal when the sources have the same UTF-8 bytes and the variants are equal (the hashes are compared
    /// first, as a fast reject).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.precomputedHash == rhs.precomputedHash, Self.bytesEqual(lhs.source, rhs.source) else {
            return false
        }
        switch (lhs.variantBox, rhs.variantBox) {
        case (nil, nil): return true
        case (let a?, let b?): return a === b || a.variant == b.variant
        default: return false
        }
    }

    /// Feeds the precomputed hash only.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(precomputedHash)
    }

    /// What `Dictionary` and `Set` call instead of `hash(into:)`: the precomputed hash mixed with the table's seed,
    /// without running a `Hasher` again (a noticeable share of a memory-cache hit). `precomputedHash` is
    /// already a hash under a secret per-process seed, so flooding a table with colliding keys needs that seed;
    /// the multiply-xorshift rounds spread the per-table seed over every bit, so two tables never order keys alike.
    public func _rawHashValue(seed: Int) -> Int {
        var x = UInt64(truncatingIfNeeded: precomputedHash ^ seed)
        x = (x ^ (x >> 32)) &* 0xD6E8_FEB8_6659_FD93
        x = (x ^ (x >> 32)) &* 0xD6E8_FEB8_6659_FD93
        return Int(truncatingIfNeeded: x ^ (x >> 32))
    }

    /// The text under which a ``DataCaching`` stores this image (the disk cache hashes it to the entry's file
    /// name); the one place a key becomes text. Stable across releases:
    /// - no variant: ``source`` itself (so original bytes keep the names they always had);
    /// - otherwise ``source``, a space, `variant:` and the variant's parts in order, each written as its UTF-8
    ///   length, `:` and the part (a netstring, so no identifier can forge another key): `size=WxH` for the target
    ///   size, `decode=` and the ``DecodeTarget`` (`fit=WxH`), `first-frame`, `decoding=` and the request's own
    ///   decoding options (``Decoding``), then `processor=` and each processor's identifier. A space never appears
    ///   in an absolute URL string.
    ///
    /// ```
    /// https://e.com/x.png variant:8:size=3x4,11:first-frame,11:processor=a
    /// ```
    public var dataCacheKey: String {
        guard !variant.isEmpty else { return source }
        var parts: [String] = []
        if let size = variant.targetSize { parts.append("size=\(size.width)x\(size.height)") }
        if let target = variant.decodeTarget { parts.append("decode=\(target)") }
        if variant.isFirstFrameOnly { parts.append("first-frame") }
        if let decoding = variant.decoding { parts.append("decoding=" + decoding.text) }
        for identifier in variant.processors { parts.append("processor=" + identifier) }
        var text = source + " variant:"
        for (index, part) in parts.enumerated() {
            if index > 0 { text += "," }
            text += "\(part.utf8.count):" + part
        }
        return text
    }

    /// ``dataCacheKey``.
    public var description: String { dataCacheKey }

    // Drawn once per process from the system's random source, like `Hasher`'s own seed, so that an attacker who
    // picks the URLs cannot precompute colliding ones (and already passed through wyhash's seed mix).
    private static let seed = WyHash.mixSeed(UInt64.random(in: .min ... .max))

    /// The hash ``init(_:)`` stores for a source `string` in this process (for tests).
    @usableFromInline package static func hash(_ string: String) -> Int {
        let seed = Self.seed
        // Read in place: native strings, small ones included, are contiguous; anything else is made native once.
        let hash =
            string.utf8.withContiguousStorageIfAvailable { WyHash.hash(UnsafeRawBufferPointer($0), mixedSeed: seed) }
            ?? {
                var copy = string
                return copy.withUTF8 { WyHash.hash(UnsafeRawBufferPointer($0), mixedSeed: seed) }
            }()
        return Int(truncatingIfNeeded: hash)
    }

    // Byte equality with one memcmp when both texts are contiguous (String's own `==` also checks Unicode
    // canonical equivalence, which the hash above does not follow).
    private static func bytesEqual(_ a: String, _ b: String) -> Bool {
        let contiguous = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
            }
        }
        if let contiguous, let equal = contiguous { return equal }
        return a.utf8.elementsEqual(b.utf8)
    }

    /// A variant behind one reference (inlinable code only stores `nil`).
    @usableFromInline final class VariantBox: Sendable {
        let variant: Variant
        init(_ variant: Variant) { self.variant = variant }
    }
}
