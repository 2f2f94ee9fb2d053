import Foundation
import Imago

/// `imago decode FILE... [--max-size WxH] [--color srgb|keep|ignore] [--json] [--rgba OUT] [--frames DIR]`: decodes
/// files and describes them.
enum DecodeCommand {
    static let command = Command(
        name: "decode",
        summary: "Decode image files and print their format, size, frames, loop count and orientation.",
        synopsis: "FILE... [--max-size WxH] [--color srgb|keep|ignore] [--json] [--rgba OUT] [--frames DIR]",
        details: """
            One line per file: human-readable on a terminal, a JSON object per line with --json or when stdout
            is not a terminal: {"file":…,"format":…,"width":…,"height":…,"frames":…,"loopCount":…,"orientation":…,
            "durations":[ms per frame],"bitDepth":…,"colorProfile":…} or {"file":…,"error":…}. Width and height
            are those of the decoded first frame, orientation applied; bitDepth is the source's bits per channel
            (null when the decoder does not say); colorProfile is the description of the file's colour profile, or
            null. --frames DIR writes every frame as DIR/NAME.frameNNN.rgba (NNN from 000). A FILE of - reads
            standard input (NAME: stdin); a file over 1 GiB is refused unread.
            Exit status: 0 when every file decoded, 1 when any failed, 2 for bad usage.
            """,
        options: [
            OptionSpec("--max-size", value: "WxH", help: "Decode downsampled to fit within WxH (aspect kept)."),
            OptionSpec(
                "--color", value: "POLICY",
                help: "srgb (default): convert to sRGB; keep: pixels as stored, profile kept; ignore: take as sRGB."),
            OptionSpec("--json", help: "Print one JSON object per file."),
            OptionSpec(
                "--rgba", value: "OUT",
                help:
                    "Write the first frame as raw RGBA8 (straight alpha, rows top to bottom); a directory when several files."
            ),
            OptionSpec(
                "--frames", value: "DIR",
                help: "Write every frame as raw RGBA8 (as --rgba) to DIR/NAME.frameNNN.rgba, NNN from 000."),
        ],
        run: { args, console in await run(args, console: console) })

    static func run(_ args: ParsedArguments, console: Console) async -> Int32 {
        let files = args.positionals
        guard !files.isEmpty else {
            console.printError("imago decode: no FILE given\nUsage: imago decode \(command.synopsis)")
            return 2
        }
        var maxSize: PixelSize?
        var colorPolicy = ColorPolicy.convertToSRGB
        do {
            if let text = args.value("--color") {
                guard let policy = ColorPolicy(rawValue: text) else {
                    throw DecodeFailure(message: "--color must be srgb, keep or ignore, not '\(text)'")
                }
                colorPolicy = policy
            }
            if let text = args.value("--max-size") {
                let (w, h) = try parsePixelSize(text, option: "--max-size")
                maxSize = PixelSize(width: w, height: h)
            }
        } catch {
            console.printError("imago decode: \(error)")
            return 2
        }
        let rgbaOut = args.value("--rgba")
        let rgbaIsDirectory = rgbaOut != nil && files.count > 1
        let framesOut = args.value("--frames")
        for (option, directory) in [("--rgba", rgbaIsDirectory ? rgbaOut : nil), ("--frames", framesOut)] {
            guard let directory else { continue }
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                console.printError(
                    "imago decode: cannot create directory '\(directory)' for \(option): \(SystemReason.of(error))")
                return 1
            }
        }
        let json = args.has("--json") || !console.isTerminal
        let registry = ImageDecoderRegistry.makeDefault()
        var failures = 0
        for file in files {
            var line = JSONLine()
            line.add("file", file)
            do {
                let data: Data
                do {
                    data = try InputFile.read(file, standardInput: console.standardInput)
                } catch {
                    throw DecodeFailure(message: "cannot read file: \(error)")
                }
                let described = try decode(data, maxSize: maxSize, colorPolicy: colorPolicy, registry: registry)
                if let rgbaOut {
                    let path =
                        rgbaIsDirectory
                        ? (rgbaOut as NSString).appendingPathComponent(outputName(of: file) + ".rgba")
                        : rgbaOut
                    let rgba = described.image.image.convertedToRGBA().unpremultiplied()
                    do {
                        try Data(rgba.bytes).write(to: URL(fileURLWithPath: path))
                    } catch {
                        throw DecodeFailure(message: "cannot write '\(path)': \(SystemReason.of(error))")
                    }
                }
                let image = described.image
                if let framesOut { try writeFrames(of: image, file: file, to: framesOut) }
                if json {
                    line.add("format", image.format.rawValue)
                    line.add("width", image.image.width)
                    line.add("height", image.image.height)
                    line.add("frames", image.frameCount)
                    line.add("loopCount", image.loopCount)
                    line.add("orientation", described.orientation.rawValue)
                    line.add("durations", image.frameDurations.map { Int(($0 / .milliseconds(1)).rounded()) })
                    line.add("bitDepth", image.bitDepth)
                    line.add("colorProfile", image.sourceColorProfileDescription)
                    line.add("colorWarning", image.colorWarning)
                    console.print(line.text)
                } else {
                    let frames =
                        image.frameCount == 1 ? "1 frame" : "\(image.frameCount) frames, loop \(image.loopCount)"
                    console.print(
                        "\(file): \(image.format) \(image.image.width)x\(image.image.height), \(frames), orientation \(described.orientation.rawValue)"
                    )
                    if let warning = image.colorWarning {
                        console.printError("imago: warning: \(file): \(warning); colours taken as sRGB")
                    }
                }
            } catch {
                failures += 1
                let message = Self.message(for: error)
                if json {
                    line.add("error", message)
                    console.print(line.text)
                } else {
                    console.printError("\(file): error: \(message)")
                }
            }
        }
        return failures == 0 ? 0 : 1
    }

    struct DecodeFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// The name files written for `file` start with: its last path component, `stdin` for `-`.
    static func outputName(of file: String) -> String {
        file == InputFile.standardInputName ? "stdin" : (file as NSString).lastPathComponent
    }

    /// The image in a file's `data`, decoded with orientation applied, and the orientation the file declared.
    static func decode(
        _ data: Data, maxSize: PixelSize?, colorPolicy: ColorPolicy = .convertToSRGB, registry: ImageDecoderRegistry
    ) throws -> (
        image: ImageContainer, orientation: ExifOrientation
    ) {
        // Decode with the orientation unapplied so that the declared value can be reported, then apply it.
        var options = DecodingOptions(targetSize: maxSize, appliesOrientation: false)
        options.colorPolicy = colorPolicy
        var image = try registry.decode(data, options: options)
        let declared = image.orientation
        if declared != .up {
            image = try image.mapFramesLazily { $0.oriented(declared) }
            image.orientation = .up
        }
        if let maxSize {
            let target = image.image.size.fitted(within: maxSize)
            if target != image.image.size { image = try image.mapFramesLazily { try $0.resampled(to: target) } }
        }
        return (image, declared)
    }

    /// Writes each frame of `image` as raw RGBA8 (straight alpha) to `directory/NAME.frameNNN.rgba`.
    static func writeFrames(of image: ImageContainer, file: String, to directory: String) throws {
        let name = outputName(of: file)
        // One frame at a time: an on-demand animation produces each as it is asked for, never all at once.
        for index in 0..<image.frameCount {
            let frame = try image.frame(at: index)
            let path = (directory as NSString).appendingPathComponent(String(format: "%@.frame%03d.rgba", name, index))
            let rgba = frame.buffer.convertedToRGBA().unpremultiplied()
            do {
                try Data(rgba.bytes).write(to: URL(fileURLWithPath: path))
            } catch {
                throw DecodeFailure(message: "cannot write '\(path)': \(SystemReason.of(error))")
            }
        }
    }

    static func message(for error: Error) -> String {
        String(describing: error)
    }
}
