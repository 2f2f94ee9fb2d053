import Foundation
import ImagoCore

extension ChildProcessDecoder {
    /// The child's side of a ``ChildProcessDecoder``: reads the request on standard input, decodes it with
    /// `decoder` in this process and writes the answer on standard output. Returns the exit status: 0 after an
    /// image, 1 after an error answer, 2 when the input was not a request.
    ///
    /// A program that a parent starts as its ``executable`` calls this and exits with what it returns (`imago
    /// heif-decode` does with ``HEIFDecoder``, `imago svg-render` with ``SVGDecoder``).
    public static func runChild(decoding decoder: any ImageDecoding) -> Int32 {
        let input = FileHandle.standardInput.readDataToEndOfFile()
        guard let (requested, data) = ChildProcessMessage.parseRequest(input) else {
            write(ChildProcessMessage.answer(CodecError.corrupt(format: .unknown, reason: "not a decoding request")))
            return 2
        }
        var options = requested
        options.animationMemoryBudget = .max  // every frame crosses in the answer
        do {
            let (head, frames) = try ChildProcessMessage.answer(decoder.decode(data, options: options))
            write(head)
            for frame in frames { frame.withUnsafeBytes { _ = FileDescriptorWriting.writeAll(1, $0) } }
            return 0
        } catch let error as CodecError {
            write(ChildProcessMessage.answer(error))
        } catch {
            let format = ChildProcessMessage.format(of: data, among: decoder.formats)
            write(ChildProcessMessage.answer(CodecError.corrupt(format: format, reason: "\(error)")))
        }
        return 1
    }

    /// Writes `bytes` to standard output.
    private static func write(_ bytes: Data) {
        bytes.withUnsafeBytes { _ = FileDescriptorWriting.writeAll(1, $0) }
    }
}
