import Foundation
import ImagoCore

/// An imgproxy URL path taken apart: `/{signature}/{option}/…/{source}`, where the source is
/// `plain/{percent-encoded URL}[@{ext}]` or the base64url-encoded URL (which may be split by `/`) with an optional
/// `.{ext}`. Each option is `name:arg:arg…`; a later option replaces an earlier one of the same name.
///
/// ```swift
/// let path = try ProxyPath(parsing: "/_/rs:fill:256:256/g:no/plain/https://img.example/a.jpg@webp")
/// path.options.resizingType   // .fill
/// path.source.host()          // "img.example"
/// ```
public struct ProxyPath: Sendable, Hashable {
    /// The signature segment as given (`insecure` or `_` for unsigned URLs).
    public var signature: String
    /// The part of the path the signature signs: everything after the signature, from its leading `/`.
    public var signedPart: String
    /// The processing options, the extension's format folded in as ``ProcessingOptions/format``.
    public var options: ProcessingOptions
    /// The source image's URL.
    public var source: URL
    /// Which of the fields client hints give defaults for the URL or its presets set (``ClientHints``).
    var hintedFieldsSet: OptionParser.HintedFields = []

    /// Whether the signature segment marks an unsigned URL (`insecure` or `_`).
    public var isUnsigned: Bool { signature == "insecure" || signature == "_" }

    /// Parses `path` (raw, still percent-encoded, without the query); `preset:` options name entries of `presets`,
    /// whose `default` preset applies first (default: no presets); `replacements` rewrite the start of source URLs
    /// (imgproxy's `IMGPROXY_URL_REPLACEMENTS`; default none); then `baseURL` is put before every source URL that
    /// does not already start with it (imgproxy's `IMGPROXY_BASE_URL`; default none), so URLs may carry paths
    /// relative to it. With `onlyPresets`
    /// (imgproxy's `IMGPROXY_ONLY_PRESETS`; default `false`), the one segment after the signature names presets
    /// (`/{signature}/{preset}:{preset}…/{source}`) and no other option is read from the URL. With `allowsLocal`
    /// (default `false`), `local:///path` sources are accepted too (imgproxy's local files), and those of
    /// `objectStoreSchemes` (default none; `s3`, `abs`, `gs`: ``ObjectStoreMapping``), e.g. `s3://bucket/key`. With
    /// `allowedOptions` (imgproxy's `IMGPROXY_ALLOWED_PROCESSING_OPTIONS`; default `nil`: all), an option whose
    /// name, as written, is not in the set is refused; the options inside presets are not checked (allow
    /// `preset` or `pr` to let URLs name presets). With `base64IncludesFilename` (imgproxy's
    /// `IMGPROXY_BASE64_URL_INCLUDES_FILENAME`; default `false`), a base64 source split by `/` ends with a file name
    /// for the browser's sake, which is dropped: `/{signature}/{options}/{base64}.{ext}/{name}`. With
    /// `argumentsSeparator` (imgproxy's `IMGPROXY_ARGUMENTS_SEPARATOR`; default `:`), options are written
    /// `name,arg,arg` for `,`, and so is the presets segment of `onlyPresets`; presets' own options are read with
    /// their table's ``PresetTable/argumentsSeparator``. In a source that is not http or https (`local:`, the object
    /// stores'; ``storeSourceURL(_:querySeparator:)``), `#` and `?` are the path's own characters, as imgproxy
    /// reads them, but for the first `querySeparator` after the bucket (imgproxy's
    /// `IMGPROXY_SOURCE_URL_QUERY_SEPARATOR`; default `?`; empty: none), which starts the query (an S3 version,
    /// a GCS generation).
    ///
    /// - Throws: ``ProxyError`` with status 400 naming what is wrong, or 403 (``ProxyError/forbiddenOption(name:)``).
    public init(
        parsing path: String, presets: PresetTable = PresetTable(), replacements: [URLReplacement] = [],
        baseURL: String = "", onlyPresets: Bool = false, allowsLocal: Bool = false,
        objectStoreSchemes: Set<String> = [],
        allowedOptions: Set<String>? = nil, base64IncludesFilename: Bool = false,
        argumentsSeparator: Character = defaultArgumentsSeparator, querySeparator: String = "?"
    ) throws(ProxyError) {
        guard Self.isArgumentsSeparator(argumentsSeparator) else {
            throw .malformedURL("'\(argumentsSeparator)' cannot separate arguments")
        }
        guard path.hasPrefix("/") else { throw .malformedURL("the path must start with /") }
        let afterSlash = path.dropFirst()
        guard let slash = afterSlash.firstIndex(of: "/"), slash != afterSlash.startIndex else {
            throw .malformedURL("expected /{signature}/{options…}/{source}")
        }
        signature = String(afterSlash[..<slash])
        signedPart = String(afterSlash[slash...])
        let segments = signedPart.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var fields: OptionParser.HintedFields = []
        var options = try presets.defaultOptions(setting: &fields)
        var index = 0
        if onlyPresets {
            guard let names = segments.first, segments.count > 1 else {
                throw .malformedURL("expected /{signature}/{presets}/{source}")
            }
            try OptionParser.applyPresets(
                names.split(separator: argumentsSeparator, omittingEmptySubsequences: false), to: &options,
                presets: presets, setting: &fields)
            index = 1
        }
        var parsedSource: (url: String, format: ImageFormat?)?
        while index < segments.count {
            let segment = segments[index]
            if segment == "plain" {
                parsedSource = try Self.plainSource(segments[(index + 1)...].joined(separator: "/"))
                break
            }
            if segment == "enc" { throw .malformedURL("encrypted source URLs (enc/) are not supported") }
            if let colon = segment.firstIndex(of: argumentsSeparator), !onlyPresets {
                if let allowedOptions, !allowedOptions.contains(String(segment[..<colon])) {
                    throw .forbiddenOption(name: String(segment[..<colon]))
                }
                try OptionParser.apply(
                    segment, to: &options, presets: presets, separator: argumentsSeparator, setting: &fields)
                index += 1
                continue
            }
            let encoded = segments[index...]
            parsedSource = try Self.encodedSource(
                (base64IncludesFilename && encoded.count > 1 ? encoded.dropLast() : encoded).joined())
            break
        }
        guard let parsedSource, !parsedSource.url.isEmpty else { throw .malformedURL("no source URL") }
        if let format = parsedSource.format, options.format == nil { options.format = format }
        let replaced = replacements.applied(to: parsedSource.url)
        let absolute = baseURL.isEmpty || replaced.hasPrefix(baseURL) ? replaced : baseURL + replaced
        guard var url = Self.storeSourceURL(absolute, querySeparator: querySeparator) ?? URL(string: absolute),
            let scheme = url.scheme?.lowercased()
        else {
            throw .invalidSource("expected an absolute http or https URL")
        }
        if scheme == "local" {
            guard allowsLocal else { throw .invalidSource("local: sources are not served here (no --local-root)") }
            guard (url.host() ?? "").isEmpty, url.path().hasPrefix("/"), url.path().count > 1 else {
                throw .invalidSource("expected local:///path")
            }
        } else if let flag = Self.objectStoreFlags[scheme] ?? (objectStoreSchemes.contains(scheme) ? scheme : nil) {
            guard objectStoreSchemes.contains(scheme) else {
                throw .invalidSource("\(scheme): sources are not served here (no --\(flag))")
            }
            let form = Self.objectStorePathForms[scheme] ?? "bucket/key"
            guard let bucket = url.host(percentEncoded: false), !bucket.isEmpty, url.path().count > 1 else {
                throw .invalidSource("expected \(scheme)://\(form)")
            }
            // A bucket or container is a name in the store's host or path; Swift's containers may hold any character
            if scheme != "swift", let bad = HostName.firstASCIIOutsideNames(in: bucket) {
                let noun = form.prefix { $0 != "/" }
                throw .invalidSource("the \(noun) name \(url.host() ?? bucket) holds \(bad), which no \(noun) name has")
            }
        } else {
            guard scheme == "http" || scheme == "https", let host = url.host(), !host.isEmpty else {
                throw .invalidSource("expected an absolute http or https URL")
            }
            do { url = try HostName.resolvable(url) } catch { throw .invalidSource(error.reason) }
        }
        source = url
        self.options = options
        hintedFieldsSet = fields
    }

    /// `text` as a URL when it is a source of another scheme than http and https (`s3://bucket/key`,
    /// `local:///path`): every `#` and `?` after `scheme://` is the path's own character, as imgproxy reads them
    /// (escaped in the URL, so ``URL/path(percentEncoded:)`` gives it back), except the first `querySeparator`
    /// after the host (none when empty), where the query starts. A `%XX` stays an escape, as in any URL: a key's
    /// own `%` may be written `%25`. `nil` for http and https sources, text without a scheme, or what is not a URL
    /// even so.
    ///
    /// ```swift
    /// ProxyPath.storeSourceURL("s3://b/cat#1.jpg?v2", querySeparator: "?")  // path "/cat#1.jpg", query "v2"
    /// ProxyPath.storeSourceURL("s3://b/a?b.jpg", querySeparator: "")       // path "/a?b.jpg", no query
    /// ```
    public static func storeSourceURL(_ text: String, querySeparator: String) -> URL? {
        guard let schemeEnd = text.range(of: "://") else { return nil }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard !scheme.isEmpty, scheme != "http", scheme != "https" else { return nil }
        let rest = text[schemeEnd.upperBound...]
        let hostEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        func escaped(_ part: Substring) -> String {
            part.replacingOccurrences(of: "#", with: "%23").replacingOccurrences(of: "?", with: "%3F")
        }
        var path = rest[hostEnd...]
        var query: Substring?
        if !querySeparator.isEmpty, let cut = path.range(of: querySeparator) {
            query = path[cut.upperBound...]
            path = path[..<cut.lowerBound]
        }
        var url = text[..<schemeEnd.upperBound] + escaped(rest[..<hostEnd]) + escaped(path)
        if let query { url += "?" + escaped(query) }
        return URL(string: url)
    }

    /// imgproxy's default separator of an option's name and its arguments (`IMGPROXY_ARGUMENTS_SEPARATOR`): `:`.
    public static let defaultArgumentsSeparator: Character = ":"

    /// The object stores' schemes `imago serve` knows, each with the flag that serves it, so that a URL of one on
    /// a server without it says which flag is missing.
    package static let objectStoreFlags = ["s3": "s3", "abs": "abs", "gs": "gcs", "swift": "swift"]

    /// How each object store's sources name an object, for the error of one that does not.
    static let objectStorePathForms = [
        "s3": "bucket/key", "abs": "container/blob", "gs": "bucket/object", "swift": "container/object",
    ]

    /// Whether `character` may separate options' names and arguments (``init(parsing:presets:replacements:baseURL:onlyPresets:allowsLocal:objectStoreSchemes:allowedOptions:base64IncludesFilename:argumentsSeparator:)``):
    /// ASCII punctuation that neither structures the path (`/ ? # % @ .`) nor occurs in base64url or option names
    /// (`- _ =`), such as `:` (the default), `,`, `;`, `!`, `~` or `|`.
    public static func isArgumentsSeparator(_ character: Character) -> Bool {
        guard let ascii = character.asciiValue, character.isPunctuation || character.isSymbol else { return false }
        return !"/?#%@.-_=".utf8.contains(ascii)
    }

    /// Whether `name` is an option name or alias URLs may use (`resize`, `rs`, `w` …), for checking a
    /// configuration's ``ImageProxy/Configuration/allowedProcessingOptions``.
    public static func isOptionName(_ name: String) -> Bool { OptionParser.Name(Substring(name)) != nil }

    /// `plain/` sources: percent-encoded, `@ext` after the one `@` (an empty extension is none, as in imgproxy). An
    /// `@` followed by more of a URL (a `/`, `:` or `.` after it: userinfo, a path, `a@2x.png`), or a second `@`, is
    /// one the source URL meant, left unescaped: the error says to write it as `%40`.
    private static func plainSource(_ text: String) throws(ProxyError) -> (url: String, format: ImageFormat?) {
        var body = Substring(text)
        var format: ImageFormat?
        if let at = body.lastIndex(of: "@") {
            let ext = body[body.index(after: at)...]
            if ext.contains(where: { $0 == "/" || $0 == ":" || $0 == "." }) || body[..<at].contains("@") {
                throw .invalidSource(
                    "an '@' in a plain source starts its output extension (…@webp); write an '@' of the URL as %40")
            }
            if !ext.isEmpty { format = try OptionParser.outputFormat(named: String(ext), option: "extension") }
            body = body[..<at]
        }
        guard let decoded = String(body).removingPercentEncoding else {
            throw .invalidSource("the plain source is not valid percent-encoding")
        }
        return (decoded, format)
    }

    /// Base64url sources: `.ext` after the one `.` (an empty extension is none; base64url has no `.`, so a second
    /// one is an error, as in imgproxy).
    private static func encodedSource(_ text: String) throws(ProxyError) -> (url: String, format: ImageFormat?) {
        var body = Substring(text)
        var format: ImageFormat?
        if let dot = body.lastIndex(of: ".") {
            let ext = body[body.index(after: dot)...]
            if body[..<dot].contains(".") {
                throw .invalidSource("a base64url source takes one output extension (….webp), and this one has more")
            }
            if !ext.isEmpty { format = try OptionParser.outputFormat(named: String(ext), option: "extension") }
            body = body[..<dot]
        }
        guard let bytes = Base64URL.decode(body), let url = String(validating: bytes, as: UTF8.self) else {
            throw .invalidSource("the source is neither plain/… nor valid base64url")
        }
        return (url, format)
    }
}
