/// Named lists of processing options, imgproxy's presets: `preset:name` (or `pr:name`) in a URL applies the
/// named options in its place, and a preset named `default`, when there is one, applies before every URL's own
/// options (which may then change them). Presets may name other presets, up to 8 deep.
///
/// ```swift
/// let presets = try PresetTable(definitions: ["thumb=rs:fill:256:256/q:70", "default=f:webp"])
/// var configuration = ImageProxy.Configuration()
/// configuration.presets = presets
/// ```
public struct PresetTable: Sendable, Hashable {
    /// Each preset's option segments, by name.
    private var table: [String: [String]] = [:]

    /// No presets.
    public init() {}

    /// Presets from `definitions`, each `name=option/option/…` (imgproxy's `IMGPROXY_PRESETS` entries). Every
    /// preset is checked as it would apply, so a bad one fails here rather than in a request.
    ///
    /// - Throws: ``ProxyError`` naming the preset and what is wrong with it.
    public init(definitions: [String]) throws(ProxyError) {
        for definition in definitions {
            guard let equals = definition.firstIndex(of: "="), equals != definition.startIndex else {
                throw .invalidOption(name: "preset", reason: "'\(definition)' is not name=options")
            }
            let name = String(definition[..<equals])
            guard table[name] == nil else { throw .invalidOption(name: "preset", reason: "'\(name)' is defined twice") }
            let segments = definition[definition.index(after: equals)...].split(separator: "/").map(String.init)
            guard !segments.isEmpty else { throw .invalidOption(name: "preset", reason: "'\(name)' has no options") }
            table[name] = segments
        }
        for name in table.keys.sorted() {
            var options = ProcessingOptions()
            do {
                try OptionParser.apply("preset:\(name)", to: &options, presets: self)
            } catch {
                throw .invalidOption(name: "preset", reason: "'\(name)': \(error.description)")
            }
        }
    }

    /// The preset definitions of a presets file (imgproxy's `IMGPROXY_PRESETS_PATH`): one `name=options` a line,
    /// spaces around it trimmed; empty lines and lines starting with `#` skipped. For ``init(definitions:)``.
    public static func definitions(inFile text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty && !$0.hasPrefix("#")
        }
    }

    /// The names of the presets, sorted.
    public var names: [String] { table.keys.sorted() }

    /// The option segments of the preset `name`, or `nil` when there is none.
    func segments(named name: String) -> [String]? { table[name] }

    /// Options with the `default` preset applied (every default when there is none), adding to `fields` the
    /// hinted fields it sets.
    func defaultOptions(setting fields: inout OptionParser.HintedFields) throws(ProxyError) -> ProcessingOptions {
        var options = ProcessingOptions()
        if table["default"] != nil {
            try OptionParser.apply("preset:default", to: &options, presets: self, setting: &fields)
        }
        return options
    }
}
