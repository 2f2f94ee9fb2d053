import Foundation
import Imago

/// Writes the images of `fetch --out DIR`: the original bytes, or the delivered image re-encoded.
///
/// File names come from each URL's last path component, reduced to letters, digits, `.`, `-` and `_` (no
/// leading dot, so never `..` or a hidden file), made unique within the run (`a.jpg`, `a-2.jpg` …) in list
/// order, with the extension of what is written. Nothing is written outside DIR. Thread-safe (immutable).
struct FetchOutputWriter: Sendable {
    /// A file that could not be written.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let directory: URL
    /// The file name stem for each URL, by index in the list.
    let stems: [String]
    /// The extension each URL's own name had (lowercased), by index.
    let extensions: [String?]
    let urls: [String]
    let format: ImageFormat?
    let reencodes: Bool
    let encoders: ImageEncoderRegistry
    /// The settings re-encoded files are written with (`--quality`).
    let encoding: EncodingOptions

    /// Creates `directory` when missing and names every URL's file; re-encoded files are written with `encoding`
    /// (default: the encoders' defaults).
    init(
        directory: URL, urls: [String], format: ImageFormat?, reencodes: Bool, encoders: ImageEncoderRegistry,
        encoding: EncodingOptions = EncodingOptions()
    )
        throws
    {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw Failure(
                description:
                    "cannot create the output directory '\(directory.path)': \(SystemReason.of(error))"
                    + " (pass --out DIR with a writable place)")
        }
        self.directory = directory.standardizedFileURL
        self.urls = urls
        self.format = format
        self.reencodes = reencodes
        self.encoders = encoders
        self.encoding = encoding
        let names = urls.map(Self.baseName)
        stems = Self.uniqued(names.map(\.stem))
        extensions = names.map(\.ext)
    }

    /// Writes `image` for the URL at `index`; returns the path written.
    func write(_ image: ImageContainer, index: Int) throws -> String {
        let data: Data
        let written: ImageFormat
        if reencodes {
            written = format ?? (encoders.encoder(for: image.format) != nil ? image.format : .png)
            do {
                data = try encoders.encode(image, as: written, options: encoding)
            } catch {
                throw Failure(description: "could not encode \(urls[index]) as \(written): \(error)")
            }
        } else {
            guard let original = image.originalData else {
                throw Failure(description: "the original bytes of \(urls[index]) were not kept; nothing written")
            }
            data = original
            written = ImageFormat(sniffing: original)
        }
        let ext = Self.fileExtension(for: written, urlExtension: reencodes ? nil : extensions[index])
        let url = directory.appendingPathComponent(stems[index] + "." + ext)
        // The stem cannot hold "/" or start with ".", so this holds; checked anyway before writing.
        guard url.deletingLastPathComponent().standardizedFileURL.path == directory.path else {
            throw Failure(description: "refusing to write \(url.path) outside '\(directory.path)'")
        }
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            throw Failure(
                description:
                    "could not write \(urls[index]) to '\(url.path)': \(SystemReason.of(error))")
        }
        return url.path
    }

    /// The URL's own extension when it fits the format written, else the format's.
    static func fileExtension(for format: ImageFormat, urlExtension: String?) -> String {
        let accepted: [ImageFormat: Set<String>] = [
            .jpeg: ["jpg", "jpeg", "jpe"], .png: ["png"], .gif: ["gif"], .webp: ["webp"],
        ]
        if let urlExtension, accepted[format]?.contains(urlExtension) == true { return urlExtension }
        if format == .unknown { return urlExtension ?? "bin" }
        return format.fileExtension
    }

    /// The sanitised stem and extension of the last path component of `text` (a URL or anything else).
    static func baseName(_ text: String) -> (stem: String, ext: String?) {
        var component: String
        if let url = URL(string: text), !url.path.isEmpty {
            component = url.lastPathComponent
        } else {
            let withoutQuery = text.split(separator: "?", maxSplits: 1).first.map(String.init) ?? text
            component = withoutQuery.split(separator: "/").last.map(String.init) ?? ""
        }
        if component == "/" { component = "" }
        var safe = String(
            component.unicodeScalars.map { scalar -> Character in
                let allowed =
                    scalar.isASCII
                    && (CharacterSet.alphanumerics.contains(scalar) || "._-".unicodeScalars.contains(scalar))
                return allowed ? Character(scalar) : "_"
            })
        while safe.hasPrefix(".") { safe.removeFirst() }
        var ext: String?
        if let dot = safe.lastIndex(of: ".") {
            let candidate = safe[safe.index(after: dot)...]
            if (1...5).contains(candidate.count), candidate.allSatisfy({ $0.isLetter || $0.isNumber }) {
                ext = candidate.lowercased()
                safe = String(safe[..<dot])
            }
        }
        safe = String(safe.prefix(100))
        while safe.hasSuffix(".") { safe.removeLast() }
        return (safe.isEmpty ? "image" : safe, ext)
    }

    /// `stems` with later repeats (case-insensitively) renamed `stem-2`, `stem-3` …
    static func uniqued(_ stems: [String]) -> [String] {
        var used: Set<String> = []
        var out: [String] = []
        for stem in stems {
            var candidate = stem
            var n = 1
            while used.contains(candidate.lowercased()) {
                n += 1
                candidate = "\(stem)-\(n)"
            }
            used.insert(candidate.lowercased())
            out.append(candidate)
        }
        return out
    }
}
