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
    /// What separates an option's name and arguments in the definitions (imgproxy's
    /// `IMGPROXY_ARGUMENTS_SEPARATOR`, which its presets are written with too). Default `:`.
    public private(set) var argumentsSeparator = ProxyPath.defaultArgumentsSeparator

    /// No presets.
    public init() {}

    /// Presets from `definitions`, each `name=option/option/…` (imgproxy's `IMGPROXY_PRESETS` entries), each
    /// option's name and arguments separated by `argumentsSeparator` (default `:`; see
    /// ``ProxyPath/isArgumentsSeparator(_:)``). Every preset is checked as it would apply, so a bad one fails
    /// here rather than in a request.
    ///
    /// - Throws: ``ProxyError`` naming the preset and what is wrong with it.
    public init(
        definitions: [String], argumentsSeparator: Character = ProxyPath.defaultArgumentsSeparator
    ) throws(ProxyError) {
        guard ProxyPath.isArgumentsSeparator(argumentsSeparator) else {
            throw .invalidOption(name: "preset", reason: "'\(argumentsSeparator)' cannot separate arguments")
        }
        self.argumentsSeparator = argumentsSeparator
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
            var fields: OptionParser.HintedFields = []
            do {
                try OptionParser.applyPresets([name[...]], to: &options, presets: self, setting: &fields)
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
            try OptionParser.applyPresets(["default"], to: &options, presets: self, setting: &fields)
        }
        return options
    }
}
