import ImagoCore

/// Reads one `name:arg:…` segment of an imgproxy URL into ``ProcessingOptions`` (imgproxy's names and aliases).
enum OptionParser {
    /// The option names and their aliases, each to the field it sets.
    private enum Name: String {
        case resize, width, height, gravity, quality, format, blur, rotate, dpr, enlarge

        init?(_ text: Substring) {
            switch text {
            case "resize", "rs": self = .resize
            case "width", "w": self = .width
            case "height", "h": self = .height
            case "gravity", "g": self = .gravity
            case "quality", "q": self = .quality
            case "format", "f", "ext": self = .format
            case "blur", "bl": self = .blur
            case "rotate", "rot": self = .rotate
            case "dpr": self = .dpr
            case "enlarge", "el": self = .enlarge
            default: return nil
            }
        }
    }

    /// The largest box side (after DPR) the proxy renders.
    static let maximumSide = 8192

    /// Applies `segment` to `options`.
    static func apply(_ segment: Substring, to options: inout ProcessingOptions) throws(ProxyError) {
        let parts = segment.split(separator: ":", omittingEmptySubsequences: false)
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
            try count(1...5)
            if !args[0].isEmpty {
                guard let type = ProcessingOptions.ResizingType(rawValue: String(args[0])) else {
                    throw .invalidOption(name: option, reason: "type must be fit, fill or force")
                }
                options.resizingType = type
            }
            if args.count > 1, !args[1].isEmpty { options.width = try side(args[1], option: option) }
            if args.count > 2, !args[2].isEmpty { options.height = try side(args[2], option: option) }
            if args.count > 3, !args[3].isEmpty { options.enlarges = try flag(args[3], option: option) }
            if args.count > 4, !args[4].isEmpty, try flag(args[4], option: option) {
                throw .invalidOption(name: option, reason: "extend is not supported")
            }
        case .width:
            try count(1...1)
            options.width = try side(args[0], option: option)
        case .height:
            try count(1...1)
            options.height = try side(args[0], option: option)
        case .enlarge:
            try count(1...1)
            options.enlarges = try flag(args[0], option: option)
        case .gravity:
            try count(1...3)
            guard let gravity = ProcessingOptions.Gravity(rawValue: String(args[0])) else {
                throw .invalidOption(name: option, reason: "type must be ce, no, so, ea, we, noea, nowe, soea or sowe")
            }
            options.gravity = gravity
            options.gravityOffsetX = args.count > 1 ? try integer(args[1], option: option, range: -8192...8192) : 0
            options.gravityOffsetY = args.count > 2 ? try integer(args[2], option: option, range: -8192...8192) : 0
        case .quality:
            try count(1...1)
            let quality = try integer(args[0], option: option, range: 0...100)
            options.quality = quality == 0 ? nil : quality
        case .format:
            try count(1...1)
            options.format = try format(named: String(args[0]), option: option)
        case .blur:
            try count(1...1)
            guard let sigma = Double(args[0]), sigma.isFinite, sigma >= 0, sigma <= 100 else {
                throw .invalidOption(name: option, reason: "sigma must be a number from 0 to 100")
            }
            options.blurSigma = sigma
        case .rotate:
            try count(1...1)
            let degrees = try integer(args[0], option: option, range: -360...360)
            guard degrees.isMultiple(of: 90) else {
                throw .invalidOption(name: option, reason: "angle must be a multiple of 90")
            }
            options.rotation = (degrees % 360 + 360) % 360
        case .dpr:
            try count(1...1)
            guard let dpr = Double(args[0]), dpr.isFinite, dpr > 0, dpr <= 8 else {
                throw .invalidOption(name: option, reason: "must be a number above 0 and at most 8")
            }
            options.dpr = dpr
        }
        let box = options.scaledBox
        guard box.width <= maximumSide, box.height <= maximumSide else {
            throw .invalidOption(name: option, reason: "the size times dpr must be at most \(maximumSide) pixels")
        }
    }

    /// The output format for `name` (`jpeg`, `jpg`, `png`, `webp`, `avif`, `jxl`), case-insensitive.
    static func format(named name: String, option: String) throws(ProxyError) -> ImageFormat {
        switch name.lowercased() {
        case "jpeg", "jpg": return .jpeg
        case "png": return .png
        case "webp": return .webp
        case "avif": return .avif
        case "jxl": return .jpegXL
        default: throw .invalidOption(name: option, reason: "format must be jpeg, jpg, png, webp, avif or jxl")
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

    private static func flag(_ text: Substring, option: String) throws(ProxyError) -> Bool {
        switch text {
        case "1", "t", "true": return true
        case "0", "f", "false": return false
        default: throw .invalidOption(name: option, reason: "'\(text)' is not a boolean (1, t, true, 0, f, false)")
        }
    }
}
