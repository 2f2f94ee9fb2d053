import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// ``SVGRendering/childProcess(executable:arguments:timeout:)``: the parent's side (``decode(_:options:)``) and the
/// child's (``SVGDecoder/runChild()``).
///
/// The child reads one line of settings (target width and height, `fit` or `cover`, whether vectors enlarge, the
/// pixel, frame and animation limits) and the document on standard input, decodes in-process, and writes
/// `ok WIDTH HEIGHT ORIGINAL-WIDTH ORIGINAL-HEIGHT` and the RGBA bytes (straight alpha), or `error KIND MESSAGE`,
/// on standard output.
struct SVGChildRendering {
    let executable: URL
    let arguments: [String]
    let timeout: Duration

    func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw CodecError.corrupt(format: .svg, reason: "the SVG renderer could not start: \(error)")
        }
        let pid = process.processIdentifier
        let killed = Locked(false)  // set by the timer that kills the child
        let timer = DispatchWorkItem {
            killed.withLock { $0 = true }
            kill(pid, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval, execute: timer)
        // The child reads all of its input before it writes, so writing it all first cannot deadlock. A child that
        // ends first (killed, or one that never reads) leaves the pipe without a reader: the write then fails with
        // EPIPE, which `FileHandle.write` would trap on and whose SIGPIPE would end a process that does not ignore
        // it. So the bytes go through write(2), with SIGPIPE blocked in this thread: the signal stays pending on the
        // thread and goes with it when it ends, and the decode fails on the child's missing answer instead.
        let writer = Thread {
            var pipeSignal = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
            let bytes = Self.settings(options) + data
            bytes.withUnsafeBytes { _ = FileDescriptorWriting.writeAll(input.fileHandleForWriting.fileDescriptor, $0) }
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let answer = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        timer.cancel()
        if killed.value {
            throw CodecError.renderingTimedOut(format: .svg, limit: timeout)
        }
        return try Self.container(from: answer, options: options)
    }

    /// The settings line the child reads.
    static func settings(_ options: DecodingOptions) -> Data {
        let target = options.targetSize ?? PixelSize(width: 0, height: 0)
        let fields: [String] = [
            "\(target.width)", "\(target.height)", options.targetMode == .cover ? "cover" : "fit",
            options.enlargesVectors ? "1" : "0", "\(options.pixelLimit)", "\(options.frameLimit)",
            "\(options.animationByteLimit)", "\(options.animationWorkLimit)",
        ]
        return Data((fields.joined(separator: " ") + "\n").utf8)
    }

    /// The options a settings line gives; `nil` when it is not one.
    static func options(from line: Substring) -> DecodingOptions? {
        let fields = line.split(separator: " ")
        guard fields.count == 8, let width = Int(fields[0]), let height = Int(fields[1]),
            let pixels = Int(fields[4]), let frames = Int(fields[5]), let bytes = Int(fields[6]),
            let work = Int(fields[7])
        else { return nil }
        var options = DecodingOptions(
            targetSize: width > 0 && height > 0 ? PixelSize(width: width, height: height) : nil, pixelLimit: pixels,
            frameLimit: frames, animationByteLimit: bytes, animationWorkLimit: work)
        options.targetMode = fields[2] == "cover" ? .cover : .fit
        options.enlargesVectors = fields[3] == "1"
        return options
    }

    /// The container the child's `answer` describes, or its error.
    static func container(from answer: Data, options: DecodingOptions) throws -> ImageContainer {
        guard let newline = answer.firstIndex(of: 10) else {
            throw CodecError.corrupt(format: .svg, reason: "the SVG renderer stopped without an answer")
        }
        let head = String(decoding: answer[answer.startIndex..<newline], as: UTF8.self)
        let fields = head.split(separator: " ", maxSplits: 2)
        if fields.first == "error" {
            let message = fields.count > 2 ? String(fields[2]) : "unknown"
            if fields.count > 1, fields[1] == "unsupported" { throw CodecError.unsupportedFormat(.svg) }
            if fields.count > 1, fields[1] == "pixels" {
                let numbers = message.split(separator: " ").compactMap { Int($0) }
                if numbers.count == 3 {
                    throw CodecError.tooManyPixels(width: numbers[0], height: numbers[1], limit: numbers[2])
                }
            }
            throw CodecError.corrupt(format: .svg, reason: message)
        }
        let numbers = head.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard fields.first == "ok", numbers.count == 4 else {
            throw CodecError.corrupt(format: .svg, reason: "the SVG renderer answered '\(head.prefix(80))'")
        }
        let size = PixelSize(width: numbers[0], height: numbers[1])
        try options.checkDimensions(width: size.width, height: size.height, format: .svg)
        let pixels = answer[answer.index(after: newline)...]
        let image = try PixelBuffer(width: size.width, height: size.height, format: .rgba8, bytes: [UInt8](pixels))
        return ImageContainer(
            frames: [ImageFrame(buffer: image)], format: .svg, orientation: .up,
            originalSize: PixelSize(width: numbers[2], height: numbers[3]), bitDepth: 8)
    }
}

extension SVGDecoder {
    /// The child's side of ``SVGRendering/childProcess(executable:arguments:timeout:)``: reads the settings and
    /// the document from standard input, draws it in this process, writes the answer to standard output. Returns
    /// the exit status (0, or 1 after an error answer).
    public static func runChild() -> Int32 {
        let input = FileHandle.standardInput.readDataToEndOfFile()
        let output = FileHandle.standardOutput
        func answer(_ kind: String, _ message: String) -> Int32 {
            output.write(Data("error \(kind) \(message.replacingOccurrences(of: "\n", with: " "))\n".utf8))
            return 1
        }
        guard let newline = input.firstIndex(of: 10),
            let options = SVGChildRendering.options(
                from: Substring(String(decoding: input[input.startIndex..<newline], as: UTF8.self)))
        else { return answer("usage", "expected a settings line, then the document") }
        do {
            let container = try SVGDecoder().decode(input[input.index(after: newline)...], options: options)
            // The in-process decode delivers straight alpha, as the parent's container holds it.
            guard let image = container.frames.first?.buffer else { return answer("corrupt", "no image") }
            let original = container.originalSize
            output.write(Data("ok \(image.width) \(image.height) \(original.width) \(original.height)\n".utf8))
            image.withUnsafeBytes { output.write(Data($0)) }
            return 0
        } catch CodecError.unsupportedFormat {
            return answer("unsupported", "librsvg is not installed")
        } catch CodecError.tooManyPixels(let width, let height, let limit) {
            return answer("pixels", "\(width) \(height) \(limit)")
        } catch {
            return answer("corrupt", "\(error)")
        }
    }
}
