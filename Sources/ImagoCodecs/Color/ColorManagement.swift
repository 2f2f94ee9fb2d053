import CLCMS2
import Foundation
import ImagoCore

/// Colour management with lcms2: converts decoded pixels from the colour space their file declares to sRGB, or
/// keeps the profile, as ``DecodingOptions/colorPolicy`` says.
///
/// Decoders read the file's ``ColorSource`` (an ICC profile, PNG `sRGB`/`gAMA`/`cHRM`, CICP code points) and call
/// ``apply(_:to:options:)`` on the decoded container. A transform is created once per distinct source, layout,
/// intent and black-point setting and kept in a bounded cache; a source that turns out sRGB-equivalent (no 8-bit
/// value moves by more than 1, checked once when its transform is made) is remembered as such and costs nothing
/// afterwards, like an image without a profile. A profile lcms2 cannot parse, that is larger than
/// ``maximumProfileSize``, of the wrong colour space for the pixels, or not an image profile is ignored: the
/// pixels are then taken as sRGB and the reason is the container's ``ImageContainer/colorWarning`` (nothing is
/// written anywhere: a library's decoder has no business with the process's standard error, which a server's
/// stalled or closed log pipe would turn into a stall or a crash).
///
/// For decoders of other formats (AVIF/HEIF `colr`, JPEG XL): read the profile or code points into a
/// ``ColorSource`` and call ``apply(_:to:options:)``, or ``convertToSRGB(_:source:intent:blackPointCompensation:)``
/// on a single buffer.
package enum ColorManagement {
    /// The largest ICC profile read, 8 MiB (a JPEG can carry up to 255 × 65,519 bytes; real profiles are a few
    /// KB, LUT-based ones up to a few hundred KB).
    package static let maximumProfileSize = 8 << 20

    /// What became of a conversion.
    package enum Outcome: Equatable, Sendable {
        /// The pixels were converted to sRGB.
        case converted
        /// The source is sRGB or sRGB-equivalent: the pixels were left alone.
        case alreadySRGB
        /// The source could not be used (the reason says why): the pixels were left alone.
        case ignored(String)
    }

    /// Applies `options.colorPolicy` to every frame of `container`, whose pixels are in `source`'s colour space.
    /// Sets ``ImageContainer/sourceColorProfileDescription``, with ``ColorPolicy/keep`` also
    /// ``ImageContainer/colorProfile``, and for a source that cannot be used ``ImageContainer/colorWarning``. Does
    /// nothing with ``ColorPolicy/ignore`` or a `nil` source.
    package static func apply(_ source: ColorSource?, to container: inout ImageContainer, options: DecodingOptions) {
        guard options.colorPolicy != .ignore, let source else { return }
        let prepared = prepared(source, layout: container.image.format == .gray8 ? .gray : .rgba, options: options)
        container.sourceColorProfileDescription = prepared.description
        if case .unusable(let reason) = prepared.kind { container.colorWarning = reason }
        switch options.colorPolicy {
        case .ignore: return
        case .keep:
            if let data = prepared.iccData {
                container.colorProfile = ColorProfile(
                    data: data, description: prepared.description, converter: LCMSColorConverter())
            }
        case .convertToSRGB:
            guard case .transform(let transform) = prepared.kind else { return }
            if container.frameSource != nil {
                container = (try? container.mapFramesLazily { convert($0, with: transform) }) ?? container
            } else {
                // In place: the frames are taken out of the container first, so that their pixels are uniquely
                // referenced and converting them copies nothing (a copy of a 12 MP frame costs ~20 ms).
                var frames = container.frames
                container.frames = []
                for index in frames.indices {
                    let isOpaque = frames[index].buffer.isKnownOpaque
                    frames[index].buffer.withUnsafeMutableBytes { transform.convert($0) }
                    if isOpaque && frames[index].buffer.format == .rgba8 {
                        frames[index].buffer = frames[index].buffer.assumingOpaque()
                    }
                }
                container.frames = frames
            }
        }
    }

    /// `buffer` converted from `source` to sRGB (gray stays gray), or unchanged with the reason when the source is
    /// sRGB-equivalent or unusable.
    package static func convertToSRGB(
        _ buffer: PixelBuffer, source: ColorSource, intent: RenderingIntent = .perceptual,
        blackPointCompensation: Bool = true
    ) -> (buffer: PixelBuffer, outcome: Outcome) {
        var options = DecodingOptions()
        options.renderingIntent = intent
        options.usesBlackPointCompensation = blackPointCompensation
        let prepared = prepared(source, layout: buffer.format == .gray8 ? .gray : .rgba, options: options)
        switch prepared.kind {
        case .transform(let transform): return (convert(buffer, with: transform), .converted)
        case .identity: return (buffer, .alreadySRGB)
        case .unusable(let reason): return (buffer, .ignored(reason))
        }
    }

    /// `buffer` converted from the ICC profile `iccProfile` to sRGB; see
    /// ``convertToSRGB(_:source:intent:blackPointCompensation:)``.
    package static func convertToSRGB(
        buffer: PixelBuffer, iccProfile: Data, intent: RenderingIntent = .perceptual,
        blackPointCompensation: Bool = true
    ) -> (buffer: PixelBuffer, outcome: Outcome) {
        convertToSRGB(buffer, source: .icc(iccProfile), intent: intent, blackPointCompensation: blackPointCompensation)
    }

    /// `buffer`, whose colours are sRGB's, converted into the colour space of the ICC profile `iccProfile` (relative
    /// colorimetric: in-gamut colours exact): for what is painted into an image kept in its profile's space
    /// (``ColorPolicy/keep``), a background or a watermark. Unchanged when the profile is sRGB-equivalent or
    /// unusable.
    package static func convertFromSRGB(_ buffer: PixelBuffer, to iccProfile: Data) -> PixelBuffer {
        var options = DecodingOptions()
        options.renderingIntent = .relativeColorimetric
        options.usesBlackPointCompensation = false
        let prepared = prepared(
            .icc(iccProfile), layout: buffer.format == .gray8 ? .gray : .rgba, options: options, fromSRGB: true)
        guard case .transform(let transform) = prepared.kind else { return buffer }
        return convert(buffer, with: transform)
    }

    /// The ICC bytes of a matrix/TRC profile for CICP `primaries` and `transfer` (ITU-T H.273), e.g. for an
    /// AVIF `nclx` box under ``ColorPolicy/keep``; `nil` for code points without such a profile (PQ, HLG, unknown).
    package static func iccProfile(cicpPrimaries primaries: Int, transfer: Int) -> Data? {
        ProfileFactory.profile(for: .cicp(primaries: primaries, transfer: transfer), isGray: false)?.serialized()
    }

    /// A CMYK-to-sRGB transform for a JPEG's profile (Adobe files: `isInverted`), the profile's description, and
    /// why it cannot be used; the transform is `nil` when the profile is unusable, and the caller falls back to the
    /// naive conversion. Used under ``ColorPolicy/keep`` too: CMYK cannot stay CMYK in an RGBA buffer.
    static func cmykTransform(
        profile: Data, isInverted: Bool, options: DecodingOptions
    ) -> (transform: LCMSTransform?, description: String, warning: String?) {
        let prepared = prepared(.icc(profile), layout: .cmyk(isInverted: isInverted), options: options)
        switch prepared.kind {
        case .transform(let transform): return (transform, prepared.description, nil)
        case .identity: return (nil, prepared.description, nil)
        case .unusable(let reason): return (nil, prepared.description, reason)
        }
    }

    /// Where the standard CMYK profile is looked for, in order: Ghostscript's "Artifex CMYK SWOP Profile"
    /// (`default_cmyk.icc`, © Artifex Software, AGPL-3+), which Debian's `libgs-common` installs (and
    /// `scripts/install-deps.sh` brings). It is read from the system at run time, never shipped with Imago.
    package static let defaultCMYKProfilePaths = [
        "/usr/share/color/icc/ghostscript/default_cmyk.icc",
        "/usr/local/share/color/icc/ghostscript/default_cmyk.icc",
    ]

    /// The standard CMYK profile's bytes, read once from the first of ``defaultCMYKProfilePaths`` that exists;
    /// `nil` when none does (CMYK without a profile is then converted naively).
    package static let defaultCMYKProfile: Data? = defaultCMYKProfile(searching: defaultCMYKProfilePaths)

    /// The first readable file of `paths` of at most ``maximumProfileSize`` bytes that lcms2 reads as a CMYK
    /// profile.
    package static func defaultCMYKProfile(searching paths: [String]) -> Data? {
        for path in paths {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                let size = attributes[.size] as? Int, size > 0, size <= maximumProfileSize,
                let data = FileManager.default.contents(atPath: path),
                let profile = LCMSProfile.open(data), profile.colorSpace == cmsSigCmykData
            else { continue }
            return data
        }
        return nil
    }

    /// A CMYK-to-sRGB transform through ``defaultCMYKProfile`` for a JPEG without a profile; `nil` when the
    /// profile is not installed (the caller falls back to the naive conversion).
    static func defaultCMYKTransform(isInverted: Bool, options: DecodingOptions) -> LCMSTransform? {
        guard let profile = defaultCMYKProfile else { return nil }
        let prepared = prepared(.icc(profile), layout: .cmyk(isInverted: isInverted), options: options)
        if case .transform(let transform) = prepared.kind { return transform }
        return nil
    }

    private static func convert(_ buffer: PixelBuffer, with transform: LCMSTransform) -> PixelBuffer {
        let isOpaque = buffer.isKnownOpaque
        var result = buffer
        result.withUnsafeMutableBytes { transform.convert($0) }
        return isOpaque && result.format == .rgba8 ? result.assumingOpaque() : result
    }

    // MARK: - Preparing sources (cached)

    /// A source ready to use: its transform (or why there is none), its description and its ICC bytes.
    struct Prepared: Sendable {
        enum Kind: Sendable {
            case transform(LCMSTransform)
            case identity
            case unusable(String)
        }
        var kind: Kind
        var description: String
        /// The profile as ICC bytes: the file's own, or one built for PNG gamma/CICP sources (for ``ColorPolicy/keep``).
        var iccData: Data?
    }

    /// What identifies a transform: the source (an ICC profile by its bytes, compared in full), the layout and
    /// the conversion settings.
    struct Key: Hashable, Sendable {
        var source: ColorSource
        var layout: LCMSTransform.Layout
        var intent: RenderingIntent
        var blackPointCompensation: Bool
        /// From sRGB to the source's space rather than the other way.
        var fromSRGB = false
    }

    /// Prepared sources, least recently used dropped first: at most 32 and 64 MiB of profile bytes (a key holds
    /// its profile). lcms2 transforms of LUT profiles take a few hundred KB each.
    static let cache = Locked(LRUCache<Key, Prepared>(costLimit: 64 << 20, countLimit: 32))

    /// Empties the transform and curve caches. The fuzz replay does before it exits: LeakSanitizer cannot follow Swift's
    /// tagged references into the cache and would report every cached profile and transform as leaked.
    package static func removeCachedTransforms() {
        let dropped = cache.withLock { $0.removeAll() }
        let curves = curveCache.withLock { $0.removeAll() }
        _ = (dropped, curves)  // released after the lock
    }

    /// `source` prepared for `layout` (from the cache, or made and cached).
    static func prepared(
        _ source: ColorSource, layout: LCMSTransform.Layout, options: DecodingOptions, fromSRGB: Bool = false
    ) -> Prepared {
        if case .unreadable(let reason) = source {
            return Prepared(kind: .unusable(reason), description: source.fallbackDescription, iccData: nil)
        }
        let key = Key(
            source: source, layout: layout, intent: options.renderingIntent,
            blackPointCompensation: options.usesBlackPointCompensation, fromSRGB: fromSRGB)
        if let hit = cache.withLock({ $0.value(for: key, now: { .zero }) }) { return hit }
        // Made outside the lock (lcms2 work, possibly milliseconds for a LUT profile); a racing thread may make
        // the same one, and the later store simply replaces the earlier.
        let made = make(source, layout: layout, options: options, fromSRGB: fromSRGB)
        var cost = 4096
        if case .icc(let data) = source { cost += data.count }
        let dropped = cache.withLock { $0.setValue(made, for: key, cost: cost) }
        _ = dropped  // released here, after the lock: deleting a transform is lcms2 work
        return made
    }

    private static func make(
        _ source: ColorSource, layout: LCMSTransform.Layout, options: DecodingOptions, fromSRGB: Bool
    ) -> Prepared {
        let fallback = source.fallbackDescription
        if case .sRGB = source { return Prepared(kind: .identity, description: "sRGB", iccData: nil) }
        if case .icc(let data) = source, data.count > maximumProfileSize {
            return Prepared(
                kind: .unusable("colour profile of \(data.count) bytes is over the \(maximumProfileSize)-byte limit"),
                description: fallback, iccData: nil)
        }
        let profile: LCMSProfile?
        switch source {
        case .icc(let data): profile = LCMSProfile.open(data)
        default: profile = ProfileFactory.profile(for: source, isGray: layout == .gray)
        }
        guard let profile else {
            let reason =
                if case .icc = source { "colour profile does not parse" } else { "cannot convert from \(fallback)" }
            return Prepared(kind: .unusable(reason), description: fallback, iccData: nil)
        }
        let description = profile.description ?? fallback
        let iccData: Data? =
            if case .icc(let data) = source { data } else { profile.serialized() }
        func unusable(_ reason: String) -> Prepared {
            Prepared(
                kind: .unusable("colour profile '\(description)' \(reason)"), description: description, iccData: nil)
        }
        guard profile.isImageProfile else { return unusable("is not an image profile") }
        guard profile.colorSpace == layout.colorSpace else {
            return unusable("does not match the image's colour space")
        }
        guard
            let transform = LCMSTransform.make(
                from: profile, layout: layout, intent: options.renderingIntent,
                blackPointCompensation: options.usesBlackPointCompensation, fromSRGB: fromSRGB)
        else { return unusable("cannot be converted \(fromSRGB ? "from" : "to") sRGB by lcms2") }
        let kind: Prepared.Kind = transform.isNearIdentity() ? .identity : .transform(transform)
        return Prepared(kind: kind, description: description, iccData: iccData)
    }
}
