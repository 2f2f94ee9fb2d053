import Foundation
import ImagoCore

/// Reads one `name:arg:…` segment of an imgproxy URL into ``ProcessingOptions`` (imgproxy's names and aliases).
enum OptionParser {
    /// The option names and their aliases, each to the field it sets.
    enum Name {
        case resize, size, resizingType, width, height, minWidth, minHeight, zoom, dpr, enlarge, extend
        case extendAspectRatio, gravity, crop, trim, padding, background, quality, formatQuality, maxBytes, format, blur
        case sharpen, pixelate, rotate, flip, autoRotate, stripMetadata, keepCopyright, stripColorProfile, preserveHDR
        case cacheBuster
        case expires, filename, returnAttachment, preset, watermark, skipProcessing, raw, enforceThumbnail
        case maxSourceResolution, maxSourceFileSize, maxAnimationFrames, maxAnimationFrameResolution, maxResultDimension

        init?(_ text: Substring) {
            switch text {
            case "resize", "rs": self = .resize
            case "size", "s": self = .size
            case "resizing_type", "rt": self = .resizingType
            case "width", "w": self = .width
            case "height", "h": self = .height
            case "min-width", "mw": self = .minWidth
            case "min-height", "mh": self = .minHeight
            case "zoom", "z": self = .zoom
            case "dpr": self = .dpr
            case "enlarge", "el": self = .enlarge
            case "extend", "ex": self = .extend
            case "extend_aspect_ratio", "extend_ar", "exar": self = .extendAspectRatio
            case "gravity", "g": self = .gravity
            case "crop", "c": self = .crop
            case "trim", "t": self = .trim
            case "padding", "pd": self = .padding
            case "background", "bg": self = .background
            case "quality", "q": self = .quality
            case "format_quality", "fq": self = .formatQuality
            case "max_bytes", "mb": self = .maxBytes
            case "format", "f", "ext": self = .format
            case "blur", "bl": self = .blur
            case "sharpen", "sh": self = .sharpen
            case "pixelate", "pix": self = .pixelate
            case "rotate", "rot": self = .rotate
            case "flip", "fl": self = .flip
            case "auto_rotate", "ar": self = .autoRotate
            case "strip_metadata", "sm": self = .stripMetadata
            case "keep_copyright", "kcr": self = .keepCopyright
            case "strip_color_profile", "scp": self = .stripColorProfile
            case "preserve_hdr", "ph": self = .preserveHDR
            case "cachebuster", "cb": self = .cacheBuster
            case "expires", "exp": self = .expires
            case "filename", "fn": self = .filename
            case "return_attachment", "att": self = .returnAttachment
            case "preset", "pr": self = .preset
            case "watermark", "wm": self = .watermark
            case "skip_processing", "skp": self = .skipProcessing
            case "raw": self = .raw
            case "enforce_thumbnail", "eth": self = .enforceThumbnail
            case "max_src_resolution", "msr": self = .maxSourceResolution
            case "max_src_file_size", "msfs": self = .maxSourceFileSize
            case "max_animation_frames", "maf": self = .maxAnimationFrames
            case "max_animation_frame_resolution", "mafr": self = .maxAnimationFrameResolution
            case "max_result_dimension", "mrd": self = .maxResultDimension
            default: return nil
            }
        }
    }

    /// The largest box side (after DPR) the proxy renders, and the largest side of any result.
    static let maximumSide = 8192
    /// The largest padding of one side, after DPR.
    static let maximumPadding = 1024
    /// How deep presets may name presets.
    static let maximumPresetDepth = 8

    /// The fields of ``ProcessingOptions`` that client hints give defaults for (``ClientHints``), as options set
    /// them: a URL or preset that sets one, even to its default (`dpr:1`, `w:0`), keeps it from the hint.
    struct HintedFields: OptionSet, Hashable, Sendable {
        let rawValue: UInt8
        /// `dpr`.
        static let dpr = HintedFields(rawValue: 1)
        /// The width, by `width`, `size` or `resize`.
        static let width = HintedFields(rawValue: 2)
    }

    /// Applies `segment`, its name and arguments separated by `separator` (default `:`), to `options`; `presets`
    /// are the named option lists `preset:` may use.
    static func apply(
        _ segment: Substring, to options: inout ProcessingOptions, presets: PresetTable = PresetTable(),
        separator: Character = ProxyPath.defaultArgumentsSeparator
    ) throws(ProxyError) {
        var fields: HintedFields = []
        try apply(segment, to: &options, presets: presets, separator: separator, depth: 0, setting: &fields)
    }

    /// Applies `segment` to `options` as ``apply(_:to:presets:separator:)``, adding to `fields` the hinted fields
    /// it sets.
    static func apply(
        _ segment: Substring, to options: inout ProcessingOptions, presets: PresetTable, separator: Character,
        setting fields: inout HintedFields
    ) throws(ProxyError) {
        try apply(segment, to: &options, presets: presets, separator: separator, depth: 0, setting: &fields)
    }

    /// Applies the presets `names` of `presets` in order, as `preset:name:…` does, adding to `fields` the hinted
    /// fields they set.
    static func applyPresets(
        _ names: [Substring], to options: inout ProcessingOptions, presets: PresetTable,
        setting fields: inout HintedFields
    ) throws(ProxyError) {
        try applyPresets(names, option: "preset", to: &options, presets: presets, depth: 0, setting: &fields)
    }

    private static func applyPresets(
        _ names: [Substring], option: String, to options: inout ProcessingOptions, presets: PresetTable, depth: Int,
        setting fields: inout HintedFields
    ) throws(ProxyError) {
        guard !names.isEmpty else { throw .invalidOption(name: option, reason: "expects preset names") }
        guard depth < maximumPresetDepth else {
            throw .invalidOption(name: option, reason: "presets name each other more than \(maximumPresetDepth) deep")
        }
        for presetName in names {
            guard let segments = presets.segments(named: String(presetName)) else {
                throw .invalidOption(name: option, reason: "no preset named '\(presetName)'")
            }
            for presetSegment in segments {
                try apply(
                    presetSegment[...], to: &options, presets: presets, separator: presets.argumentsSeparator,
                    depth: depth + 1, setting: &fields)
            }
        }
    }

    private static func apply(
        _ segment: Substring, to options: inout ProcessingOptions, presets: PresetTable, separator: Character,
        depth: Int, setting fields: inout HintedFields
    ) throws(ProxyError) {
        let parts = segment.split(separator: separator, omittingEmptySubsequences: false)
        let nameText = parts[0]
        let args = Array(parts.dropFirst())
        guard let name = Name(nameText) else { throw .unknownOption(name: String(nameText)) }
        let option = String(nameText)
        func count(_ range: ClosedRange<Int>) throws(ProxyError) {
            guard range.contains(args.count) else {
                throw .invalidOption(
                    name: option, reason: "expects \(range.lowerBound)…\(range.upperBound) arguments, got \(args.count)"
                )
            }
        }
        switch name {
        case .resize:
            try count(1...8)
            if !args[0].isEmpty { options.resizingType = try resizingType(args[0], option: option) }
            try applySize(args.dropFirst(), to: &options, option: option, setting: &fields)
        case .size:
            try count(1...7)
            try applySize(args[...], to: &options, option: option, setting: &fields)
        case .resizingType:
            try count(1...1)
            options.resizingType = try resizingType(args[0], option: option)
        case .width, .height, .minWidth, .minHeight:
            try count(1...1)
            let field: WritableKeyPath<ProcessingOptions, Int> =
                switch name {
                case .width: \.width
                case .height: \.height
                case .minWidth: \.minWidth
                default: \.minHeight
                }
            options[keyPath: field] = try side(args[0], option: option)
            if name == .width { fields.insert(.width) }
        case .zoom:
            try count(1...2)
            let x = try number(args[0], option: option, above: 0, atMost: 8)
            options.zoomX = x
            options.zoomY = args.count > 1 ? try number(args[1], option: option, above: 0, atMost: 8) : x
        case .dpr:
            try count(1...1)
            options.dpr = try number(args[0], option: option, above: 0, atMost: 8)
            fields.insert(.dpr)
        case .enlarge:
            try count(1...1)
            options.enlarges = try flag(args[0], option: option)
        case .extend, .extendAspectRatio:
            try count(1...4)
            let field: WritableKeyPath<ProcessingOptions, ProcessingOptions.Placement?> =
                name == .extend ? \.extend : \.extendAspectRatio
            options[keyPath: field] = try extensionPlacement(args[...], option: option)
        case .gravity:
            try count(1...3)
            let placement = try placement(args[...], option: option)
            options.gravity = placement.gravity
            options.gravityOffsetX = placement.offsetX
            options.gravityOffsetY = placement.offsetY
        case .crop:
            try count(2...5)
            let width = try number(args[0], option: option, atLeast: 0, atMost: Double(maximumSide))
            let height = try number(args[1], option: option, atLeast: 0, atMost: Double(maximumSide))
            let placement = args.count > 2 ? try placement(args[2...], option: option) : nil
            options.crop =
                width == 0 && height == 0 && placement == nil
                ? nil : ProcessingOptions.CropArea(width: width, height: height, placement: placement)
        case .trim:
            try count(1...4)
            let threshold = try number(args[0], option: option, atLeast: 0, atMost: 255)
            var color: RGBA?
            if args.count > 1, !args[1].isEmpty {
                // imgproxy's transparency key: magenta trims a transparent border.
                color =
                    args[1].lowercased() == "ff00ff"
                    ? RGBA(r: 0, g: 0, b: 0, a: 0) : try self.color([args[1]], option: option)
            }
            options.trim = ImageProcessors.Trim(
                threshold: Int(threshold.rounded()), color: color,
                equalHorizontal: args.count > 2 && !args[2].isEmpty ? try flag(args[2], option: option) : false,
                equalVertical: args.count > 3 && !args[3].isEmpty ? try flag(args[3], option: option) : false)
        case .padding:
            try count(1...4)
            let sides = try args.map { text throws(ProxyError) -> Int? in
                text.isEmpty ? nil : try integer(text, option: option, range: 0...maximumPadding)
            }
            guard let top = sides[0] else {
                throw .invalidOption(name: option, reason: "the top padding must be given")
            }
            let right = sides.count > 1 ? sides[1] ?? top : top
            let bottom = sides.count > 2 ? sides[2] ?? top : top
            let left = sides.count > 3 ? sides[3] ?? right : right
            options.padding = ProcessingOptions.Padding(top: top, right: right, bottom: bottom, left: left)
        case .background:
            options.background = try color(args, option: option)
        case .quality:
            try count(1...1)
            let quality = try integer(args[0], option: option, range: 0...100)
            options.quality = quality == 0 ? nil : quality
        case .formatQuality:
            guard !args.isEmpty, args.count.isMultiple(of: 2) else {
                throw .invalidOption(name: option, reason: "expects pairs of format and quality")
            }
            for pair in stride(from: 0, to: args.count, by: 2) {
                let format = try format(named: String(args[pair]), option: option)
                options.formatQuality[format] = try integer(args[pair + 1], option: option, range: 1...100)
            }
        case .maxBytes:
            try count(1...1)
            options.maxBytes = try integer(args[0], option: option, range: 0...(1 << 30))
        case .format:
            try count(1...1)
            options.format = try outputFormat(named: String(args[0]), option: option)
        case .blur:
            try count(1...1)
            options.blurSigma = try number(args[0], option: option, atLeast: 0, atMost: 100)
        case .sharpen:
            try count(1...1)
            options.sharpenSigma = try number(args[0], option: option, atLeast: 0, atMost: 100)
        case .pixelate:
            try count(1...1)
            options.pixelateSize = try integer(args[0], option: option, range: 0...maximumSide)
        case .rotate:
            try count(1...1)
            // Any multiple of 90, as imgproxy takes it (450 is 90).
            guard let degrees = Int(args[0]) else {
                throw .invalidOption(name: option, reason: "'\(args[0])' is not a whole number")
            }
            guard degrees.isMultiple(of: 90) else {
                throw .invalidOption(name: option, reason: "angle must be a multiple of 90")
            }
            options.rotation = (degrees % 360 + 360) % 360
        case .flip:
            // imgproxy's: an empty argument leaves that direction as it was.
            try count(1...2)
            if !args[0].isEmpty { options.flipsHorizontally = try flag(args[0], option: option) }
            if args.count > 1, !args[1].isEmpty { options.flipsVertically = try flag(args[1], option: option) }
        case .autoRotate:
            try count(1...1)
            options.autoRotates = try flag(args[0], option: option)
        case .stripMetadata:
            try count(1...1)
            options.keepsMetadata = try !flag(args[0], option: option)
        case .stripColorProfile:
            try count(1...1)
            options.keepsColorProfile = try !flag(args[0], option: option)
        case .keepCopyright:
            try count(1...1)
            options.keepsCopyright = try flag(args[0], option: option)
        case .preserveHDR:
            try count(1...1)
            guard try !flag(args[0], option: option) else {
                throw .invalidOption(name: option, reason: "outputs are 8 bits a channel, SDR (only 0 is accepted)")
            }
        case .enforceThumbnail:
            try count(1...1)
            options.enforcesThumbnail = try flag(args[0], option: option)
        case .maxSourceResolution:
            try count(1...1)
            options.security.maxSourcePixels = try megapixels(args[0], option: option)
        case .maxSourceFileSize:
            try count(1...1)
            options.security.maxSourceBytes = try integer(args[0], option: option, range: 1...(1 << 40))
        case .maxAnimationFrames:
            try count(1...1)
            options.security.maxAnimationFrames = try integer(args[0], option: option, range: 1...10_000)
        case .maxAnimationFrameResolution:
            try count(1...1)
            options.security.maxAnimationFramePixels = try megapixels(args[0], option: option)
        case .maxResultDimension:
            try count(1...1)
            options.security.maxResultDimension = try integer(args[0], option: option, range: 1...maximumSide)
        case .skipProcessing:
            guard !args.isEmpty else { throw .invalidOption(name: option, reason: "expects at least one format") }
            for name in args {
                options.skippedFormats.formUnion(try sourceFormats(named: String(name), option: option))
            }
        case .raw:
            try count(1...1)
            guard try !flag(args[0], option: option) else {
                throw .invalidOption(
                    name: option,
                    reason: "sources are never passed on unchecked (only 0 is accepted; skip_processing passes a "
                        + "checked source's bytes on)")
            }
        case .watermark:
            try count(1...5)
            let opacity = try number(args[0], option: option, atLeast: 0, atMost: 1)
            guard opacity > 0 else {
                options.watermark = nil
                break
            }
            var gravity: ProcessingOptions.Gravity? = .center
            if args.count > 1, !args[1].isEmpty, args[1] != "ce" {
                if args[1] == "re" {
                    gravity = nil
                } else {
                    let position = try placement([args[1]], option: option).gravity
                    guard position != .focusPoint, position != .smart else {
                        throw .invalidOption(
                            name: option, reason: "position must be ce, no, so, ea, we, noea, nowe, soea, sowe or re")
                    }
                    gravity = position
                }
            }
            let limit = Double(maximumSide)
            func argument(_ index: Int, _ low: Double, _ high: Double) throws(ProxyError) -> Double {
                args.count > index && !args[index].isEmpty
                    ? try number(args[index], option: option, atLeast: low, atMost: high) : 0
            }
            options.watermark = ProcessingOptions.WatermarkPlacement(
                opacity: opacity, gravity: gravity, offsetX: try argument(2, -limit, limit),
                offsetY: try argument(3, -limit, limit), scale: try argument(4, 0, 1))
        case .cacheBuster:
            try count(1...1)
            options.cacheBuster = String(args[0])
        case .expires:
            try count(1...1)
            guard let time = Int(args[0]) else {
                throw .invalidOption(name: option, reason: "'\(args[0])' is not a Unix time in seconds")
            }
            options.expires = time
        case .filename:
            try count(1...2)
            options.filename = try filename(
                args[0], isBase64: args.count > 1 ? try flag(args[1], option: option) : false, option: option)
        case .returnAttachment:
            try count(1...1)
            options.returnsAttachment = try flag(args[0], option: option)
        case .preset:
            try applyPresets(args, option: option, to: &options, presets: presets, depth: depth, setting: &fields)
        }
        let box = options.scaledBox
        guard box.width <= maximumSide, box.height <= maximumSide else {
            throw .invalidOption(name: option, reason: "the size times dpr must be at most \(maximumSide) pixels")
        }
        let padding = options.padding
        guard
            [padding.top, padding.right, padding.bottom, padding.left].allSatisfy({
                options.scaled($0) <= maximumPadding
            })
        else {
            throw .invalidOption(name: option, reason: "padding times dpr must be at most \(maximumPadding) pixels")
        }
    }

    /// `width:height:enlarge:extend:gravity…`, the arguments `size` and `resize` share.
    private static func applySize(
        _ args: ArraySlice<Substring>, to options: inout ProcessingOptions, option: String,
        setting fields: inout HintedFields
    ) throws(ProxyError) {
        let args = Array(args)
        if args.count > 0, !args[0].isEmpty {
            options.width = try side(args[0], option: option)
            fields.insert(.width)
        }
        if args.count > 1, !args[1].isEmpty { options.height = try side(args[1], option: option) }
        if args.count > 2, !args[2].isEmpty { options.enlarges = try flag(args[2], option: option) }
        if args.count > 3, !args[3].isEmpty { options.extend = try extensionPlacement(args[3...], option: option) }
    }

    /// `extend:gravity:x:y` (the gravity and offsets optional): the placement when `extend` is true, else `nil`.
    private static func extensionPlacement(
        _ args: ArraySlice<Substring>, option: String
    ) throws(ProxyError) -> ProcessingOptions.Placement? {
        guard try flag(args[args.startIndex], option: option) else { return nil }
        let rest = args.dropFirst()
        if rest.isEmpty || rest.first?.isEmpty == true { return ProcessingOptions.Placement() }
        let placement = try placement(rest, option: option)
        guard placement.gravity != .smart else {
            throw .invalidOption(name: option, reason: "an extension cannot be placed by smart gravity")
        }
        return placement
    }

    /// `type:x:y`: a gravity with optional offsets (for `fp`, the point's coordinates 0…1).
    private static func placement(
        _ args: ArraySlice<Substring>, option: String
    ) throws(ProxyError) -> ProcessingOptions.Placement {
        let args = Array(args)
        guard let gravity = ProcessingOptions.Gravity(rawValue: String(args[0])) else {
            throw .invalidOption(
                name: option, reason: "gravity must be ce, no, so, ea, we, noea, nowe, soea, sowe, fp or sm")
        }
        guard args.count <= 3 else { throw .invalidOption(name: option, reason: "too many gravity arguments") }
        if gravity == .smart {
            guard args.count == 1 else { throw .invalidOption(name: option, reason: "sm takes no offsets") }
            return ProcessingOptions.Placement(gravity: .smart)
        }
        if gravity == .focusPoint {
            guard args.count == 3 else {
                throw .invalidOption(name: option, reason: "fp expects x and y from 0 to 1")
            }
            return ProcessingOptions.Placement(
                gravity: gravity, offsetX: try number(args[1], option: option, atLeast: 0, atMost: 1),
                offsetY: try number(args[2], option: option, atLeast: 0, atMost: 1))
        }
        let limit = Double(maximumSide)
        return ProcessingOptions.Placement(
            gravity: gravity,
            offsetX: args.count > 1 && !args[1].isEmpty
                ? try number(args[1], option: option, atLeast: -limit, atMost: limit) : 0,
            offsetY: args.count > 2 && !args[2].isEmpty
                ? try number(args[2], option: option, atLeast: -limit, atMost: limit) : 0)
    }

    /// `R:G:B` (0…255 each) or `rrggbb` hex; no arguments (or one empty one) means none.
    private static func color(_ args: [Substring], option: String) throws(ProxyError) -> RGBA? {
        switch args.count {
        case 0: return nil
        case 1:
            let hex = args[0]
            if hex.isEmpty { return nil }
            guard hex.count == 6 || hex.count == 3, let value = UInt32(hex, radix: 16) else {
                throw .invalidOption(name: option, reason: "'\(hex)' is not a hex colour (rrggbb or rgb)")
            }
            if hex.count == 3 {
                let (r, g, b) = ((value >> 8) & 0xF, (value >> 4) & 0xF, value & 0xF)
                return RGBA(r: UInt8(r * 17), g: UInt8(g * 17), b: UInt8(b * 17))
            }
            return RGBA(r: UInt8(value >> 16 & 0xFF), g: UInt8(value >> 8 & 0xFF), b: UInt8(value & 0xFF))
        case 3:
            let channels = try args.map { text throws(ProxyError) in
                UInt8(try integer(text, option: option, range: 0...255))
            }
            return RGBA(r: channels[0], g: channels[1], b: channels[2])
        default:
            throw .invalidOption(name: option, reason: "expects R:G:B or a hex colour")
        }
    }

    /// A `filename` argument: percent-escaped text, or base64url when `isBase64`; no path separators or quotes.
    private static func filename(_ text: Substring, isBase64: Bool, option: String) throws(ProxyError) -> String {
        let decoded: String?
        if isBase64 {
            decoded = Base64URL.decode(text).flatMap { String(validating: $0, as: UTF8.self) }
        } else {
            decoded = String(text).removingPercentEncoding
        }
        guard let name = decoded, !name.isEmpty, name.utf8.count <= 255,
            !name.unicodeScalars.contains(where: {
                $0.value < 0x20 || $0 == "/" || $0 == "\\" || $0 == "\"" || $0.value == 0x7F
            })
        else {
            throw .invalidOption(
                name: option, reason: "the file name must be 1…255 bytes without / \\ \" or control characters")
        }
        return name
    }

    private static func resizingType(
        _ text: Substring, option: String
    ) throws(ProxyError) -> ProcessingOptions.ResizingType {
        guard let type = ProcessingOptions.ResizingType(rawValue: String(text)) else {
            throw .invalidOption(name: option, reason: "type must be fit, fill, fill-down, force or auto")
        }
        return type
    }

    /// The output format a URL's `format` option or extension names: one of ``format(named:option:)``'s, or `svg`,
    /// which only an SVG source can be answered in (its own document, sanitized).
    static func outputFormat(named name: String, option: String) throws(ProxyError) -> ImageFormat {
        name.lowercased() == "svg" ? .svg : try format(named: name, option: option)
    }

    /// The format an encoder writes for `name` (`jpeg`, `jpg`, `png`, `gif`, `webp`, `avif`, `jxl`, `heic`, `heif`,
    /// `bmp`, `ico`, `tiff`, `tif`), case-insensitive.
    static func format(named name: String, option: String) throws(ProxyError) -> ImageFormat {
        switch name.lowercased() {
        case "jpeg", "jpg": return .jpeg
        case "png": return .png
        case "gif": return .gif
        case "webp": return .webp
        case "avif": return .avif
        case "jxl": return .jpegXL
        case "bmp": return .bmp
        case "ico": return .ico
        case "tiff", "tif": return .tiff
        case "heic", "heif": return .heic
        default:
            throw .invalidOption(
                name: option, reason: "format must be jpeg, jpg, png, gif, webp, avif, jxl, heic, bmp, ico or tiff")
        }
    }

    /// The source formats `skip_processing` names by `name` (imgproxy's image types: `png` is PNG and APNG, `heic`
    /// and `heif` are all HEIF).
    static func sourceFormats(named name: String, option: String) throws(ProxyError) -> Set<ImageFormat> {
        switch name.lowercased() {
        case "jpeg", "jpg": [.jpeg]
        case "png", "apng": [.png, .apng]
        case "gif": [.gif]
        case "webp": [.webp]
        case "avif": [.avif]
        case "heic", "heif": [.heic, .heif]
        case "jxl": [.jpegXL]
        case "bmp": [.bmp]
        case "ico": [.ico]
        case "tiff", "tif": [.tiff]
        case "svg": [.svg]
        default:
            throw .invalidOption(
                name: option,
                reason: "'\(name)' is not a format: jpg, png, gif, webp, avif, heic, jxl, bmp, ico, tiff or svg")
        }
    }

    private static func side(_ text: Substring, option: String) throws(ProxyError) -> Int {
        try integer(text, option: option, range: 0...maximumSide)
    }

    private static func integer(_ text: Substring, option: String, range: ClosedRange<Int>) throws(ProxyError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw .invalidOption(
                name: option, reason: "'\(text)' is not a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// A finite number in `atLeast…atMost`.
    private static func number(
        _ text: Substring, option: String, atLeast low: Double, atMost high: Double
    ) throws(ProxyError) -> Double {
        guard let value = Double(text), value.isFinite, value >= low, value <= high else {
            throw .invalidOption(
                name: option,
                reason:
                    "'\(text)' is not a number from \(ProcessingOptions.text(low)) to \(ProcessingOptions.text(high))")
        }
        return value
    }

    /// A finite number above `low` and at most `high`.
    private static func number(
        _ text: Substring, option: String, above low: Double, atMost high: Double
    ) throws(ProxyError) -> Double {
        guard let value = Double(text), value.isFinite, value > low, value <= high else {
            throw .invalidOption(
                name: option,
                reason:
                    "'\(text)' is not a number above \(ProcessingOptions.text(low)) and at most \(ProcessingOptions.text(high))"
            )
        }
        return value
    }

    /// Pixels from a number of megapixels above 0 and at most 1,000 (imgproxy's resolutions), at least 1.
    private static func megapixels(_ text: Substring, option: String) throws(ProxyError) -> Int {
        max(1, Int((try number(text, option: option, above: 0, atMost: 1_000) * 1_000_000).rounded()))
    }

    /// The booleans imgproxy reads (Go's `strconv.ParseBool`); where imgproxy takes anything else as false, with a
    /// warning in its log, the URL is a 400 naming it.
    private static func flag(_ text: Substring, option: String) throws(ProxyError) -> Bool {
        switch text {
        case "1", "t", "T", "true", "TRUE", "True": return true
        case "0", "f", "F", "false", "FALSE", "False": return false
        default: throw .invalidOption(name: option, reason: "'\(text)' is not a boolean (1, t, true, 0, f, false)")
        }
    }
}
