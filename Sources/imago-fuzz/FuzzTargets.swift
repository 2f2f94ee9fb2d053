import Foundation
import ImagoCLI
import ImagoCore

/// One fuzz target: a name and what it does with one input (it must never crash, hang or grow without bound).
struct FuzzTarget: Sendable {
    let name: String
    let run: @Sendable (Data) -> Void
}

enum FuzzTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget(name: "decode", run: decode),
        FuzzTarget(name: "disk-entry", run: diskEntry),
        FuzzTarget(name: "http-headers", run: httpHeaders),
        FuzzTarget(name: "cli-arguments", run: cliArguments),
        FuzzTarget(name: "decode-defaults", run: decodeDefaults),
        FuzzTarget(name: "exif", run: exif),
        FuzzTarget(name: "jpeg", run: jpeg),
        FuzzTarget(name: "jpeg-dc", run: jpegDC),
        FuzzTarget(name: "png", run: png),
        FuzzTarget(name: "avif", run: avif),
        FuzzTarget(name: "heif", run: heif),
        FuzzTarget(name: "isobmff", run: isobmff),
        FuzzTarget(name: "tiff", run: tiff),
        FuzzTarget(name: "svg", run: svg),
        FuzzTarget(name: "svg-sanitize", run: svgSanitize),
        FuzzTarget(name: "jxl", run: jxl),
        FuzzTarget(name: "apng", run: apng),
        FuzzTarget(name: "bmp-ico", run: bmpICO),
        FuzzTarget(name: "proxy-url", run: proxyURL),
        FuzzTarget(name: "request-headers", run: requestHeaders),
        FuzzTarget(name: "gif-roundtrip", run: gifRoundTrip),
        FuzzTarget(name: "png-palette", run: pngPalette),
        FuzzTarget(name: "still-encoders", run: stillEncoders),
        FuzzTarget(name: "metadata", run: metadata),
        FuzzTarget(name: "peer-answers", run: peerAnswers),
    ]

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }

    /// The CLI's argument parser and value parsers: NUL-separated arguments; the same words as `NAME=VALUE`
    /// environment variables filling in each command's options (`ParsedArguments.fillingIn`); and the input as an
    /// `--env-file` (``EnvironmentFile``), expanding from those variables.
    static func cliArguments(_ data: Data) {
        let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        var environment: [String: String] = [:]
        for word in words {
            guard let equals = word.firstIndex(of: "=") else { continue }
            environment[String(word[..<equals])] = String(word[word.index(after: equals)...])
        }
        for command in CLI.commands {
            let options = command.options + [Command.helpOption]
            let parsed = (try? parseArguments(words, options: options)) ?? ParsedArguments()
            _ = try? parsed.fillingIn(from: environment, prefix: "IMAGO_", options: options)
        }
        _ = try? EnvironmentFile(parsing: String(decoding: data, as: UTF8.self), environment: environment)
        for word in words.prefix(8) {
            _ = try? parsePixelSize(word, option: "--resize")
            _ = try? parseByteCount(word, option: "--max-size")
            _ = try? parseInteger(word, option: "-j", range: 1...64)
        }
    }
}
