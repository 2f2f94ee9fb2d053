import Foundation
import ImagoCore

/// The `Content-Disposition` of a path's image responses, worked out once per path (a cached output answers tens
/// of thousands of requests a second; only the extension is added per response): `inline` (or `attachment` with
/// `return_attachment`) and the file name, the `filename` option's, else the source URL's last path segment without
/// its extension (`image` when it has none), with the output's extension. The quoted name is ASCII, other
/// characters replaced by `_`; a name that is not all ASCII is also given in full as RFC 8187 `filename*`.
struct ContentDisposition: Sendable {
    /// `inline; filename="stem` or `attachment; filename="stem`, the stem in ASCII.
    private let quoted: String
    /// The stem percent-encoded for `filename*`, when it is not all ASCII.
    private let encoded: String?

    /// The disposition of `path`'s responses; `attachment` when the path says so, or says nothing and
    /// `attachmentByDefault`.
    init(_ path: ProxyPath, attachmentByDefault: Bool = false) {
        var stem = path.options.filename ?? ""
        if stem.isEmpty {
            let last = path.source.lastPathComponent
            let name = last == "/" ? "" : last
            stem = name.lastIndex(of: ".").map { String(name[..<$0]) } ?? name
            if stem.isEmpty { stem = "image" }
        }
        let ascii = String(
            String.UnicodeScalarView(
                stem.unicodeScalars.map { scalar in
                    (0x20..<0x7F).contains(scalar.value) && scalar != "\"" && scalar != "\\" ? scalar : "_"
                }))
        let attachment = path.options.returnsAttachment ?? attachmentByDefault
        quoted = "\(attachment ? "attachment" : "inline"); filename=\"\(ascii)"
        if ascii != stem {
            // RFC 8187 attr-chars, ASCII only (Foundation's `.alphanumerics` would let Unicode letters through).
            let allowed = CharacterSet(
                charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$&+-.^_`|~")
            encoded = stem.addingPercentEncoding(withAllowedCharacters: allowed) ?? ascii
        } else {
            encoded = nil
        }
    }

    /// The header value for an output in `format`.
    func value(for format: ImageFormat) -> String {
        let ext = format.fileExtension
        guard let encoded else { return quoted + "." + ext + "\"" }
        return quoted + "." + ext + "\"; filename*=UTF-8''" + encoded + "." + ext
    }
}
