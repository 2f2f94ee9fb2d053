import CLCMS2
import ImagoCore

/// An lcms2 transform from one source colour space to sRGB (or from sRGB to it), for one pixel layout.
///
/// `@unchecked Sendable`: the handle is created with `cmsFLAGS_NOCACHE`, which is what makes an lcms2 transform
/// safe to run from several threads at once (the one-pixel cache is its only mutable state), and it is never
/// changed after creation; `deinit` deletes it once nothing holds the wrapper.
final class LCMSTransform: @unchecked Sendable {
    /// The pixel layout a transform reads and writes.
    enum Layout: Hashable, Sendable {
        /// RGBA8 in, RGBA8 out, alpha copied.
        case rgba
        /// Gray8 in, gray8 out (sRGB's tone curve).
        case gray
        /// CMYK8 in (4 bytes), RGBA8 out with alpha 255; `isInverted` for Adobe files, which store 255 − ink.
        case cmyk(isInverted: Bool)

        var inputFormat: cmsUInt32Number {
            switch self {
            case .rgba: cimago_lcms_type_rgba_8
            case .gray: cimago_lcms_type_gray_8
            case .cmyk(let isInverted): isInverted ? cimago_lcms_type_cmyk_8_rev : cimago_lcms_type_cmyk_8
            }
        }

        var outputFormat: cmsUInt32Number { self == .gray ? cimago_lcms_type_gray_8 : cimago_lcms_type_rgba_8 }

        /// The ICC colour space a source profile must have for this layout.
        var colorSpace: cmsColorSpaceSignature {
            switch self {
            case .rgba: cmsSigRgbData
            case .gray: cmsSigGrayData
            case .cmyk: cmsSigCmykData
            }
        }

        var bytesPerPixel: Int { self == .gray ? 1 : 4 }
    }

    let handle: cmsHTRANSFORM
    let layout: Layout
    /// For RGBA from a matrix/TRC profile: the same conversion without lcms2's pipeline.
    let fast: MatrixShaperTransform?

    private init(handle: cmsHTRANSFORM, layout: Layout, fast: MatrixShaperTransform?) {
        self.handle = handle
        self.layout = layout
        self.fast = fast
    }

    deinit { cmsDeleteTransform(handle) }

    /// A transform from `source` to sRGB (gray to sRGB-gray) for `layout`, or with `fromSRGB` the other way (RGBA
    /// and gray only: colours given in sRGB painted into an image kept in `source`'s space); `nil` when lcms2 refuses
    /// the pair.
    static func make(
        from source: LCMSProfile, layout: Layout, intent: RenderingIntent, blackPointCompensation: Bool,
        fromSRGB: Bool = false
    ) -> LCMSTransform? {
        guard let sRGB = layout == .gray ? LCMSProfile.sRGBGray() : LCMSProfile.sRGB() else { return nil }
        if fromSRGB, case .cmyk = layout { return nil }
        let (input, output) = fromSRGB ? (sRGB, source) : (source, sRGB)
        var flags = cimago_lcms_flags_nocache
        if blackPointCompensation { flags |= cimago_lcms_flags_bpc }
        if layout == .rgba { flags |= cimago_lcms_flags_copy_alpha }
        let handle = cmsCreateTransform(
            input.handle, layout.inputFormat, output.handle, layout.outputFormat, cmsUInt32Number(intent.rawValue),
            flags)
        // (The fast path encodes with sRGB's curve: towards sRGB only.)
        let fast =
            layout == .rgba && !fromSRGB
            ? MatrixShaperTransform(source: source, destination: sRGB, intent: intent) : nil
        return handle.map { LCMSTransform(handle: $0, layout: layout, fast: fast) }
    }

    /// Converts `pixels` (tightly packed, ``Layout/bytesPerPixel`` bytes each) in place. CMYK becomes RGBA with
    /// alpha 255. Works through a small scratch buffer, a chunk of pixels at a time.
    func convert(_ pixels: UnsafeMutableRawBufferPointer) {
        if let fast {
            fast.convert(pixels)
            return
        }
        let bytesPerPixel = layout.bytesPerPixel
        let total = pixels.count / bytesPerPixel
        let chunk = 8192
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk * bytesPerPixel, alignment: 16)
        defer { scratch.deallocate() }
        guard let base = pixels.baseAddress, let scratchBase = scratch.baseAddress else { return }
        // The output's alpha byte is an extra channel lcms2 does not write without COPY_ALPHA (CMYK input has none
        // to copy): 255 once, never overwritten.
        scratch.initializeMemory(as: UInt8.self, repeating: 255)
        var done = 0
        while done < total {
            let n = min(chunk, total - done)
            let at = base + done * bytesPerPixel
            cmsDoTransform(handle, at, scratch.baseAddress, cmsUInt32Number(n))
            at.copyMemory(from: scratchBase, byteCount: n * bytesPerPixel)
            done += n
        }
    }

    /// Whether the transform changes no 8-bit value by more than 1 (an sRGB or sRGB-equivalent source), tried on
    /// a grid of 16 levels per channel (gray: every level). Such sources are then skipped entirely.
    func isNearIdentity() -> Bool {
        var probe: [UInt8]
        switch layout {
        case .cmyk: return false
        case .gray: probe = (0...255).map { UInt8($0) }
        case .rgba:
            let levels = (0..<16).map { UInt8($0 * 17) }
            probe = []
            probe.reserveCapacity(16 * 16 * 16 * 4)
            for r in levels { for g in levels { for b in levels { probe += [r, g, b, 255] } } }
        }
        let original = probe
        probe.withUnsafeMutableBytes { convert($0) }
        return zip(probe, original).allSatisfy { abs(Int($0) - Int($1)) <= 1 }
    }
}
